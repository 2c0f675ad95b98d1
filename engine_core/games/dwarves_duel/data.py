"""The Dwarves: The Duel as data: card templates, both decks, dice, Wild Cards.

Both 35-card decks share one functional template per slot (``01``..``35``);
card ``G07`` (Forces of Good) and ``E07`` (Forces of Evil) play identically.
Card ids are the instance ids: unique across a match and stable.
"""

from __future__ import annotations

import msgspec

GOOD, EVIL = "GOOD", "EVIL"
SIDES = (GOOD, EVIL)
SIDE_PREFIX = {GOOD: "G", EVIL: "E"}

ALLY, VICTORY, SUPPORT, EVENT, TWIST = "ALLY", "VICTORY", "SUPPORT", "EVENT", "TWIST"
ONE, SAME, FREE = "ONE", "SAME", "FREE"

# Dice: six identical dice, ids d0..d5; faces 1..5 and W (the wild axe).
DICE = ("d0", "d1", "d2", "d3", "d4", "d5")
DIE_INDEX = {d: i for i, d in enumerate(DICE)}
WILD_FACE = "W"
FACES = ("1", "2", "3", "4", "5", WILD_FACE)
NUMBER_FACES = ("1", "2", "3", "4", "5")
BASE_DICE = 3
MAX_DICE = 6
EXTRA_DICE_PER_TWIST = 2
WILD_CARDS = 3
HAND_SIZE = 4
DECK_SIZE = 35

# The unit naming a Wild Card in payments and activations; the draw-pile target.
WILD = "WILD"
PILE = "PILE"


class Template(msgspec.Struct, frozen=True):
    """One functional card template (spec §2.3)."""

    key: str
    type: str
    cost: str  # ONE, SAME or FREE
    amount: int  # ONE: the value v; SAME: the number of dice n; FREE: 0
    hp: int | None = None
    vp: int = 0
    triggers: tuple[str, ...] = ()  # die faces that activate an Ally's damage


_ALL = NUMBER_FACES
TEMPLATES: dict[str, Template] = {
    t.key: t
    for t in (
        Template("ALLY_V1", ALLY, ONE, 1, hp=2, triggers=("1",)),
        Template("ALLY_V2", ALLY, ONE, 2, hp=2, triggers=("2",)),
        Template("ALLY_V3", ALLY, ONE, 3, hp=2, triggers=("3",)),
        Template("ALLY_V4", ALLY, ONE, 4, hp=3, triggers=("4",)),
        Template("ALLY_V5", ALLY, ONE, 5, hp=3, triggers=("5",)),
        Template("ALLY_DUAL_LOW", ALLY, SAME, 3, hp=3, triggers=("2", "3")),
        Template("ALLY_DUAL_HIGH", ALLY, SAME, 3, hp=3, triggers=("4", "5")),
        Template("ALLY_ANY", ALLY, SAME, 4, hp=4, triggers=_ALL),
        Template("ALLY_KING", ALLY, SAME, 2, hp=1),
        Template("VP_1", VICTORY, SAME, 2, hp=1, vp=1),
        Template("VP_2", VICTORY, SAME, 2, hp=2, vp=2),
        Template("VP_3", VICTORY, SAME, 3, hp=3, vp=3),
        Template("VP_4", VICTORY, SAME, 3, hp=4, vp=4),
        Template("VP_5", VICTORY, SAME, 4, hp=5, vp=5),
        Template("SUP_DICE", SUPPORT, SAME, 2),
        Template("SUP_DRAW", SUPPORT, SAME, 3),
        Template("SUP_REROLL", SUPPORT, SAME, 2),
        Template("EV_REMOVE", EVENT, SAME, 3),
        Template("EV_WILDFACE", EVENT, FREE, 0),
        Template("EV_TAKEWILD", EVENT, FREE, 0),
        Template("EV_DRAW2", EVENT, FREE, 0),
        Template("EV_RECOVER", EVENT, SAME, 2),
        Template("TOF_EXTRADICE", TWIST, FREE, 0),
        Template("TOF_STRIKE", TWIST, FREE, 0),
        Template("TOF_ARMOR", TWIST, FREE, 0),
    )
}

# Slot number (1..35) -> template key.
SLOT_TEMPLATE: tuple[str, ...] = (
    "ALLY_V1", "ALLY_V2", "ALLY_V3", "ALLY_V4", "ALLY_V5",
    "ALLY_DUAL_LOW", "ALLY_DUAL_HIGH", "ALLY_ANY", "ALLY_KING",
    "VP_1", "VP_1", "VP_2", "VP_2", "VP_3", "VP_3", "VP_4", "VP_5",
    "SUP_DICE", "SUP_DICE", "SUP_DICE", "SUP_DRAW", "SUP_DRAW", "SUP_REROLL", "SUP_REROLL",
    "EV_REMOVE", "EV_REMOVE", "EV_WILDFACE", "EV_TAKEWILD", "EV_DRAW2", "EV_RECOVER",
    "TOF_EXTRADICE", "TOF_STRIKE", "TOF_STRIKE", "TOF_ARMOR", "TOF_ARMOR",
)  # fmt: skip

NAMES: dict[str, tuple[str, ...]] = {
    GOOD: (
        "Bavragor", "Boëndal", "Goïmgar", "Balyndis", "Tungdil", "Boindil", "Andôkai",
        "Lot-Ionan", "Dwarf King", "Council of the Clans", "Guarding the Stone Gateway",
        "Return to the Blue Mountains", "Election of the High King", "Alliance with the Elves",
        "Battle at the Black Abyss", "Forging Keenfire", "Victory over Nôd'onn",
        "Reinforcement", "Reinforcement", "Reinforcement", "Ancient Knowledge",
        "Ancient Knowledge", "Rodario's Trickery", "Rodario's Trickery", "Begone!", "Begone!",
        "Respite", "Vraccas' Blessing", "Messenger of the Clans", "Second Chance",
        "Andôkai's Power", "Throwing Axe", "Throwing Axe", "Chain Mail", "Chain Mail",
    ),
    EVIL: (
        "Bogglin", "Ushnotz", "Djerůn", "Caphalor", "Sisaroth", "Sinthoras", "Nôd'onn",
        "Firûsha", "Bislipur", "Burning of the Farmlands", "Raid on the Villages",
        "Seizure of Âlandur", "Spread of the Dead Land", "Siege of the Stone Gateway",
        "Betrayal in the Council", "Corruption of the Magic Fields", "Fall of Girdlegard",
        "Reinforcement", "Reinforcement", "Reinforcement", "Informant", "Informant",
        "Cunning Leader", "Cunning Leader", "Assassination", "Assassination", "Short Rest",
        "Tion's Favour", "Spy Report", "Dark Bargain", "Surround", "Dagger", "Dagger",
        "Shadow Armor", "Shadow Armor",
    ),
}  # fmt: skip


class Card(msgspec.Struct, frozen=True):
    """One physical card: its id, side, slot, name and template fields."""

    id: str
    side: str
    slot: int
    name: str
    key: str
    type: str
    cost: str
    amount: int
    hp: int | None
    vp: int
    triggers: tuple[str, ...]


def card_id(side: str, slot: int) -> str:
    return f"{SIDE_PREFIX[side]}{slot:02d}"


def _build() -> dict[str, Card]:
    out: dict[str, Card] = {}
    for side in SIDES:
        for slot in range(1, DECK_SIZE + 1):
            t = TEMPLATES[SLOT_TEMPLATE[slot - 1]]
            cid = card_id(side, slot)
            out[cid] = Card(
                cid, side, slot, NAMES[side][slot - 1], t.key, t.type, t.cost, t.amount,
                t.hp, t.vp, t.triggers,
            )  # fmt: skip
    return out


CARDS: dict[str, Card] = _build()
DECKS: dict[str, tuple[str, ...]] = {
    side: tuple(card_id(side, s) for s in range(1, DECK_SIZE + 1)) for side in SIDES
}


def _check() -> None:
    for side in SIDES:
        deck = [CARDS[c] for c in DECKS[side]]
        count = {
            k: sum(1 for c in deck if c.type == k) for k in (ALLY, VICTORY, SUPPORT, EVENT, TWIST)
        }
        assert count == {ALLY: 9, VICTORY: 8, SUPPORT: 7, EVENT: 6, TWIST: 5}, count
        assert sorted(c.amount for c in deck if c.cost == ONE) == [1, 2, 3, 4, 5]
        assert sum(c.vp for c in deck) == 21
        assert sum(1 for c in deck if c.type == ALLY and c.triggers) == 8


_check()
