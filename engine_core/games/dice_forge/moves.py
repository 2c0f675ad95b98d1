"""Dice Forge moves (commands). Dice are 0 = light, 1 = dark; slots 0..5."""

from __future__ import annotations

from engine_core.types import Move


class ChooseMirror(Move):
    """Copy ``face`` (a face id up on a die) with the Mirror being resolved."""

    face: str


class ChooseOption(Move):
    """Pick an option: of a choice face, of a Boar face (sun/moon), or a Boar reward
    (sun/moon/glory). Options are resource names."""

    option: str


class SplitGain(Move):
    """Split a gain: ``hammer`` gold onto the Hammer track, ``gold_glory`` gold taken as
    glory (Cyclops), ``sun_glory``/``moon_glory`` shards taken as glory (Sentinel); the rest
    goes to the reserve."""

    hammer: int = 0
    gold_glory: int = 0
    sun_glory: int = 0
    moon_glory: int = 0


class OrderFaces(Move):
    """With a Ship and a face that gives gold: use the Ship before (True) or after the gain."""

    ship_first: bool


class ShipBuy(Move):
    face: str


class ShipPass(Move):
    pass


class ForgeFace(Move):
    """Forge the face being placed over ``slot`` (0..5) of ``die`` (0 light, 1 dark)."""

    die: int
    slot: int


class UseCerberus(Move):
    use: bool


class UseTriton(Move):
    option: str  # gold (6) | sun (2) | moon (2)


class UseReinforcement(Move):
    """Use the REINF card ``card`` (index in your ``cards``). ``option``: Owl: gold/sun/moon;
    Hind: light/dark (the die to roll); Elder: empty."""

    card: int
    option: str = ""


class EndReinforcements(Move):
    pass


class BuyFace(Move):
    """Buy a Sanctuary face (starts or continues an offering); forge it with ``ForgeFace``."""

    face: str


class FinishOffering(Move):
    pass


class PerformFeat(Move):
    slot: str  # slot id, e.g. "M5"


class EndTurn(Move):
    """Pass the (remaining) action(s) and end the turn."""


class ChooseBoarBearer(Move):
    seat: int


class ChooseShield(Move):
    face: str


class ChooseSatyrFaces(Move):
    """Two rolled dice of other players, as ``(seat, die)`` pairs, ``first`` < ``second``."""

    first: tuple[int, int]
    second: tuple[int, int]


class ChooseMinorDie(Move):
    die: int


DiceForgeMove = (
    ChooseMirror | ChooseOption | SplitGain | OrderFaces | ShipBuy | ShipPass | ForgeFace
    | UseCerberus | UseTriton | UseReinforcement | EndReinforcements | BuyFace | FinishOffering
    | PerformFeat | EndTurn | ChooseBoarBearer | ChooseShield | ChooseSatyrFaces | ChooseMinorDie
)  # fmt: skip
