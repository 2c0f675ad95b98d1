"""Arcane Academy's components as tables with stable ids (rules spec §2).

Spaces are numbered ``index = y * 4 + x`` internally; moves, events and views
speak in ``(x, y)``. Connectors are 4-bit masks (N=1, E=2, S=4, W=8); a quarter
turn clockwise maps N->E->S->W->N, i.e. a left rotation of the mask.
"""

from __future__ import annotations

from typing import Final

# ------------------------------------------------------------------ the slate
COLS: Final = 4
ROWS: Final = 3
SPACES: Final = COLS * ROWS
XY: Final[tuple[tuple[int, int], ...]] = tuple((i % COLS, i // COLS) for i in range(SPACES))

N, E, S, W = 1, 2, 4, 8
EDGES: Final = (N, E, S, W)
EDGE_NAMES: Final = {N: "N", E: "E", S: "S", W: "W"}
OPPOSITE: Final = {N: S, S: N, E: W, W: E}
_STEP: Final = {N: (0, -1), E: (1, 0), S: (0, 1), W: (-1, 0)}


def index(x: int, y: int) -> int | None:
    """The space index of ``(x, y)``, or None off the slate (or for non-ints)."""
    if type(x) is not int or type(y) is not int or not (0 <= x < COLS and 0 <= y < ROWS):
        return None
    return y * COLS + x


def _neighbours(i: int) -> tuple[tuple[int, int], ...]:
    x, y = XY[i]
    out = []
    for edge in EDGES:
        dx, dy = _STEP[edge]
        j = index(x + dx, y + dy)
        if j is not None:
            out.append((edge, j))
    return tuple(out)


NEIGHBOURS: Final = tuple(_neighbours(i) for i in range(SPACES))
"""Per space: ``(edge, neighbour index)`` for each on-grid neighbour."""


def mask(edges: str) -> int:
    """``"N,E"`` -> N|E."""
    names = {"N": N, "E": E, "S": S, "W": W}
    out = 0
    for name in edges.split(","):
        out |= names[name.strip()]
    return out


def rotate(m: int, r: int) -> int:
    """Connectors ``m`` turned ``r`` quarter turns clockwise."""
    r %= 4
    return ((m << r) | (m >> (4 - r))) & 15


def mask_text(m: int) -> str:
    return ",".join(EDGE_NAMES[e] for e in EDGES if m & e)


# -------------------------------------------------------------------- actions
SHARD: Final = "shard"
WILL: Final = "will"
ADD_TILE: Final = "add_tile"
USE_ITEM: Final = "use_item"
COMPLETE: Final = "complete"

Option = tuple[str, int]  # (action, amount); amount 0 for actions without one
Part = tuple[Option, ...]  # one option: plain; two: slash; five: Chaos Magic

CHAOS: Final[Part] = ((SHARD, 1), (WILL, 1), (ADD_TILE, 0), (USE_ITEM, 0), (COMPLETE, 0))


def _parse_actions(text: str) -> tuple[Part, ...]:
    """``"Shard 1 + Will 1"``, ``"Will 1 / Shard 1"``, ``"Chaos"`` -> parts."""
    names = {
        "Shard": SHARD,
        "Will": WILL,
        "Add Tile": ADD_TILE,
        "Use Item": USE_ITEM,
        "Complete Assignment": COMPLETE,
    }
    parts: list[Part] = []
    for chunk in text.split("+"):
        chunk = chunk.strip()
        if chunk == "Chaos":
            parts.append(CHAOS)
            continue
        options: list[Option] = []
        for opt in chunk.split("/"):
            opt = opt.strip()
            word, _, amount = opt.rpartition(" ")
            if word in ("Shard", "Will") and amount.isdigit():
                options.append((names[word], int(amount)))
            else:
                options.append((names[opt], 0))
        parts.append(tuple(options))
    return tuple(parts)


# §2.3 corner actions: (id, space, actions, connectors). Corners never rotate.
_CORNERS: Final = (
    ("K1", (0, 0), "Add Tile", "E,S"),
    ("K2", (3, 0), "Will 1 / Shard 1", "S,W"),
    ("K3", (0, 2), "Complete Assignment / Use Item", "N,E"),
    ("K4", (3, 2), "Complete Assignment", "N,W"),
)

# §2.4 action tiles: (id, actions, connectors at rotation 0).
_TILES: Final = (
    ("T01", "Shard 1", "N,E,S,W"),
    ("T02", "Shard 1", "N,E,S,W"),
    ("T03", "Shard 1", "N,E,S"),
    ("T04", "Shard 1", "N,E,S"),
    ("T05", "Will 1", "N,E,S,W"),
    ("T06", "Will 1", "N,E,S,W"),
    ("T07", "Will 1", "N,E,S"),
    ("T08", "Will 1", "N,E,S"),
    ("T09", "Shard 2", "N,E"),
    ("T10", "Shard 2", "N,S"),
    ("T11", "Shard 2", "N,E,S"),
    ("T12", "Will 2", "N,E"),
    ("T13", "Will 2", "N,S"),
    ("T14", "Will 2", "N,E,S"),
    ("T15", "Shard 1 + Will 1", "N,E"),
    ("T16", "Shard 1 + Will 1", "N,S"),
    ("T17", "Shard 1 + Will 1", "N,E,S"),
    ("T18", "Shard 1 + Will 1", "N,E"),
    ("T19", "Will 1 / Shard 1", "N,E,S,W"),
    ("T20", "Will 1 / Shard 1", "N,E,S"),
    ("T21", "Will 1 / Shard 1", "N,E,S,W"),
    ("T22", "Will 2 + Shard 2", "N"),
    ("T23", "Shard 3", "N"),
    ("T24", "Will 3", "N"),
    ("T25", "Add Tile", "N,E,S,W"),
    ("T26", "Add Tile", "N,E,S"),
    ("T27", "Add Tile", "N,E,S"),
    ("T28", "Add Tile", "N,S"),
    ("T29", "Add Tile + Shard 1", "N,E"),
    ("T30", "Add Tile + Shard 1", "N,S"),
    ("T31", "Add Tile + Will 1", "N,E"),
    ("T32", "Add Tile + Will 1", "N,S"),
    ("T33", "Complete Assignment", "N,E,S,W"),
    ("T34", "Complete Assignment", "N,E,S"),
    ("T35", "Complete Assignment", "N,E"),
    ("T36", "Complete Assignment", "N,S"),
    ("T37", "Complete Assignment + Add Tile", "N,E"),
    ("T38", "Complete Assignment + Add Tile", "N,S"),
    ("T39", "Complete Assignment / Use Item", "N,E,S"),
    ("T40", "Complete Assignment / Use Item", "N,E,S,W"),
    ("T41", "Use Item", "N,E,S,W"),
    ("T42", "Use Item", "N,E,S"),
    ("T43", "Use Item", "N,S"),
    ("T44", "Use Item + Shard 1", "N,E"),
    ("T45", "Use Item + Will 1", "N,E"),
    ("T46", "Chaos", "N,E,S,W"),
    ("T47", "Chaos", "N,E,S"),
    ("T48", "Chaos", "N,E"),
)

CORNER_IDS: Final = tuple(c[0] for c in _CORNERS)
CORNER_SPACE: Final = {c[0]: index(*c[1]) for c in _CORNERS}
TILE_IDS: Final = tuple(t[0] for t in _TILES)
"""Pre-shuffle bag order (§3.4)."""

ACTIONS_TEXT: Final = {**{c[0]: c[2] for c in _CORNERS}, **{t[0]: t[1] for t in _TILES}}
PARTS: Final[dict[str, tuple[Part, ...]]] = {k: _parse_actions(v) for k, v in ACTIONS_TEXT.items()}
"""Component id -> its parts (corners and tiles)."""

CONNECTORS: Final[dict[str, tuple[int, int, int, int]]] = {
    **{c[0]: (mask(c[3]),) * 4 for c in _CORNERS},
    **{t[0]: tuple(rotate(mask(t[2]), r) for r in range(4)) for t in _TILES},
}
"""Component id -> connector mask at rotation 0..3 (corners: the same for all)."""

ASSIGNMENT_SOURCE: Final = frozenset(
    k for k, parts in PARTS.items() if any(o[0] == COMPLETE for p in parts for o in p)
)
"""Components whose actions can complete an Assignment (§5.7): plain, slash, Chaos."""

# --------------------------------------------------------------- assignments
SPELL: Final = "spell"
ITEM: Final = "item"
USE: Final = "use"
ALWAYS: Final = "always"
END: Final = "end"
NONE: Final = "none"

# §2.5 Spells: (design, name, cost in Will, PP, effect text)
SPELLS: Final = (
    ("S01", "Spark", 2, 1, "Collect 1 Shard."),
    ("S02", "Levitation", 3, 2, "None."),
    ("S03", "Mending Charm", 3, 1, "Remove the Exhaustion token from up to 2 spaces."),
    ("S04", "Transmutation", 4, 2, "Collect 2 Shards."),
    ("S05", "Summon Scaffold", 4, 2, "Perform one Add Tile."),
    ("S06", "Second Wind", 4, 1, "Remove every Exhaustion token from your Slate."),
    ("S07", "Fireball", 5, 3, "None."),
    ("S08", "Crystal Rain", 5, 2, "Collect 3 Shards."),
    ("S09", "Arcane Echo", 5, 2, "Perform one Use Item action."),
    ("S10", "Time Dilation", 6, 2, "Take one extra turn after this turn."),
    ("S11", "Lightning Storm", 6, 4, "None."),
    ("S12", "Scholar's Boon", 6, 3, "Perform one Add Tile, then Collect 1 Shard."),
    ("S13", "Meteor", 7, 5, "None."),
    ("S14", "Grand Summoning", 8, 6, "None."),
    ("S15", "Cataclysm", 9, 7, "None."),
)

# §2.5 Items: (design, name, cost in Shards, PP, kind, ability text)
ITEMS: Final = (
    ("I01", "Quill of Focus", 2, 1, USE, "Gain 1 Will."),
    ("I02", "Prism Lens", 2, 1, USE, "Collect 1 Shard."),
    ("I03", "Hourglass", 3, 1, USE, "Remove the Exhaustion token from 1 space."),
    ("I04", "Trophy Cup", 3, 1, USE, "Place one 1-point Prestige token on this Item."),
    ("I05", "Alchemist's Flask", 3, 1, USE, "Pay 2 Shards to Gain 3 Will."),
    ("I06", "Willstone", 3, 1, USE, "Pay 2 Will to Collect 3 Shards."),
    ("I07", "Sturdy Satchel", 4, 2, USE, "Perform one Add Tile."),
    ("I08", "Focusing Wand", 4, 2, ALWAYS, "Spells you complete cost 1 less Will."),
    ("I09", "Jeweler's Loupe", 4, 2, ALWAYS, "Items you complete cost 1 less Shard."),
    ("I10", "Dream Pillow", 3, 1, ALWAYS, "Each time you Rest, Gain 1 Will and Collect 1 Shard."),
    ("I11", "Spellbook", 4, 1, END, "+1 PP per Spell you have completed."),
    ("I12", "Collector's Cabinet", 4, 1, END, "+1 PP per other Item you own."),
    ("I13", "Treasure Chest", 5, 2, END, "+1 PP per 2 Shards you hold at game end."),
    ("I14", "Crystal Crown", 6, 4, NONE, "No ability."),
    ("I15", "Orrery", 8, 6, NONE, "No ability."),
)

CARD_IDS: Final = tuple(f"{row[0]}{copy}" for row in (*SPELLS, *ITEMS) for copy in ("a", "b"))
"""Pre-shuffle deck order (§2.5): the table's row order, ``a`` before ``b``."""


def design(card: str) -> str:
    """``"S07a"`` -> ``"S07"``."""
    return card[:3]


KIND: Final = {**{s[0]: SPELL for s in SPELLS}, **{i[0]: ITEM for i in ITEMS}}
COST: Final = {**{s[0]: s[2] for s in SPELLS}, **{i[0]: i[2] for i in ITEMS}}
PP: Final = {**{s[0]: s[3] for s in SPELLS}, **{i[0]: i[3] for i in ITEMS}}
NAME: Final = {**{s[0]: s[1] for s in SPELLS}, **{i[0]: i[1] for i in ITEMS}}
ITEM_KIND: Final = {i[0]: i[4] for i in ITEMS}

# ------------------------------------------------------------ numbers of §1-6
START_WILL: Final = 3
START_SHARDS: Final = 3
WILL_CAP: Final = 9
MARKET_SLOTS: Final = 4
PUBLIC_SLOTS: Final = 4
HAND_SIZE: Final = 3
PENCILS_DOWN_AT: Final = 8
ROUND_LIMIT: Final = 40
