"""The rules: ``legal_moves`` and ``decide``, one small function per effect.

``decide`` works on a ``Ctx``: each event it emits is folded into a working
state at once (with ``evolve``), so later steps of the same move see its
effects. The turn machine (spec §4, §5.6):

    draw --DrawCards--> preroll --RollDice--> dice --EndDicePhase--> [CP1] card
    card --EndTurn--> ending [CP4] --(Wild Card, TurnEnded, TurnStarted)--> draw

Windows form a stack (``State.windows``); only the holder of the top one may
act. A window opens only if its holder has a legal Twist (unless the option
``always_offer_windows`` is on), and closes by itself when control returns to
a holder who has none.
"""

from __future__ import annotations

from itertools import combinations, pairwise
from typing import assert_never

from engine_core.errors import IllegalMove
from engine_core.flow import Phase, Phases
from engine_core.games.dwarves_duel.data import (
    ALLY,
    BASE_DICE,
    CARDS,
    DICE,
    DIE_INDEX,
    EVENT,
    EXTRA_DICE_PER_TWIST,
    FACES,
    FREE,
    MAX_DICE,
    ONE,
    PILE,
    SUPPORT,
    TWIST,
    VICTORY,
    WILD,
    WILD_CARDS,
    WILD_FACE,
    Card,
)
from engine_core.games.dwarves_duel.events import (
    AllyActivated,
    CardBurned,
    CardDefeated,
    CardDiscarded,
    CardEnteredDisplay,
    CardPlayed,
    CardRecovered,
    CardRemoved,
    CardsDrawn,
    DamageCancelled,
    DamageDealt,
    DamageDeclared,
    DamageFizzled,
    DiceRolled,
    DieConverted,
    DieRerolled,
    ExtraDicePending,
    GameEnded,
    PhaseChanged,
    TurnEnded,
    TurnStarted,
    WildCardTaken,
    WindowClosed,
    WindowOpened,
)
from engine_core.games.dwarves_duel.evolve import evolve
from engine_core.games.dwarves_duel.moves import (
    ActivateAlly,
    DrawCards,
    DwarvesMove,
    EndDicePhase,
    EndTurn,
    KingConvert,
    Pass,
    PlayCard,
    PlayTwist,
    RerollDie,
    RollDice,
)
from engine_core.games.dwarves_duel.state import (
    CARD,
    CP1,
    CP2,
    CP4,
    DEFEND,
    DICE_PHASE,
    DRAW,
    ENDING,
    OVER,
    PREROLL,
    Player,
    Point,
    State,
    Window,
)
from engine_core.rng import Rng
from engine_core.types import Seat

_CARD_TYPES_TO_DISPLAY = (ALLY, VICTORY, SUPPORT)

# The turn structure as data: which moves each phase allows, and what comes
# next. While a window is open only its row (``WINDOW``) applies.
WINDOW = "window"
TURN = Phases(
    Phase(DRAW, frozenset({"draw_cards"}), PREROLL),
    Phase(PREROLL, frozenset({"play_twist", "roll_dice"}), DICE_PHASE),
    Phase(DICE_PHASE, frozenset({"reroll_die", "end_dice_phase"}), CARD),
    Phase(
        CARD,
        frozenset({"play_card", "play_twist", "activate_ally", "king_convert", "end_turn"}),
        ENDING,
    ),
    Phase(ENDING, frozenset(), DRAW),  # only ever seen with a CP4 window open
    Phase(OVER, frozenset(), None),
    Phase(WINDOW, frozenset({"play_twist", "pass"}), None),
)


class Ctx:
    """The events of one decision and the state they lead to."""

    __slots__ = ("events", "state")

    def __init__(self, state: State) -> None:
        self.state = state
        self.events: list = []

    def emit(self, event) -> None:
        self.events.append(event)
        self.state = evolve(self.state, event)


# ------------------------------------------------------------------ queries
def holder(state: State) -> Seat:
    """Who holds the decision: the top window's holder, else the active player."""
    return state.windows[-1].holder if state.windows else state.active


def count_key(player: Player, key: str) -> int:
    return sum(1 for dc in player.display if CARDS[dc.card].key == key)


def dice_count(state: State, seat: Seat) -> int:
    p = state.players[seat]
    n = BASE_DICE + count_key(p, "SUP_DICE") + EXTRA_DICE_PER_TWIST * p.pending_extra_dice
    return min(MAX_DICE, n)


def free_dice(state: State) -> tuple[tuple[str, str], ...]:
    """(die id, face) of every rolled, unused die, in id order."""
    return tuple((DICE[i], d.face) for i, d in enumerate(state.dice) if d.face and not d.used)


def strike_targets(state: State, seat: Seat) -> tuple[str, ...]:
    """Where ``seat`` may deal a point: the opponent's pile or a card with HP."""
    opp = state.players[1 - seat]
    return (PILE, *(dc.card for dc in opp.display if CARDS[dc.card].hp is not None))


def in_play(state: State, point: Point) -> bool:
    if point.target == PILE:
        return True
    return any(dc.card == point.target for dc in state.players[point.owner].display)


def armor_ok(state: State, seat: Seat, window: Window | None) -> bool:
    """TOF_ARMOR: only against an uncancelled point at the holder's own things."""
    if window is None or window.kind != DEFEND or window.holder != seat:
        return False
    point = window.point
    return point is not None and not point.cancelled and in_play(state, point)


def extra_ok(state: State, seat: Seat) -> bool:
    """TOF_EXTRADICE: only on the owner's own turn, never in the draw or dice phase."""
    return seat == state.active and state.phase not in (DRAW, DICE_PHASE)


def has_twist(state: State, seat: Seat, window: Window | None) -> bool:
    """Does ``seat`` hold a Twist it may play in ``window``?"""
    armor = extra = None
    for c in state.players[seat].hand:
        key = CARDS[c].key
        if key == "TOF_STRIKE":
            return True
        if key == "TOF_ARMOR":
            if armor is None:
                armor = armor_ok(state, seat, window)
            if armor:
                return True
        elif key == "TOF_EXTRADICE":
            if extra is None:
                extra = extra_ok(state, seat)
            if extra:
                return True
    return False


def twist_moves(state: State, seat: Seat, window: Window | None) -> list[PlayTwist]:
    out: list[PlayTwist] = []
    targets = armor = extra = None
    for c in state.players[seat].hand:
        key = CARDS[c].key
        if key == "TOF_STRIKE":
            if targets is None:
                targets = strike_targets(state, seat)
            out.extend(PlayTwist(card=c, target=t) for t in targets)
        elif key == "TOF_ARMOR":
            if armor is None:
                armor = armor_ok(state, seat, window)
            if armor:
                out.append(PlayTwist(card=c))
        elif key == "TOF_EXTRADICE":
            if extra is None:
                extra = extra_ok(state, seat)
            if extra:
                out.append(PlayTwist(card=c))
    return out


def payments(state: State, seat: Seat, card: Card) -> list[tuple[str, ...]]:
    """Every payment ``decide`` accepts for ``card``, in canonical form."""
    if card.cost == FREE:
        return [()]
    free = free_dice(state)
    wild = state.players[seat].wild
    if card.cost == ONE:
        v = str(card.amount)
        out = [(d,) for d, f in free if f in (v, WILD_FACE)]
        if wild:
            out.append((WILD,))
        return out
    n = card.amount
    out = []
    for k in range(min(wild, n) + 1):
        for combo in combinations(free, n - k):
            if len({f for _, f in combo if f != WILD_FACE}) <= 1:
                out.append(tuple(d for d, _ in combo) + (WILD,) * k)
    return out


def scores(state: State) -> tuple[int, int]:
    s0, s1 = (sum(CARDS[dc.card].vp for dc in p.display) for p in state.players)
    return (s0, s1)


# ------------------------------------------------------------- legal moves
def legal_moves(state: State, seat: Seat) -> tuple[DwarvesMove, ...]:
    if state.outcome is not None or seat != holder(state):
        return ()
    if state.windows:
        return (Pass(), *twist_moves(state, seat, state.windows[-1]))
    phase = state.phase
    p = state.players[seat]
    if phase == DRAW:
        return tuple(DrawCards(count=k) for k in range(1, 2 + count_key(p, "SUP_DRAW")))
    if phase == PREROLL:
        return (RollDice(), *twist_moves(state, seat, None))
    if phase == DICE_PHASE:
        out: list[DwarvesMove] = [EndDicePhase()]
        free = free_dice(state)
        for dc in p.display:
            if CARDS[dc.card].key == "SUP_REROLL" and dc.card not in state.rerolls_used:
                out.extend(RerollDie(die=d, source=dc.card) for d, _ in free)
        return tuple(out)
    if phase == CARD:
        return (EndTurn(), *twist_moves(state, seat, None), *_card_phase_moves(state, seat))
    return ()


def _card_phase_moves(state: State, seat: Seat) -> list[DwarvesMove]:
    p = state.players[seat]
    opp = state.players[1 - seat]
    free = free_dice(state)
    out: list[DwarvesMove] = []
    if not state.king_used and count_key(p, "ALLY_KING"):
        out.extend(KingConvert(die=d) for d, f in free if f != WILD_FACE)
    targets = None
    for dc in p.display:
        card = CARDS[dc.card]
        if not card.triggers:
            continue
        if targets is None:
            targets = strike_targets(state, seat)
        units = [d for d, f in free if f == WILD_FACE or f in card.triggers]
        if p.wild:
            units.append(WILD)
        out.extend(ActivateAlly(ally=dc.card, unit=u, target=t) for u in units for t in targets)
    for c in p.hand:
        card = CARDS[c]
        if card.type == TWIST:
            continue
        pays = payments(state, seat, card)
        if not pays:
            continue
        key = card.key
        if key == "EV_REMOVE":
            out.extend(
                PlayCard(card=c, payment=pay, target=dc.card) for pay in pays for dc in opp.display
            )
        elif key == "EV_WILDFACE":
            out.extend(PlayCard(card=c, die=d) for d, f in free if f != WILD_FACE)
        elif key == "EV_RECOVER":
            out.extend(PlayCard(card=c, payment=pay, pick=x) for pay in pays for x in p.discard)
        else:
            out.extend(PlayCard(card=c, payment=pay) for pay in pays)
    return out


def default_move(state: State, seat: Seat) -> DwarvesMove:
    if state.windows:
        return Pass()
    return {DRAW: DrawCards(count=1), PREROLL: RollDice(), DICE_PHASE: EndDicePhase()}.get(
        state.phase, EndTurn()
    )


# ------------------------------------------------------------------ decide
def decide(state: State, seat: Seat, move: DwarvesMove, rng: Rng) -> list:
    check_phase(state, move)
    ctx = Ctx(state)
    match move:
        case DrawCards():
            draw_cards(ctx, seat, move)
        case RollDice():
            roll_dice(ctx, seat, rng)
        case RerollDie():
            reroll_die(ctx, seat, move, rng)
        case EndDicePhase():
            end_dice_phase(ctx, seat)
        case PlayCard():
            play_card(ctx, seat, move)
        case PlayTwist():
            play_twist(ctx, seat, move)
        case ActivateAlly():
            activate_ally(ctx, seat, move)
        case KingConvert():
            king_convert(ctx, seat, move)
        case Pass():
            pass_window(ctx, seat)
        case EndTurn():
            end_turn(ctx, seat)
        case _:
            assert_never(move)
    return ctx.events


def check_phase(state: State, move: DwarvesMove) -> None:
    """Reject a move that the turn table does not allow at this moment."""
    if state.windows:
        if type(move).__struct_config__.tag not in TURN.allowed(WINDOW):
            raise IllegalMove("window_open", "answer the open window first (play a Twist or pass)")
        return
    TURN.check(state.phase, move)


def _require_free_die(state: State, die: str) -> str:
    """The face of ``die`` if it is rolled and unused."""
    i = DIE_INDEX.get(die)
    if i is None:
        raise IllegalMove("unknown_die", f"no die {die!r}; dice are d0..d5")
    d = state.dice[i]
    if not d.face or d.used:
        raise IllegalMove("die_unavailable", f"die {die} is not an unused rolled die")
    return d.face


def _require_none(**params: str) -> None:
    for name, value in params.items():
        if value:
            raise IllegalMove("unexpected_parameter", f"this card takes no {name}")


# Draw phase ---------------------------------------------------------------
def draw(ctx: Ctx, seat: Seat, n: int) -> bool:
    """Draw up to ``n`` cards; True if that emptied the pile and ended the game."""
    cards = ctx.state.players[seat].pile[:n]
    ctx.emit(CardsDrawn(seat=seat, count=len(cards), cards=cards))
    if not ctx.state.players[seat].pile:
        end_game(ctx, seat)
        return True
    return False


def draw_cards(ctx: Ctx, seat: Seat, move: DrawCards) -> None:
    s = ctx.state
    most = 1 + count_key(s.players[seat], "SUP_DRAW")
    if not 1 <= move.count <= most:
        raise IllegalMove("bad_count", f"draw 1..{most} cards, not {move.count}")
    if not draw(ctx, seat, move.count):
        ctx.emit(PhaseChanged(seat=seat, phase=PREROLL))


# Dice phase ---------------------------------------------------------------
def roll_dice(ctx: Ctx, seat: Seat, rng: Rng) -> None:
    s = ctx.state
    faces = tuple(FACES[rng.below(6)] for _ in range(dice_count(s, seat)))
    ctx.emit(DiceRolled(seat=seat, faces=faces))


def reroll_die(ctx: Ctx, seat: Seat, move: RerollDie, rng: Rng) -> None:
    s = ctx.state
    if not any(dc.card == move.source for dc in s.players[seat].display) or (
        CARDS[move.source].key != "SUP_REROLL"
    ):
        raise IllegalMove("bad_source", f"{move.source!r} is no re-roll card in your display")
    if move.source in s.rerolls_used:
        raise IllegalMove("reroll_used", f"{move.source} was used in this dice phase")
    old = _require_free_die(s, move.die)
    new = FACES[rng.below(6)]
    ctx.emit(DieRerolled(seat=seat, die=move.die, source=move.source, old=old, new=new))


def end_dice_phase(ctx: Ctx, seat: Seat) -> None:
    ctx.emit(PhaseChanged(seat=seat, phase=CARD))
    open_window(ctx, CP1, 1 - seat)
    settle(ctx)


# Card phase: playing cards -----------------------------------------------
def check_payment(state: State, seat: Seat, card: Card, payment: tuple[str, ...]) -> None:
    idx: list[int] = []
    wild = 0
    for u in payment:
        if u == WILD:
            wild += 1
        elif wild:
            raise IllegalMove("bad_payment", "list the dice first, then WILD units")
        elif u in DIE_INDEX:
            idx.append(DIE_INDEX[u])
        else:
            raise IllegalMove("bad_payment", f"{u!r} is neither a die id nor WILD")
    if any(a >= b for a, b in pairwise(idx)):
        raise IllegalMove("bad_payment", "list each die once, in ascending id order")
    faces = [_require_free_die(state, DICE[i]) for i in idx]
    if wild > state.players[seat].wild:
        raise IllegalMove("no_wild_card", f"you hold {state.players[seat].wild} Wild Card(s)")
    if card.cost == FREE:
        ok = not payment
    elif card.cost == ONE:
        ok = len(payment) == 1 and (wild == 1 or faces[0] in (str(card.amount), WILD_FACE))
    else:
        ok = len(payment) == card.amount and len({f for f in faces if f != WILD_FACE}) <= 1
    if not ok:
        cost = {FREE: "free", ONE: f"1 die showing {card.amount}"}.get(
            card.cost, f"{card.amount} dice of one value"
        )
        raise IllegalMove("wrong_payment", f"{card.id} costs exactly {cost}")


def play_card(ctx: Ctx, seat: Seat, move: PlayCard) -> None:
    s = ctx.state
    p = s.players[seat]
    if move.card not in p.hand:
        raise IllegalMove("not_in_hand", f"{move.card!r} is not in your hand")
    card = CARDS[move.card]
    if card.type == TWIST:
        raise IllegalMove("use_play_twist", "Twists of Fate are played with PlayTwist")
    check_payment(s, seat, card, move.payment)
    key = card.key
    opp = 1 - seat
    if key == "EV_REMOVE":
        _require_none(die=move.die, pick=move.pick)
        if not any(dc.card == move.target for dc in s.players[opp].display):
            raise IllegalMove("bad_target", f"{move.target!r} is not in your opponent's display")
    elif key == "EV_WILDFACE":
        _require_none(target=move.target, pick=move.pick)
        if _require_free_die(s, move.die) == WILD_FACE:
            raise IllegalMove("bad_die", f"die {move.die} already shows W")
    elif key == "EV_RECOVER":
        _require_none(target=move.target, die=move.die)
        if move.pick not in p.discard:
            raise IllegalMove("bad_pick", f"{move.pick!r} is not in your discard pile")
    else:
        _require_none(target=move.target, die=move.die, pick=move.pick)

    ctx.emit(CardPlayed(seat=seat, card=move.card, payment=move.payment))
    if card.type in _CARD_TYPES_TO_DISPLAY:
        ctx.emit(CardEnteredDisplay(seat=seat, card=move.card))
    else:
        assert card.type == EVENT
        if EVENT_EFFECTS[key](ctx, seat, move):
            return  # the game ended during the effect
        ctx.emit(CardDiscarded(seat=seat, card=move.card))
    open_window(ctx, CP2, opp)
    settle(ctx)


def effect_remove(ctx: Ctx, seat: Seat, move: PlayCard) -> bool:
    ctx.emit(CardRemoved(seat=1 - seat, card=move.target, by=seat))
    return False


def effect_wild_face(ctx: Ctx, seat: Seat, move: PlayCard) -> bool:
    old = ctx.state.dice[DIE_INDEX[move.die]].face
    ctx.emit(DieConverted(seat=seat, die=move.die, old=old, cause="event"))
    return False


def effect_take_wild(ctx: Ctx, seat: Seat, move: PlayCard) -> bool:
    take_wild(ctx, seat)
    return False


def effect_draw_two(ctx: Ctx, seat: Seat, move: PlayCard) -> bool:
    return draw(ctx, seat, 1) or draw(ctx, seat, 1)


def effect_recover(ctx: Ctx, seat: Seat, move: PlayCard) -> bool:
    ctx.emit(CardRecovered(seat=seat, card=move.pick))
    return False


EVENT_EFFECTS = {
    "EV_REMOVE": effect_remove,
    "EV_WILDFACE": effect_wild_face,
    "EV_TAKEWILD": effect_take_wild,
    "EV_DRAW2": effect_draw_two,
    "EV_RECOVER": effect_recover,
}


def take_wild(ctx: Ctx, seat: Seat) -> None:
    """Take a Wild Card: from the middle, else from the opponent; none at 3."""
    s = ctx.state
    if s.players[seat].wild >= WILD_CARDS:
        return
    ctx.emit(WildCardTaken(seat=seat, source="middle" if s.middle_wild else "opponent"))


# Card phase: Allies and the King -------------------------------------------
def activate_ally(ctx: Ctx, seat: Seat, move: ActivateAlly) -> None:
    s = ctx.state
    p = s.players[seat]
    if not any(dc.card == move.ally for dc in p.display):
        raise IllegalMove("not_in_display", f"{move.ally!r} is not in your display")
    card = CARDS[move.ally]
    if not card.triggers:
        raise IllegalMove("cannot_deal_damage", f"{move.ally} cannot deal damage")
    if move.unit == WILD:
        if not p.wild:
            raise IllegalMove("no_wild_card", "you hold no Wild Card")
    else:
        face = _require_free_die(s, move.unit)
        if face != WILD_FACE and face not in card.triggers:
            raise IllegalMove(
                "unit_does_not_match", f"{move.ally} needs {'/'.join(card.triggers)}, not {face}"
            )
    if move.target not in strike_targets(s, seat):
        raise IllegalMove("bad_target", f"{move.target!r} is not a target with health points")
    ctx.emit(AllyActivated(seat=seat, ally=move.ally, unit=move.unit))
    deal_point(ctx, seat, move.ally, move.target)
    settle(ctx)


def king_convert(ctx: Ctx, seat: Seat, move: KingConvert) -> None:
    s = ctx.state
    if not count_key(s.players[seat], "ALLY_KING"):
        raise IllegalMove("no_king", "your display holds no Dwarf King / Bislipur")
    if s.king_used:
        raise IllegalMove("king_used", "the conversion was used this turn")
    face = _require_free_die(s, move.die)
    if face == WILD_FACE:
        raise IllegalMove("bad_die", f"die {move.die} already shows W")
    ctx.emit(DieConverted(seat=seat, die=move.die, old=face, cause="king"))


# Twists of Fate ------------------------------------------------------------
def play_twist(ctx: Ctx, seat: Seat, move: PlayTwist) -> None:
    """A Twist, by whoever holds the decision (TURN: a window, pre-roll or card phase).

    Each Twist checks its own timing, is revealed, takes effect, and goes to the
    discard pile as soon as that effect is carried out (§5.5)."""
    s = ctx.state
    if move.card not in s.players[seat].hand:
        raise IllegalMove("not_in_hand", f"{move.card!r} is not in your hand")
    card = CARDS[move.card]
    if card.type != TWIST:
        raise IllegalMove("not_a_twist", f"{move.card} is not a Twist of Fate; use PlayCard")
    check, effect = TWIST_EFFECTS[card.key]
    check(s, seat, move)
    ctx.emit(CardPlayed(seat=seat, card=move.card, payment=()))
    effect(ctx, seat, move)
    settle(ctx)


def check_strike(state: State, seat: Seat, move: PlayTwist) -> None:
    if move.target not in strike_targets(state, seat):
        raise IllegalMove("bad_target", f"{move.target!r} is not a target with health points")


def twist_strike(ctx: Ctx, seat: Seat, move: PlayTwist) -> None:
    """TOF_STRIKE: 1 point; discarded before the defender window opens."""
    point = declare_point(ctx, seat, move.card, move.target)
    ctx.emit(CardDiscarded(seat=seat, card=move.card))
    open_window(ctx, DEFEND, point.owner, point)


def check_armor(state: State, seat: Seat, move: PlayTwist) -> None:
    _require_none(target=move.target)
    if not armor_ok(state, seat, state.windows[-1] if state.windows else None):
        raise IllegalMove("nothing_to_cancel", "no pending point against you to cancel")


def twist_armor(ctx: Ctx, seat: Seat, move: PlayTwist) -> None:
    """TOF_ARMOR: cancel the point of the holder's defender window."""
    ctx.emit(DamageCancelled(seat=seat, card=move.card))
    ctx.emit(CardDiscarded(seat=seat, card=move.card))


def check_extra_dice(state: State, seat: Seat, move: PlayTwist) -> None:
    _require_none(target=move.target)
    if not extra_ok(state, seat):
        raise IllegalMove(
            "own_turn_only", f"{move.card} is played only on your own turn, outside the dice phase"
        )


def twist_extra_dice(ctx: Ctx, seat: Seat, move: PlayTwist) -> None:
    """TOF_EXTRADICE: +2 dice at the owner's next roll."""
    ctx.emit(ExtraDicePending(seat=seat))
    ctx.emit(CardDiscarded(seat=seat, card=move.card))


TWIST_EFFECTS = {
    "TOF_STRIKE": (check_strike, twist_strike),
    "TOF_ARMOR": (check_armor, twist_armor),
    "TOF_EXTRADICE": (check_extra_dice, twist_extra_dice),
}


# Damage --------------------------------------------------------------------
def declare_point(ctx: Ctx, by: Seat, source: str, target: str) -> Point:
    point = Point(by=by, source=source, owner=1 - by, target=target)
    ctx.emit(DamageDeclared(by=by, source=source, owner=point.owner, target=target))
    return point


def deal_point(ctx: Ctx, by: Seat, source: str, target: str) -> None:
    point = declare_point(ctx, by, source, target)
    open_window(ctx, DEFEND, point.owner, point)


def resolve_point(ctx: Ctx, point: Point) -> None:
    """Apply a point that left its defender window (§5.2)."""
    if point.cancelled:
        return
    owner = ctx.state.players[point.owner]
    if point.target == PILE:
        ctx.emit(CardBurned(seat=point.owner, card=owner.pile[0]))
        if not ctx.state.players[point.owner].pile:
            end_game(ctx, point.owner)
        return
    for dc in owner.display:
        if dc.card == point.target:
            damage = dc.damage + 1
            ctx.emit(DamageDealt(seat=point.owner, card=dc.card, damage=damage))
            hp = CARDS[dc.card].hp
            if hp is not None and damage >= hp:
                ctx.emit(CardDefeated(seat=point.owner, card=dc.card))
            return
    ctx.emit(DamageFizzled(owner=point.owner, target=point.target))


# Windows -------------------------------------------------------------------
def open_window(ctx: Ctx, kind: str, holder_seat: Seat, point: Point | None = None) -> None:
    """Open a window, or skip it (as if passed) when its holder has no legal Twist."""
    s = ctx.state
    if s.outcome is not None:
        return
    window = Window(kind=kind, holder=holder_seat, point=point)
    if s.always_offer_windows or has_twist(s, holder_seat, window):
        ctx.emit(WindowOpened(kind=kind, holder=holder_seat, point=point))
    elif point is not None:
        resolve_point(ctx, point)


def close_window(ctx: Ctx, window: Window, passed: bool) -> None:
    ctx.emit(WindowClosed(kind=window.kind, holder=window.holder, passed=passed))
    if window.point is not None:
        resolve_point(ctx, window.point)


def settle(ctx: Ctx) -> None:
    """Go on until somebody has a decision to make (or the game is over)."""
    while True:
        s = ctx.state
        if s.outcome is not None:
            return
        if s.windows:
            top = s.windows[-1]
            if s.always_offer_windows or has_twist(s, top.holder, top):
                return
            close_window(ctx, top, passed=False)
            continue
        if s.phase == ENDING:
            finish_turn(ctx)
        return


def pass_window(ctx: Ctx, seat: Seat) -> None:
    close_window(ctx, ctx.state.windows[-1], passed=True)  # TURN: only in a window
    settle(ctx)


# End of turn and game --------------------------------------------------------
def end_turn(ctx: Ctx, seat: Seat) -> None:
    ctx.emit(PhaseChanged(seat=seat, phase=ENDING))
    open_window(ctx, CP4, 1 - seat)
    settle(ctx)


def finish_turn(ctx: Ctx) -> None:
    """§4.4 steps 3-6, after CP4 has closed."""
    s = ctx.state
    if not s.spent_unit:
        take_wild(ctx, s.active)
    ctx.emit(TurnEnded(seat=s.active))
    ctx.emit(TurnStarted(seat=1 - s.active, turn=s.turn + 1))


def end_game(ctx: Ctx, emptied_by: Seat) -> None:
    totals = scores(ctx.state)
    tiebreak = totals[0] == totals[1]
    if tiebreak:
        winner = 1 - emptied_by
    else:
        winner = 0 if totals[0] > totals[1] else 1
    ctx.emit(
        GameEnded(
            reason="draw_pile_empty",
            emptied_by=emptied_by,
            scores=totals,
            winner=winner,
            tiebreak=tiebreak,
            ranks=(1, 2) if winner == 0 else (2, 1),
        )
    )
