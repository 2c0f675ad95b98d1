"""Events (past-tense facts). ``evolve`` applies them without any rule checks."""

from __future__ import annotations

from engine_core.games.assault_of_the_giants.state import Trade
from engine_core.types import Event


class GameStarted(Event):
    players: int
    seat_races: tuple[str, ...]  # race of each seat (seat order is turn order)
    npc_races: tuple[str, ...]
    start_seat: int
    pool_a: int
    pool_b: int


class DeckShuffled(Event):
    deck: str  # resource, spell, universal
    cards: tuple[str, ...]  # new order, top first (hidden: empty in redacted copies)
    size: int
    from_discard: bool = False


class UnitPlaced(Event):
    unit: int
    region: int
    wounded: bool = False
    cost: int = 0  # recruit points / giantslayer actions spent
    reason: str = ""  # setup, recruit, return, event, giantslayer


class ResourcesDrawn(Event):
    seat: int
    cards: tuple[str, ...]


class SpellsDrawn(Event):
    seat: int
    cards: tuple[str, ...]  # empty in other seats' copies
    count: int


class DraftRevealed(Event):
    card: str


class TurnBegan(Event):
    seat: int
    round: int


class EventClaimed(Event):
    seat: int
    event: str
    paid: tuple[str, ...]  # resource ids discarded (empty if free)


class OpAwarded(Event):
    seat: int
    amount: int
    from_a: int
    from_b: int
    reason: str


class StageBegan(Event):
    stage: str  # final_ordning, endgame
    final_round: int = 0


class CommandPlayed(Event):
    seat: int
    command: str
    strength: int  # maneuvers, battles, RP, trade limit, spells, plunders, heals, actions
    phase: str


class PhaseEntered(Event):
    phase: str


class UnitMoved(Event):
    unit: int
    from_region: int
    to_region: int
    cost: int = 1
    transit: bool = False


class LynMoved(Event):
    from_region: int
    to_region: int
    cost: int = 0


class TollDue(Event):
    unit: int
    region: int
    owner: int  # seat, -1 for an NPC race


class TollPaid(Event):
    seat: int
    region: int
    card: str  # "" when the giant was wounded
    to_seat: int  # -1: the card went to the discard pile (NPC owner)
    transit: int  # the giant still in transit afterwards (-1 none)


class UnitWounded(Event):
    unit: int


class UnitHealed(Event):
    unit: int
    cost: int = 0


class UnitRemoved(Event):
    unit: int
    to: int  # -1 supply, -3 box
    reason: str  # defeated, toll, making_room


class ResourcesDiscarded(Event):
    seat: int
    cards: tuple[str, ...]


class PileCardTaken(Event):
    seat: int
    card: str


class CardsGiven(Event):
    from_seat: int
    to_seat: int
    cards: tuple[str, ...]


class TradeChanged(Event):
    trade: Trade


class TradeOffered(Event):
    seat: int
    partner: int
    give: tuple[str, ...]
    request: tuple[str, ...]


class OfferAnswered(Event):
    seat: int
    accepted: bool


class TradeCompleted(Event):
    seat: int
    kind: str


class SpellsDiscarded(Event):
    seat: int
    cards: tuple[str, ...]


class SpellCast(Event):
    seat: int
    card: str


class BattleDeclared(Event):
    seat: int
    target: int
    kind: str  # giants, slayers
    defender_race: int
    defender: int
    controller: int
    defenders: tuple[int, ...]


class AttackerJoined(Event):
    unit: int
    cost: int = 0  # giantslayer actions


class DiceRolled(Event):
    side: str  # attacker, defender
    dice: tuple[str, ...]
    faces: tuple[int, ...]
    step: str


class DiceRerolled(Event):
    side: str
    positions: tuple[int, ...]
    faces: tuple[int, ...]
    source: str  # leader, fortune, npc_reroll


class ArcaneConverted(Event):
    side: str
    positions: tuple[int, ...]  # one entry per converted symbol
    into: str  # block, hits, hit
    source: str  # magic, attack, npc_convert, arcane_surge


class BonusAdded(Event):
    side: str
    hits: int
    blocks: int
    source: str


class RollFinalized(Event):
    side: str
    hits: int
    blocks: int


class BattleStep(Event):
    step: str
    damage: int = 0


class CasualtyTaken(Event):
    unit: int
    absorbed: int
    defeated: bool
    to: int  # where a defeated unit goes (-1 supply, -3 box)


class BattleEnded(Event):
    target: int
    cost: int  # battles used


class RegionPlundered(Event):
    seat: int
    region: int


class RestStage(Event):
    stage: int  # 1 move, 2 attack


class RowReturned(Event):
    seat: int
    cards: tuple[str, ...]


class TurnEnded(Event):
    seat: int


class GameEnded(Event):
    ranks: tuple[int, ...]
    scores: tuple[float, ...]
    reason: str


AssaultEvent = (
    GameStarted | DeckShuffled | UnitPlaced | ResourcesDrawn | SpellsDrawn | DraftRevealed
    | TurnBegan | EventClaimed | OpAwarded | StageBegan | CommandPlayed | PhaseEntered
    | UnitMoved | LynMoved | TollDue | TollPaid | UnitWounded | UnitHealed | UnitRemoved
    | ResourcesDiscarded | PileCardTaken | CardsGiven | TradeChanged | TradeOffered
    | OfferAnswered | TradeCompleted | SpellsDiscarded | SpellCast | BattleDeclared
    | AttackerJoined | DiceRolled | DiceRerolled | ArcaneConverted | BonusAdded
    | RollFinalized | BattleStep | CasualtyTaken | BattleEnded | RestStage | RegionPlundered | RowReturned
    | TurnEnded | GameEnded
)  # fmt: skip
