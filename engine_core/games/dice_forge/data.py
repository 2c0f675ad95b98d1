"""Dice Forge as data: faces, Temple pools, card slots and cards, each with a stable id.

Resource vectors are tuples ``(gold, sun, moon, glory)``.
"""

from __future__ import annotations

from typing import NamedTuple

GOLD, SUN, MOON, GLORY = 0, 1, 2, 3
RESOURCES = ("gold", "sun", "moon", "glory")
RES_INDEX = {name: i for i, name in enumerate(RESOURCES)}
Vec = tuple[int, int, int, int]
ZERO: Vec = (0, 0, 0, 0)

LIGHT, DARK = 0, 1
DIE_NAMES = ("light", "dark")

# ------------------------------------------------------------------ faces
SIMPLE, CHOICE, X3, MIRROR, SHIP, SHIELD, BOAR = (
    "simple", "choice", "x3", "mirror", "ship", "shield", "boar",
)  # fmt: skip
X3_ID = "X3"
NONE_FACE = "NONE"
"""What a Mirror becomes when there is nothing it may copy (yields nothing)."""


class Face(NamedTuple):
    id: str
    kind: str
    gains: Vec = ZERO  # simple faces
    options: tuple[tuple[str, Vec], ...] = ()  # choice faces: (option name, gains)
    watched: int = -1  # shields: the resource index they watch
    fallback: Vec = ZERO  # shields: what they give otherwise
    colour: str = ""  # boars


def _v(gold: int = 0, sun: int = 0, moon: int = 0, glory: int = 0) -> Vec:
    return (gold, sun, moon, glory)


FACE_LIST: tuple[Face, ...] = (
    Face("G1", SIMPLE, _v(gold=1)),
    Face("S1", SIMPLE, _v(sun=1)),
    Face("M1", SIMPLE, _v(moon=1)),
    Face("V2", SIMPLE, _v(glory=2)),
    Face("G3", SIMPLE, _v(gold=3)),
    Face("G4", SIMPLE, _v(gold=4)),
    Face("G6", SIMPLE, _v(gold=6)),
    Face(
        "G1|S1|M1", CHOICE, options=(("gold", _v(gold=1)), ("sun", _v(sun=1)), ("moon", _v(moon=1)))
    ),
    Face("G2+M1", SIMPLE, _v(gold=2, moon=1)),
    Face("S1+V1", SIMPLE, _v(sun=1, glory=1)),
    Face("G3|V2", CHOICE, options=(("gold", _v(gold=3)), ("glory", _v(glory=2)))),
    Face("M2", SIMPLE, _v(moon=2)),
    Face("S2", SIMPLE, _v(sun=2)),
    Face("V3", SIMPLE, _v(glory=3)),
    Face("V4", SIMPLE, _v(glory=4)),
    Face("M2+V2", SIMPLE, _v(moon=2, glory=2)),
    Face(
        "G2|S2|M2", CHOICE, options=(("gold", _v(gold=2)), ("sun", _v(sun=2)), ("moon", _v(moon=2)))
    ),
    Face("G1+S1+M1+V1", SIMPLE, _v(1, 1, 1, 1)),
    Face("X3", X3),
    Face("MIRROR", MIRROR),
    Face("SHIP", SHIP),
    Face("SHIELD_SUN", SHIELD, watched=SUN, fallback=_v(sun=2)),
    Face("SHIELD_GOLD", SHIELD, watched=GOLD, fallback=_v(gold=3)),
    Face("SHIELD_GLORY", SHIELD, watched=GLORY, fallback=_v(glory=3)),
    Face("SHIELD_MOON", SHIELD, watched=MOON, fallback=_v(moon=2)),
    Face("BOAR_RED", BOAR, colour="red"),
    Face("BOAR_YELLOW", BOAR, colour="yellow"),
    Face("BOAR_GREEN", BOAR, colour="green"),
    Face("BOAR_BLUE", BOAR, colour="blue"),
)
FACES: dict[str, Face] = {f.id: f for f in FACE_LIST}
BOAR_COLOURS = ("red", "yellow", "green", "blue")
BOAR_FACE = {c: f"BOAR_{c.upper()}" for c in BOAR_COLOURS}
BOAR_BEARER_OPTIONS = ("sun", "moon")
BOAR_OWNER_OPTIONS: dict[str, Vec] = {"sun": _v(sun=1), "moon": _v(moon=1), "glory": _v(glory=3)}
SHIELD_FACES = ("SHIELD_SUN", "SHIELD_GOLD", "SHIELD_GLORY", "SHIELD_MOON")

STARTING_DICE: tuple[tuple[str, ...], tuple[str, ...]] = (
    ("G1", "G1", "G1", "G1", "G1", "S1"),
    ("G1", "G1", "G1", "G1", "M1", "V2"),
)
START_UP = (0, 0)


# ------------------------------------------------------------------ temple
class Pool(NamedTuple):
    id: str
    cost: int
    faces: tuple[str, ...]


SANCTUARY: tuple[Pool, ...] = (
    Pool("P2_GOLD", 2, ("G3",) * 4),
    Pool("P2_MOON", 2, ("M1",) * 4),
    Pool("P3_GOLD", 3, ("G4",) * 4),
    Pool("P3_SUN", 3, ("S1",) * 4),
    Pool("P4", 4, ("G6", "G1|S1|M1", "G2+M1", "S1+V1")),
    Pool("P5", 5, ("G3|V2",) * 4),
    Pool("P6", 6, ("M2",) * 4),
    Pool("P8_SUN", 8, ("S2",) * 4),
    Pool("P8_GLORY", 8, ("V3",) * 4),
    Pool("P12", 12, ("V4", "M2+V2", "G2|S2|M2", "G1+S1+M1+V1")),
)
GARDENS: tuple[Pool, ...] = (
    Pool("GARDEN_X3", 0, ("X3",) * 4),
    Pool("GARDEN_MIRROR", 0, ("MIRROR",) * 4),
    Pool("GARDEN_SHIP", 0, ("SHIP",) * 4),
    Pool("GARDEN_SHIELD", 0, SHIELD_FACES),
    Pool("GARDEN_BOAR", 0, tuple(BOAR_FACE[c] for c in BOAR_COLOURS)),
)
POOL_OF_FACE: dict[str, int] = {f: i for i, p in enumerate(SANCTUARY) for f in p.faces}
GARDEN_OF_FACE: dict[str, int] = {f: i for i, p in enumerate(GARDENS) for f in p.faces}
COST: dict[str, int] = {f: SANCTUARY[i].cost for f, i in POOL_OF_FACE.items()}
SANCTUARY_FACES: tuple[str, ...] = tuple(dict.fromkeys(f for p in SANCTUARY for f in p.faces))


def face_worth(face: str) -> int:
    """A rough order of faces by value (for the default forge): starting faces lowest,
    then Sanctuary faces by cost, Garden faces highest."""
    if face in COST:
        return COST[face]
    return {"G1": 0, "V2": 1}.get(face, 20)


# ------------------------------------------------------------------ cards
NONE_PILE, AUTO, REINF = "none", "auto", "reinf"


class Card(NamedTuple):
    id: str
    name: str
    glory: int
    pile: str


CARD_LIST: tuple[Card, ...] = (
    Card("HAMMER", "The Blacksmith's Hammer", 0, NONE_PILE),
    Card("CHEST", "The Blacksmith's Chest", 2, NONE_PILE),
    Card("HIND", "The Silver Hind", 2, REINF),
    Card("BEAR", "The Great Bear", 2, AUTO),
    Card("SATYRS", "Satyrs", 6, NONE_PILE),
    Card("BOAR_RED", "Tenacious Boar (red)", 4, AUTO),
    Card("BOAR_YELLOW", "Tenacious Boar (yellow)", 4, AUTO),
    Card("BOAR_GREEN", "Tenacious Boar (green)", 4, AUTO),
    Card("BOAR_BLUE", "Tenacious Boar (blue)", 4, AUTO),
    Card("FERRYMAN", "Ferryman", 12, NONE_PILE),
    Card("CERBERUS", "Cerberus", 6, NONE_PILE),
    Card("HELMET", "Helmet of Invisibility", 4, NONE_PILE),
    Card("CANCER", "Cancer", 8, NONE_PILE),
    Card("SENTINEL", "Sentinel", 6, NONE_PILE),
    Card("HYDRA", "Hydra", 26, NONE_PILE),
    Card("TYPHON", "Typhon", 16, NONE_PILE),
    Card("SPHINX", "Sphinx", 10, NONE_PILE),
    Card("CYCLOPS", "Cyclops", 8, NONE_PILE),
    Card("GORGON", "Gorgon", 14, NONE_PILE),
    Card("TRITON", "Triton", 8, NONE_PILE),
    Card("MIRROR_CARD", "Mirror of the Abyss", 10, NONE_PILE),
    Card("OWL", "The Guardian's Owl", 4, REINF),
    Card("SHIP_CARD", "Celestial Ship", 4, NONE_PILE),
    Card("MINOTAUR", "Minotaur", 8, NONE_PILE),
    Card("SHIELD_CARD", "The Guardian's Shield", 6, NONE_PILE),
    Card("ELDER", "The Elder", 0, REINF),
    Card("WILD_SPIRITS", "Wild Spirits", 2, NONE_PILE),
)
CARDS: dict[str, Card] = {c.id: c for c in CARD_LIST}
BOAR_CARD_COLOUR = {f"BOAR_{c.upper()}": c for c in BOAR_COLOURS}
CARD_SETS = ("HAMMER", "CHEST", "HIND", "BEAR", "SATYRS", "BOAR", "FERRYMAN", "CERBERUS",
             "HELMET", "CANCER", "SENTINEL", "HYDRA", "TYPHON", "SPHINX", "CYCLOPS", "GORGON",
             "TRITON", "MIRROR_CARD", "OWL", "SHIP_CARD", "MINOTAUR", "SHIELD_CARD", "ELDER",
             "WILD_SPIRITS")  # fmt: skip
"""The 24 card sets; ``BOAR`` is the set of the four Tenacious Boar colours."""


class Slot(NamedTuple):
    id: str
    island: int
    sun: int
    moon: int
    base: str
    alternate: str  # == base where the slot has no alternate


SLOTS: tuple[Slot, ...] = (
    Slot("M1", 1, 0, 1, "HAMMER", "HAMMER"),
    Slot("M2", 1, 0, 1, "CHEST", "CHEST"),
    Slot("M3", 2, 0, 2, "HIND", "BEAR"),
    Slot("M4", 2, 0, 3, "SATYRS", "BOAR"),
    Slot("M5", 3, 0, 4, "FERRYMAN", "CERBERUS"),
    Slot("M6", 3, 0, 5, "HELMET", "HELMET"),
    Slot("M7", 4, 0, 6, "CANCER", "SENTINEL"),
    Slot("M8", 4, 5, 5, "HYDRA", "TYPHON"),
    Slot("F7", 4, 6, 0, "SPHINX", "CYCLOPS"),
    Slot("F5", 5, 4, 0, "GORGON", "TRITON"),
    Slot("F6", 5, 5, 0, "MIRROR_CARD", "MIRROR_CARD"),
    Slot("F3", 6, 2, 0, "OWL", "SHIP_CARD"),
    Slot("F4", 6, 3, 0, "MINOTAUR", "SHIELD_CARD"),
    Slot("F1", 7, 1, 0, "ELDER", "ELDER"),
    Slot("F2", 7, 1, 0, "WILD_SPIRITS", "WILD_SPIRITS"),
)
SLOT_INDEX: dict[str, int] = {s.id: i for i, s in enumerate(SLOTS)}
ALTERNABLE = tuple(s.id for s in SLOTS if s.base != s.alternate)
START_PORTAL = 0
"""Pawn position of a hero on its own start portal; islands are 1..7."""


def stack_cards(card_set: str, players: int) -> tuple[str, ...]:
    """The cards of one feat stack, top first (Boar: red, yellow, green, blue)."""
    if card_set == "BOAR":
        return tuple(f"BOAR_{c.upper()}" for c in BOAR_COLOURS[:players])
    return (card_set,) * players


# ------------------------------------------------------------------ setup
ROUNDS = {2: 9, 3: 10, 4: 9}
STARTING_GOLD = (3, 2, 1, 0)
BASE_CAPS: Vec = (12, 6, 6, 0)
CHEST_CAPS: Vec = (4, 3, 3, 0)
HAMMER_PHASE = 15
HAMMER_TRACK = 30
HAMMER_PHASE_GLORY = (10, 15)
BEAR_GLORY = 3
EXTRA_ACTION_SUN = 2
ELDER_GOLD, ELDER_GLORY = 3, 4
TRITON_OPTIONS: dict[str, Vec] = {"gold": _v(gold=6), "sun": _v(sun=2), "moon": _v(moon=2)}
OWL_OPTIONS: dict[str, Vec] = {"gold": _v(gold=1), "sun": _v(sun=1), "moon": _v(moon=1)}
SHIP_DISCOUNT, SHIP_DISCOUNT_X3 = 2, 6
SHIELD_HIT_GLORY = 5
SENTINEL_GLORY_PER_SHARD = 2
CYCLOPS_GLORY_PER_GOLD = 1
