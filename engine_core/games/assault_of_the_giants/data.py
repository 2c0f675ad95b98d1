"""Assault of the Giants: every component as a table with stable ids.

Indices are part of the wire format: races by index in ``RACES``, regions by
index in ``REGIONS`` (``R01`` is 0), units by index in ``UNITS``.
"""

from __future__ import annotations

import msgspec

# ------------------------------------------------------------------ races
# Descending Ordning Number: storm (6) .. hill (1).
RACES: tuple[str, ...] = ("storm", "cloud", "fire", "frost", "stone", "hill")
RACE_INDEX = {r: i for i, r in enumerate(RACES)}
ORDNING = {"storm": 6, "cloud": 5, "fire": 4, "frost": 3, "stone": 2, "hill": 1}
LEADER_NAME = {
    "storm": "Princess Serissa", "cloud": "Countess Sansuri", "fire": "Duke Zalto",
    "frost": "Jarl Storvald", "stone": "Thane Kayalithica", "hill": "Chief Guh",
}  # fmt: skip
STACK_LIMIT = {"storm": 3, "cloud": 4, "fire": 4, "frost": 5, "stone": 5, "hill": 6}
NPC_RACES = {
    3: ("stone", "cloud", "storm"),
    4: ("fire", "frost"),
    5: ("hill",),
    6: (),
}
GIANTSLAYER = "giantslayer"

# ---------------------------------------------------------------- regions
REGIONS: tuple[str, ...] = (
    "Sea of Moving Ice", "Spine of the World", "Ice Spires", "Luskan", "Mirabar",
    "Lurkwood", "Silverymoon", "Trackless Sea", "Neverwinter", "Neverwinter Wood",
    "Evermoors", "Triboar", "Yartar", "Greypeak Mountains", "High Forest",
    "Mere of Dead Men", "Sword Mountains", "Waterdeep", "Sumber Hills", "Delimbiyr Vale",
    "High Moor", "Daggerford",
)  # fmt: skip
REGION_INDEX = {n: i for i, n in enumerate(REGIONS)}
START_REGION = {
    "frost": "Sea of Moving Ice", "fire": "Ice Spires", "storm": "Trackless Sea",
    "cloud": "Evermoors", "stone": "Greypeak Mountains", "hill": "Sumber Hills",
}  # fmt: skip
START_OF = tuple(REGION_INDEX[START_REGION[r]] for r in RACES)  # by race index
START_RACE = tuple(
    next((i for i, r in enumerate(RACES) if START_OF[i] == g), -1) for g in range(22)
)
SMALL_FOLK = tuple(
    REGION_INDEX[n]
    for n in ("Luskan", "Mirabar", "Silverymoon", "Neverwinter", "Triboar", "Yartar",
              "Waterdeep", "Daggerford")
)  # fmt: skip
IS_SMALL_FOLK = tuple(g in SMALL_FOLK for g in range(22))
OUTPOST = {
    "hill": "Sword Mountains", "stone": "High Forest", "frost": "Spine of the World",
    "fire": "Lurkwood", "cloud": "Neverwinter Wood", "storm": "Mere of Dead Men",
}  # fmt: skip

_EDGES = """
Sea of Moving Ice|Luskan;Sea of Moving Ice|Spine of the World;Sea of Moving Ice|Trackless Sea
Spine of the World|Mirabar;Spine of the World|Ice Spires;Spine of the World|Lurkwood
Ice Spires|Lurkwood;Ice Spires|Silverymoon;Luskan|Trackless Sea
Luskan|Mirabar;Luskan|Neverwinter;Mirabar|Lurkwood
Mirabar|Neverwinter Wood;Mirabar|Neverwinter;Lurkwood|Evermoors
Lurkwood|Neverwinter Wood;Silverymoon|Evermoors;Silverymoon|Greypeak Mountains
Trackless Sea|Neverwinter;Trackless Sea|Mere of Dead Men;Trackless Sea|Waterdeep
Neverwinter|Neverwinter Wood;Neverwinter|Mere of Dead Men;Neverwinter Wood|Evermoors
Neverwinter Wood|Triboar;Neverwinter Wood|Mere of Dead Men;Evermoors|Triboar
Evermoors|Yartar;Evermoors|Greypeak Mountains;Triboar|Yartar
Triboar|Mere of Dead Men;Triboar|Sword Mountains;Yartar|High Forest
Yartar|Sumber Hills;Greypeak Mountains|High Forest;High Forest|Delimbiyr Vale
High Forest|Sumber Hills;Mere of Dead Men|Sword Mountains;Mere of Dead Men|Waterdeep
Sword Mountains|Waterdeep;Sword Mountains|Sumber Hills;Waterdeep|Daggerford
Sumber Hills|Delimbiyr Vale;Sumber Hills|Daggerford;Delimbiyr Vale|High Moor
Delimbiyr Vale|Daggerford;High Moor|Daggerford
"""


def _edges() -> tuple[tuple[int, int], ...]:
    out = []
    for line in _EDGES.strip().splitlines():
        for pair in line.split(";"):
            a, b = pair.split("|")
            out.append((REGION_INDEX[a], REGION_INDEX[b]))
    return tuple(out)


EDGES = _edges()
ADJ: tuple[tuple[int, ...], ...] = tuple(
    tuple(sorted({b for a, b in EDGES if a == g} | {a for a, b in EDGES if b == g}))
    for g in range(22)
)
ADJ_SET = tuple(frozenset(a) for a in ADJ)


# ------------------------------------------------------------------ units
class UnitType(msgspec.Struct, frozen=True):
    race: str
    kind: str  # regular, elite, champion, leader, hekaton, vonindod, giantslayer
    ov: int
    fort: tuple[int, int]  # healthy, wounded
    dice: tuple[int, int]  # healthy, wounded


# race -> (kind, count, ov, fort, dice)
_UNIT_ROWS = {
    "hill": (("leader", 1, 6, (5, 3), (2, 1)), ("champion", 2, 6, (6, 3), (3, 2)),
             ("elite", 3, 4, (4, 2), (2, 1)), ("regular", 8, 2, (3, 2), (1, 1))),
    "stone": (("leader", 1, 7, (6, 3), (2, 1)), ("champion", 2, 7, (6, 3), (3, 2)),
              ("elite", 3, 4, (5, 3), (2, 1)), ("regular", 6, 2, (3, 2), (1, 1))),
    "frost": (("leader", 1, 7, (6, 3), (2, 1)), ("champion", 2, 7, (7, 4), (3, 2)),
              ("elite", 3, 5, (5, 3), (2, 1)), ("regular", 6, 3, (3, 2), (1, 1))),
    "fire": (("leader", 1, 8, (6, 3), (2, 1)), ("champion", 2, 8, (7, 4), (3, 2)),
             ("elite", 3, 5, (5, 3), (2, 1)), ("regular", 5, 3, (4, 2), (1, 1)),
             ("vonindod", 1, 12, (9, 5), (4, 2))),
    "cloud": (("leader", 1, 8, (6, 3), (2, 1)), ("champion", 2, 8, (7, 4), (3, 2)),
              ("elite", 3, 6, (5, 3), (2, 1)), ("regular", 5, 3, (3, 2), (1, 1))),
    "storm": (("leader", 1, 9, (7, 4), (2, 1)), ("champion", 1, 9, (8, 4), (3, 2)),
              ("hekaton", 1, 12, (9, 5), (4, 2)), ("elite", 3, 6, (6, 3), (2, 1)),
              ("regular", 4, 4, (4, 2), (1, 1))),
}  # fmt: skip


def _units() -> tuple[tuple[str, ...], tuple[UnitType, ...]]:
    ids: list[str] = []
    types: list[UnitType] = []
    for race in RACES:
        for kind, count, ov, fort, dice in _UNIT_ROWS[race]:
            for k in range(count):
                ids.append(f"{race}_{kind}_{k + 1}" if count > 1 else f"{race}_{kind}")
                types.append(UnitType(race, kind, ov, fort, dice))
    for k in range(3):
        ids.append(f"giantslayer_{k + 1}")
        types.append(UnitType(GIANTSLAYER, GIANTSLAYER, 0, (4, 2), (2, 1)))
    return tuple(ids), tuple(types)


UNIT_IDS, UNITS = _units()
N_UNITS = len(UNITS)
UNIT_RACE = tuple(RACE_INDEX.get(u.race, -1) for u in UNITS)  # -1 = giantslayer
GIANTSLAYERS = tuple(i for i, u in enumerate(UNITS) if u.race == GIANTSLAYER)
RACE_UNITS = tuple(tuple(i for i, u in enumerate(UNITS) if u.race == r) for r in RACES)
LEADER_OF = tuple(next(i for i in RACE_UNITS[r] if UNITS[i].kind == "leader") for r in range(6))
HEKATON = next(i for i, u in enumerate(UNITS) if u.kind == "hekaton")
VONINDOD = next(i for i, u in enumerate(UNITS) if u.kind == "vonindod")
STORM_CHAMPION = next(i for i, u in enumerate(UNITS) if u.race == "storm" and u.kind == "champion")

# unit locations besides a region index
SUPPLY = -1  # recruitable (and off-board giantslayers)
OUT = -2  # Hekaton / Vonindod before their event
BOX = -3  # defeated NPC giants


def initial_group(race: str) -> tuple[int, ...]:
    """Leader, one champion, two regulars (storm: leader, champion, one elite)."""
    units = RACE_UNITS[RACE_INDEX[race]]
    by_kind: dict[str, list[int]] = {}
    for i in units:
        by_kind.setdefault(UNITS[i].kind, []).append(i)
    if race == "storm":
        return (by_kind["leader"][0], by_kind["champion"][0], by_kind["elite"][0])
    return (by_kind["leader"][0], by_kind["champion"][0], *by_kind["regular"][:2])


def npc_outpost_elite(race: str) -> int:
    units = RACE_UNITS[RACE_INDEX[race]]
    elites = [i for i in units if UNITS[i].kind == "elite"]
    return elites[-1]


# ---------------------------------------------------------------- dice
# face -> (hits, blocks, arcane); faces numbered 1..6 (index 0..5)
def _f(s: str) -> tuple[int, int, int]:
    return (s.count("H"), s.count("B"), s.count("A"))


DIE_FACES: dict[str, tuple[tuple[int, int, int], ...]] = {
    "basic": tuple(map(_f, ("", "H", "H", "HH", "B", "A"))),
    "hill": tuple(map(_f, ("", "H", "HH", "HH", "HHHH", "A"))),
    "stone": tuple(map(_f, ("B", "BB", "HB", "HH", "A", "AA"))),
    "frost": tuple(map(_f, ("", "H", "HH", "HHH", "HB", "A"))),
    "fire": tuple(map(_f, ("", "H", "HH", "HHH", "HA", "AA"))),
    "cloud": tuple(map(_f, ("B", "A", "AA", "HA", "HH", "HB"))),
    "storm": tuple(map(_f, ("HH", "HHH", "HB", "BB", "AA", "HHHH"))),
}
POOL_CAP = 7
SLAYER_POOL_CAP = 6

# --------------------------------------------------------------- commands
COMMANDS: tuple[str, ...] = (
    "move", "attack", "recruit", "trade", "leader", "magic", "rest", "plunder", "heal",
)  # fmt: skip
# printed values: move, attack, recruit, trade, plunder, magic, heal
PRINTED = {
    "hill": {"move": 6, "attack": 2, "recruit": 4, "trade": 2, "plunder": 2, "magic": 1, "heal": 2},
    "stone": {"move": 5, "attack": 2, "recruit": 4, "trade": 2, "plunder": 2, "magic": 2, "heal": 2},
    "frost": {"move": 5, "attack": 2, "recruit": 5, "trade": 2, "plunder": 3, "magic": 1, "heal": 2},
    "fire": {"move": 4, "attack": 2, "recruit": 5, "trade": 3, "plunder": 2, "magic": 1, "heal": 3},
    "cloud": {"move": 4, "attack": 2, "recruit": 5, "trade": 3, "plunder": 2, "magic": 2, "heal": 2},
    "storm": {"move": 4, "attack": 2, "recruit": 6, "trade": 2, "plunder": 2, "magic": 2, "heal": 3},
}  # fmt: skip

# --------------------------------------------------------------- resources
RUNES = ("haug", "stein", "ise", "ild", "skye", "stor")
RUNE_OF_RACE = {"hill": "haug", "stone": "stein", "frost": "ise", "fire": "ild",
                "cloud": "skye", "storm": "stor"}  # fmt: skip
RESOURCE_KINDS = ("food", *(f"rune_{r}" for r in RUNES), "armament")


def _resources() -> tuple[tuple[str, ...], tuple[str, ...]]:
    kinds = ["food"] * 30
    for r in RUNES:
        kinds += [f"rune_{r}"] * 3
    kinds += ["armament"] * 6
    ids = tuple(f"res{i + 1:02d}" for i in range(len(kinds)))
    return ids, tuple(kinds)


RESOURCE_IDS, _RES_KINDS = _resources()
RESOURCE_KIND = dict(zip(RESOURCE_IDS, _RES_KINDS, strict=True))
HAND_LIMIT = 4

SPELL_KINDS = ("lightning_bolt", "stoneskin", "arcane_surge", "fortune", "mend")
_SPELL_COPIES = {"lightning_bolt": 5, "stoneskin": 5, "arcane_surge": 4, "fortune": 4, "mend": 4}


def _spells() -> tuple[tuple[str, ...], tuple[str, ...]]:
    kinds: list[str] = []
    for k in SPELL_KINDS:
        kinds += [k] * _SPELL_COPIES[k]
    return tuple(f"sp{i + 1:02d}" for i in range(len(kinds))), tuple(kinds)


SPELL_IDS, _SP_KINDS = _spells()
SPELL_KIND = dict(zip(SPELL_IDS, _SP_KINDS, strict=True))

# ----------------------------------------------------------------- events
SPECIAL_EVENTS: dict[str, tuple[str, ...]] = {
    "hill": ("H1",), "stone": ("S1",), "frost": ("F1", "F2"), "fire": ("R1", "R2"),
    "cloud": ("C1",), "storm": ("T1", "T2", "T3"),
}  # fmt: skip
EVENT_OP = {
    "H1": 8, "S1": 8, "F1": 6, "F2": 8, "R1": 5, "R2": 6, "C1": 8, "T1": 4, "T2": 5, "T3": 10,
    "U01": 5, "U02": 4, "U03": 4, "U04": 3, "U05": 3, "U06": 3, "U07": 3, "U08": 3,
    "U09": 6, "U10": 5, "U11": 4, "U12": 4,
}  # fmt: skip
EVENT_NAME = {
    "H1": "Feast of Guh", "S1": "Dream of Deadstone", "F1": "Raid the Sword Coast",
    "F2": "Ring of Winter", "R1": "Gather the Vonindod", "R2": "Forge Vonindod",
    "C1": "Sansuri's Hunt", "T1": "Search for the King", "T2": "Hekaton Returns",
    "T3": "Restore the Old Ordning", "U01": "Sack Waterdeep", "U02": "Sack Neverwinter",
    "U03": "Sack Silverymoon", "U04": "Sack Mirabar", "U05": "Sack Luskan",
    "U06": "Sack Triboar", "U07": "Sack Yartar", "U08": "Sack Daggerford",
    "U09": "Lords of the Frontier", "U10": "Giant Host", "U11": "Hoard of Spells",
    "U12": "Great Feast",
}  # fmt: skip
UNIVERSAL_EVENTS = tuple(f"U{i:02d}" for i in range(1, 13))
SACK = {
    "U01": ("Waterdeep", 3), "U02": ("Neverwinter", 2), "U03": ("Silverymoon", 2),
    "U04": ("Mirabar", 2), "U05": ("Luskan", 2), "U06": ("Triboar", 2),
    "U07": ("Yartar", 2), "U08": ("Daggerford", 2),
}  # fmt: skip
DRAFT_SIZE = 4
POOL_PER_PLAYER = 12
ROUND_LIMIT = 30
