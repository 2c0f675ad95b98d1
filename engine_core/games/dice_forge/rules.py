"""Dice Forge rules: legal moves, decide, and one small function per effect.

The turn is an explicit state machine (``state.flow`` + per-seat ``state.lanes``,
see ``state.py``). ``decide`` applies the move to its pending task, then
``advance`` works off every task that needs no decision (rolling dice, taking
cards, applying gains) until the agenda waits for input again; the resulting
agenda is written into one ``AgendaChanged`` event at the end.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from engine_core.errors import IllegalMove
from engine_core.flow import seats_from
from engine_core.games.dice_forge import data
from engine_core.games.dice_forge.data import (
    BOAR,
    CHOICE,
    FACES,
    NONE_FACE,
    SHIELD,
    SHIP,
    SIMPLE,
)
from engine_core.games.dice_forge.events import (
    AgendaChanged,
    CardTaken,
    DiceRolled,
    ExtraActionTaken,
    FaceBought,
    FaceForged,
    FacesApplied,
    FeatPerformed,
    GameEnded,
    GameStarted,
    GardenFaceTaken,
    HammerAdvanced,
    HammerTokenPlaced,
    HeroOusted,
    MirrorCopied,
    OfferingFinished,
    PawnMoved,
    ReinforcementsEnded,
    ReinforcementUsed,
    ResourcesGained,
    ResourcesLost,
    ResourcesSpent,
    RoundEnded,
    TokenGained,
    TokenUsed,
    TurnEnded,
    TurnStarted,
)
from engine_core.games.dice_forge.evolve import evolve
from engine_core.games.dice_forge.moves import (
    BuyFace,
    ChooseBoarBearer,
    ChooseMinorDie,
    ChooseMirror,
    ChooseOption,
    ChooseSatyrFaces,
    ChooseShield,
    EndReinforcements,
    EndTurn,
    FinishOffering,
    ForgeFace,
    OrderFaces,
    PerformFeat,
    ShipBuy,
    ShipPass,
    SplitGain,
    UseCerberus,
    UseReinforcement,
    UseTriton,
)
from engine_core.games.dice_forge.state import (
    Action,
    Bless,
    BlessAll,
    BlessSeat,
    BoarReward,
    CerberusOffer,
    ChooseBearer,
    EndOfTurn,
    Gain,
    Lose,
    MinorBless,
    Offering,
    PickMinorDie,
    PickSatyrs,
    PickShield,
    PlaceFace,
    Player,
    Reinforce,
    ShipOffer,
    ShipOrder,
    State,
    TakeCard,
)
from engine_core.rng import Rng
from engine_core.types import ranks_from_keys

_replace = msgspec.structs.replace


# =================================================================== queries
def caps(p: Player) -> tuple[int, int, int]:
    chests = p.cards.count("CHEST")
    g, s, m, _ = data.BASE_CAPS
    cg, cs, cm, _ = data.CHEST_CAPS
    return g + cg * chests, s + cs * chests, m + cm * chests


def hammer_capacity(p: Player) -> int:
    return p.hammers * data.HAMMER_TRACK - p.hammer_pos if p.hammers else 0


def up_face(p: Player, die: int) -> str:
    return p.dice[die][p.up[die]]


def score(state: State, seat: int) -> int:
    p = state.players[seat]
    return p.glory + sum(data.CARDS[c].glory for c in p.cards)


def boar_owner(state: State, colour: str) -> int | None:
    card = data.BOAR_FACE[colour]  # card ids equal face ids for boars
    for s, p in enumerate(state.players):
        if card in p.cards:
            return s
    return None


def mirror_targets(state: State, seat: int) -> tuple[str, ...]:
    """Faces a Mirror of ``seat`` may copy now (spec 5.5)."""
    opp: list[str] = []
    for s, p in enumerate(state.players):
        if s != seat:
            opp.append(up_face(p, 0))
            opp.append(up_face(p, 1))
    pool = opp
    if "MIRROR" in opp:
        me = state.players[seat]
        pool = [*opp, up_face(me, 0), up_face(me, 1)]
    return tuple(sorted({f for f in pool if f != "MIRROR"}))


def yielding(eff: tuple[str, ...]) -> list[tuple[int, int]]:
    """(face index, multiplier) of the faces of a blessing that give something."""
    if len(eff) == 1:
        return [] if eff[0] in (data.X3_ID, NONE_FACE) else [(0, 1)]
    a, b = eff
    if a == data.X3_ID and b == data.X3_ID:
        return []
    if a == data.X3_ID:
        return [] if b == NONE_FACE else [(1, 3)]
    if b == data.X3_ID:
        return [] if a == NONE_FACE else [(0, 3)]
    return [(i, 1) for i in (0, 1) if eff[i] != NONE_FACE]


def pick_options(face: str) -> tuple[str, ...]:
    f = FACES[face]
    if f.kind == CHOICE:
        return tuple(name for name, _ in f.options)
    if f.kind == BOAR:
        return data.BOAR_BEARER_OPTIONS
    return ()


def gives(face: str, pick: str, watched: int) -> bool:
    """Whether ``face`` (with its chosen option) yields resource ``watched`` (Shields)."""
    f = FACES.get(face)
    if f is None:
        return False
    if f.kind == SIMPLE:
        return f.gains[watched] > 0
    if f.kind == CHOICE:
        return bool(pick) and dict(f.options)[pick][watched] > 0
    if f.kind == BOAR:
        return bool(pick) and data.RES_INDEX[pick] == watched
    return False


def split_count(state: State, g: Gain) -> int:
    """How many ways a gain can be split (1 = no decision)."""
    p = state.players[g.seat]
    hmax = min(g.gold, hammer_capacity(p))
    if g.mod == "cyclops":
        gold_ways = sum(g.gold - h + 1 for h in range(hmax + 1))
    else:
        gold_ways = hmax + 1
    shard_ways = (g.sun + 1) * (g.moon + 1) if g.mod == "sentinel" else 1
    return gold_ways * shard_ways


# ---------------------------------------------------------------- blocking
# Task checks on hot paths compare exact types (tasks are never subclassed): a failed
# isinstance against a Struct class costs several times a set lookup.
_SENSITIVE = frozenset({ShipOrder, ShipOffer, PlaceFace})


def sensitive(task: object) -> bool:
    """Lane steps whose result depends on what seats earlier in the order did."""
    kind = type(task)
    return kind in _SENSITIVE or (kind is Bless and "MIRROR" in task.eff)


def blocked(lanes, order: Iterable[int], seat: int) -> bool:
    for s in order:
        if s == seat:
            return False
        if any(type(t) is not BoarReward for t in lanes[s]):
            return True
    return False


def seat_task(state: State, seat: int):
    """The pending task ``seat`` may answer now, or None."""
    if state.outcome is not None:
        return None
    lanes = state.lanes
    if any(lanes):
        lane = lanes[seat]
        if lane and not (sensitive(lane[0]) and blocked(lanes, state.lane_order, seat)):
            return lane[0]
        return None
    if state.flow and state.flow[0].seat == seat:
        return state.flow[0]
    return None


def awaiting(state: State) -> tuple[int, ...]:
    if state.outcome is not None:
        return ()
    lanes = state.lanes
    if any(lanes):
        return tuple(
            s
            for s in state.lane_order
            if lanes[s] and not (sensitive(lanes[s][0]) and blocked(lanes, state.lane_order, s))
        )
    return (state.flow[0].seat,) if state.flow else ()


# =================================================================== legal moves
def _buyable(state: State, gold: int, exclude: tuple[str, ...] = (), discount: int = 0):
    """The faces ``gold`` buys now, pool by pool (each face once), lazily."""
    for i, pool in enumerate(state.sanctuary):
        if not pool:
            continue
        cost = max(0, data.SANCTUARY[i].cost - discount)
        if cost > gold:
            continue
        for f in dict.fromkeys(pool):
            if f not in exclude:
                yield f


def can_buy(state: State, face: str, gold: int, exclude: tuple[str, ...] = (), discount: int = 0):
    """Whether ``face`` is among ``_buyable(state, gold, exclude, discount)``."""
    i = data.POOL_OF_FACE.get(face) if isinstance(face, str) else None
    return (
        i is not None
        and face in state.sanctuary[i]
        and max(0, data.SANCTUARY[i].cost - discount) <= gold
        and face not in exclude
    )


def _feats(state: State, p: Player, extra_sun: int):
    """The feats ``p`` can afford now (``extra_sun`` on top for an extra action), lazily."""
    for i, slot in enumerate(data.SLOTS):
        if state.stacks[i] and p.sun >= slot.sun + extra_sun and p.moon >= slot.moon:
            yield PerformFeat(slot=slot.id)


def can_perform(state: State, p: Player, slot_id: str, extra_sun: int) -> bool:
    """Whether ``PerformFeat(slot=slot_id)`` is among ``_feats(state, p, extra_sun)``."""
    i = data.SLOT_INDEX.get(slot_id) if isinstance(slot_id, str) else None
    if i is None:
        return False
    slot = data.SLOTS[i]
    return bool(state.stacks[i]) and p.sun >= slot.sun + extra_sun and p.moon >= slot.moon


def task_moves(state: State, task) -> list:
    """The moves that answer ``task`` (without Triton), the passive one first."""
    seat = task.seat
    p = state.players[seat]
    match task:  # the most frequent first
        case Action():
            moves = [EndTurn()]
            if _no_extra(p, task):
                return moves
            moves += [BuyFace(face=f) for f in _buyable(state, p.gold)]
            moves += _feats(state, p, _extra_sun(task))
            return moves
        case PlaceFace():
            return [
                ForgeFace(die=d, slot=s)
                for d in (0, 1)
                for s in range(6)
                if FACES[p.dice[d][s]].kind != BOAR
            ]
        case Gain():
            return _split_moves(state, task)
        case Reinforce():
            moves: list = [EndReinforcements()]
            for i, c in enumerate(p.cards):
                if i in task.used:
                    continue
                if c == "HIND":
                    moves += [UseReinforcement(card=i, option=o) for o in data.DIE_NAMES]
                elif c == "OWL":
                    moves += [UseReinforcement(card=i, option=o) for o in data.OWL_OPTIONS]
                elif c == "ELDER" and p.gold >= data.ELDER_GOLD:
                    moves.append(UseReinforcement(card=i, option=""))
            return moves
        case Offering():
            return [FinishOffering()] + [
                BuyFace(face=f) for f in _buyable(state, p.gold, exclude=task.bought)
            ]
        case Bless():
            if "MIRROR" in task.eff:
                return [ChooseMirror(face=f) for f in mirror_targets(state, seat)]
            for i, _ in yielding(task.eff):
                if not task.picks[i]:
                    opts = pick_options(task.eff[i])
                    if opts:
                        return [ChooseOption(option=o) for o in opts]
            return []
        case BoarReward():
            return [ChooseOption(option=o) for o in data.BOAR_OWNER_OPTIONS]
        case CerberusOffer():
            return [UseCerberus(use=False), UseCerberus(use=True)]
        case ShipOrder():
            return [OrderFaces(ship_first=False), OrderFaces(ship_first=True)]
        case ShipOffer():
            return [ShipPass()] + [
                ShipBuy(face=f) for f in _buyable(state, p.gold, discount=task.discount)
            ]
        case ChooseBearer():
            return [ChooseBoarBearer(seat=s) for s in range(len(state.players)) if s != seat]
        case PickShield():
            return [ChooseShield(face=f) for f in dict.fromkeys(state.gardens[3])]
        case PickSatyrs():
            dice = [(s, d) for s in range(len(state.players)) if s != seat for d in (0, 1)]
            return [
                ChooseSatyrFaces(first=a, second=b)
                for i, a in enumerate(dice)
                for b in dice[i + 1 :]
            ]
        case PickMinorDie():
            return [ChooseMinorDie(die=0), ChooseMinorDie(die=1)]
        case _:
            return []


def _split_moves(state: State, g: Gain) -> list[SplitGain]:
    p = state.players[g.seat]
    hmax = min(g.gold, hammer_capacity(p))
    cyc = g.mod == "cyclops"
    sen = g.mod == "sentinel"
    out = []
    for h in range(hmax + 1):
        for gg in range(g.gold - h + 1) if cyc else (0,):
            for sg in range(g.sun + 1) if sen else (0,):
                for mg in range(g.moon + 1) if sen else (0,):
                    out.append(SplitGain(hammer=h, gold_glory=gg, sun_glory=sg, moon_glory=mg))
    return out


def legal_moves(state: State, seat: int) -> tuple:
    task = seat_task(state, seat)
    if task is None:
        return ()
    moves = task_moves(state, task)
    if seat == state.active and state.players[seat].triton > 0:
        moves = [*moves, *(UseTriton(option=o) for o in data.TRITON_OPTIONS)]
    return tuple(moves)


def answers(state: State, seat: int, task, move) -> bool:
    """Whether ``move`` is in ``legal_moves(state, seat)`` (``task`` is the seat's task),
    checked without listing every move for the tasks that come up most often. Types are
    compared exactly, as move equality does (and tasks are never subclassed)."""
    kind = type(move)
    if kind is UseTriton:
        return (
            seat == state.active
            and state.players[seat].triton > 0
            and move.option in tuple(data.TRITON_OPTIONS)
        )
    p = state.players[task.seat]
    task_kind = type(task)
    if task_kind is PlaceFace and kind is ForgeFace:
        d, s = move.die, move.slot
        return d in (0, 1) and s in range(6) and FACES[p.dice[d][s]].kind != BOAR
    if task_kind is Action:
        if kind is BuyFace:
            return not _no_extra(p, task) and can_buy(state, move.face, p.gold)
        if kind is PerformFeat:
            return not _no_extra(p, task) and can_perform(state, p, move.slot, _extra_sun(task))
        return kind is EndTurn
    if task_kind is Offering:
        if kind is BuyFace:
            return can_buy(state, move.face, p.gold, exclude=task.bought)
        return kind is FinishOffering
    if task_kind is Gain:
        if kind is not SplitGain:
            return False
        h, gg, sg, mg = move.hammer, move.gold_glory, move.sun_glory, move.moon_glory
        cyc, sen = task.mod == "cyclops", task.mod == "sentinel"
        return (
            h in range(min(task.gold, hammer_capacity(p)) + 1)
            and (gg in range(task.gold - h + 1) if cyc else gg == 0)
            and (sg in range(task.sun + 1) if sen else sg == 0)
            and (mg in range(task.moon + 1) if sen else mg == 0)
        )
    if task_kind is Reinforce:
        if kind is UseReinforcement:
            return _reinforcement_ok(p, task, move.card, move.option)
        return kind is EndReinforcements
    return move in task_moves(state, task)


def _reinforcement_ok(p: Player, task: Reinforce, i: int, option: str) -> bool:
    if i not in range(len(p.cards)) or i in task.used:
        return False
    card = p.cards[i]
    if card == "HIND":
        return option in data.DIE_NAMES
    if card == "OWL":
        return option in tuple(data.OWL_OPTIONS)
    return card == "ELDER" and p.gold >= data.ELDER_GOLD and option == ""


def has_choice(state: State, task: Reinforce | Action | Offering) -> bool:
    """Whether ``task_moves(state, task)`` offers more than the passive move."""
    p = state.players[task.seat]
    match task:
        case Reinforce():
            return any(
                c in ("HIND", "OWL") or (c == "ELDER" and p.gold >= data.ELDER_GOLD)
                for i, c in enumerate(p.cards)
                if i not in task.used
            )
        case Action():
            if _no_extra(p, task):
                return False
            return _any(_buyable(state, p.gold)) or _any(_feats(state, p, _extra_sun(task)))
        case Offering():
            return _any(_buyable(state, p.gold, exclude=task.bought))


def _no_extra(p: Player, task: Action) -> bool:
    """An extra action the player cannot pay for: only ``EndTurn``."""
    return task.extra and p.sun < data.EXTRA_ACTION_SUN


def _extra_sun(task: Action) -> int:
    return data.EXTRA_ACTION_SUN if task.extra else 0


def _any(items) -> bool:
    return next(iter(items), None) is not None


# =================================================================== the context
class Ctx:
    """A decision in progress: the state evolved event by event, and the agenda."""

    __slots__ = ("events", "flow", "lanes", "order", "rng", "start", "state")

    def __init__(self, state: State, rng: Rng) -> None:
        self.start = state
        self.state = state
        self.events: list = []
        self.lanes = [list(lane) for lane in state.lanes]
        self.order = state.lane_order
        self.flow = list(state.flow)
        self.rng = rng

    def emit(self, event) -> None:
        self.events.append(event)
        self.state = evolve(self.state, event)

    @property
    def n(self) -> int:
        return len(self.state.players)

    def player(self, seat: int) -> Player:
        return self.state.players[seat]

    def lane_push(self, seat: int, tasks: list, front: bool = True) -> None:
        if not any(self.lanes):
            self.order = seats_from(self.state.active, self.n)
        if front:
            self.lanes[seat][0:0] = tasks
        else:
            self.lanes[seat].extend(tasks)

    def finish(self) -> list:
        lanes = tuple(tuple(lane) for lane in self.lanes)
        order = self.order if any(lanes) else ()
        flow = tuple(self.flow)
        s = self.start
        if (lanes, order, flow) != (s.lanes, s.lane_order, s.flow) or not self.events:
            self.emit(AgendaChanged(lanes=lanes, lane_order=order, flow=flow))
        return self.events


# =================================================================== effects
def gain(ctx: Ctx, seat: int, vec, source: str) -> None:
    """Add resources with caps; the excess is lost."""
    gold, sun, moon, glory = vec
    p = ctx.player(seat)
    cg, cs, cm = caps(p)
    tg, ts, tm = min(gold, cg - p.gold), min(sun, cs - p.sun), min(moon, cm - p.moon)
    tg, ts, tm = max(tg, 0), max(ts, 0), max(tm, 0)
    if gold or sun or moon or glory:
        ctx.emit(
            ResourcesGained(
                seat=seat, gold=tg, sun=ts, moon=tm, glory=glory,
                lost_gold=gold - tg, lost_sun=sun - ts, lost_moon=moon - tm, source=source,
            )
        )  # fmt: skip


def lose(ctx: Ctx, seat: int, vec, source: str) -> None:
    """Minotaur losses: stop at 0, never touch the Hammer track."""
    p = ctx.player(seat)
    g, s, m, v = (min(a, b) for a, b in zip(vec, (p.gold, p.sun, p.moon, p.glory), strict=True))
    if g or s or m or v:
        ctx.emit(ResourcesLost(seat=seat, gold=g, sun=s, moon=m, glory=v, source=source))


def advance_hammer(ctx: Ctx, seat: int, spaces: int) -> None:
    p = ctx.player(seat)
    pos, rem, glory, done = p.hammer_pos, spaces, 0, 0
    while rem > 0 and done < p.hammers:
        step = min(rem, data.HAMMER_TRACK - pos)
        new = pos + step
        if pos < data.HAMMER_PHASE <= new:
            glory += data.HAMMER_PHASE_GLORY[0]
        if new == data.HAMMER_TRACK:
            glory += data.HAMMER_PHASE_GLORY[1]
            done += 1
            pos = 0
        else:
            pos = new
        rem -= step
    ctx.emit(HammerAdvanced(seat=seat, spaces=spaces, position=pos, completed=done, glory=glory))


def apply_split(ctx: Ctx, g: Gain, h: int, gg: int, sg: int, mg: int) -> None:
    if h:
        advance_hammer(ctx, g.seat, h)
    glory = g.glory + gg * data.CYCLOPS_GLORY_PER_GOLD + (sg + mg) * data.SENTINEL_GLORY_PER_SHARD
    gain(ctx, g.seat, (g.gold - h - gg, g.sun - sg, g.moon - mg, glory), g.source)


def roll(ctx: Ctx, seat: int, dice: tuple[int, ...], reason: str) -> tuple[str, ...]:
    p = ctx.player(seat)
    slots = tuple(ctx.rng.below(6) for _ in dice)
    faces = tuple(p.dice[d][s] for d, s in zip(dice, slots, strict=True))
    ctx.emit(DiceRolled(seat=seat, dice=dice, slots=slots, faces=faces, reason=reason))
    return faces


def new_bless(seat: int, faces: tuple[str, ...], kind: str, mod: str = "", cerberus: bool = False):
    return Bless(
        seat=seat, faces=faces, kind=kind, mod=mod, cerberus=cerberus, eff=faces,
        picks=("",) * len(faces),
    )  # fmt: skip


def divine_blessing(ctx: Ctx, seat: int, reason: str, mod: str = "") -> None:
    faces = roll(ctx, seat, (0, 1), reason)
    ctx.lane_push(seat, [new_bless(seat, faces, "divine", mod, cerberus=True)], front=False)


def take_garden_face(ctx: Ctx, seat: int, face: str, forger: int) -> None:
    pool = data.GARDEN_OF_FACE[face]
    if face in ctx.state.gardens[pool]:
        ctx.emit(GardenFaceTaken(seat=forger, face=face, pool=data.GARDENS[pool].id))
        ctx.flow.insert(0, PlaceFace(seat=forger, face=face))


def buy(ctx: Ctx, seat: int, face: str, discount: int = 0) -> None:
    pool = data.POOL_OF_FACE[face]
    cost = max(0, data.SANCTUARY[pool].cost - discount)
    ctx.emit(FaceBought(seat=seat, face=face, pool=data.SANCTUARY[pool].id, cost=cost))


# ---------------------------------------------------------------- blessings
def step_bless(ctx: Ctx, seat: int, t: Bless) -> bool:
    """Resolve what needs no decision; False if the blessing waits for one."""
    eff = list(t.eff)
    changed = False
    for i, f in enumerate(eff):
        if f == "MIRROR":
            targets = mirror_targets(ctx.state, seat)
            if len(targets) >= 2:
                if changed:
                    ctx.lanes[seat][0] = _replace(t, eff=tuple(eff))
                return changed
            eff[i] = targets[0] if targets else NONE_FACE
            if targets:
                ctx.emit(MirrorCopied(seat=seat, face=eff[i]))
            changed = True
    if changed:
        t = _replace(t, eff=tuple(eff))
    for i, _ in yielding(t.eff):
        if pick_options(t.eff[i]) and not t.picks[i]:
            if changed:
                ctx.lanes[seat][0] = t
            return changed
    expand_bless(ctx, seat, t)
    return True


def expand_bless(ctx: Ctx, seat: int, t: Bless) -> None:
    """Turn a fully chosen blessing into gains, ships, Boar rewards and Cerberus."""
    ctx.lanes[seat].pop(0)
    eff = t.eff
    ctx.emit(FacesApplied(seat=seat, faces=eff, options=t.picks, kind=t.kind))
    loss = t.kind == "minotaur"
    total = [0, 0, 0, 0]
    ships: list = []
    rewards: list[str] = []
    for i, mult in yielding(eff):
        f = FACES[eff[i]]
        pick = t.picks[i]
        vec = data.ZERO
        if f.kind == SIMPLE:
            vec = f.gains
        elif f.kind == CHOICE:
            vec = dict(f.options)[pick]
        elif f.kind == BOAR:
            vec = (0, 1, 0, 0) if pick == "sun" else (0, 0, 1, 0)
            rewards += [f.colour] * mult
        elif f.kind == SHIELD:
            other = eff[1 - i] if len(eff) == 2 else None
            if (
                other is not None
                and FACES.get(other, f).kind != SHIELD
                and gives(other, t.picks[1 - i], f.watched)
            ):
                vec = (0, 0, 0, data.SHIELD_HIT_GLORY)
            else:
                vec = f.fallback
        elif f.kind == SHIP and not loss:
            disc = data.SHIP_DISCOUNT_X3 if mult == 3 else data.SHIP_DISCOUNT
            ships.append(ShipOffer(seat=seat, discount=disc))
        for k in range(4):
            total[k] += vec[k] * mult
    tasks: list = []
    if loss:
        if any(total):
            tasks.append(Lose(seat=seat, gold=total[0], sun=total[1], moon=total[2],
                              glory=total[3]))  # fmt: skip
    else:
        g = None
        if any(total):
            g = Gain(seat=seat, gold=total[0], sun=total[1], moon=total[2], glory=total[3],
                     mod=t.mod, source=t.kind)  # fmt: skip
        if ships and g is not None and g.gold > 0:
            tasks = [ShipOrder(seat=seat, span=1 + len(ships)), g, *ships]
        else:
            tasks = ([g] if g is not None else []) + ships
    for colour in rewards:
        owner = boar_owner(ctx.state, colour)
        if owner == seat:
            tasks.append(BoarReward(seat=seat, colour=colour))
        elif owner is not None:
            ctx.lanes[owner].append(BoarReward(seat=owner, colour=colour))
    if t.cerberus:
        tasks.append(CerberusOffer(seat=seat, faces=t.faces, kind=t.kind, mod=t.mod))
    ctx.lanes[seat][0:0] = tasks


def step_lane(ctx: Ctx, seat: int, head) -> bool:
    """Work off ``head`` if it needs no decision; False if it waits for one."""
    match head:
        case Bless():
            return step_bless(ctx, seat, head)
        case Gain():
            if split_count(ctx.state, head) > 1:
                return False
            ctx.lanes[seat].pop(0)
            apply_split(ctx, head, 0, 0, 0, 0)
            return True
        case Lose():
            ctx.lanes[seat].pop(0)
            lose(ctx, seat, (head.gold, head.sun, head.moon, head.glory), "minotaur")
            return True
        case CerberusOffer():
            if ctx.player(seat).cerberus > 0:
                return False
            ctx.lanes[seat].pop(0)
            return True
        case ShipOffer():
            p = ctx.player(seat)
            if _any(_buyable(ctx.state, p.gold, discount=head.discount)) or (
                seat == ctx.state.active and p.triton > 0
            ):
                return False
            ctx.lanes[seat].pop(0)
            return True
        case _:
            return False


# ---------------------------------------------------------------- the turn
def turn_flow(seat: int, players: int) -> list:
    blessings = 2 if players == 2 else 1
    return [
        *(BlessAll(seat=seat) for _ in range(blessings)),
        Reinforce(seat=seat),
        Action(seat=seat, extra=False),
        Action(seat=seat, extra=True),
        EndOfTurn(seat=seat),
    ]


def end_turn(ctx: Ctx) -> None:
    st = ctx.state
    ctx.emit(TurnEnded(seat=st.active))
    rnd = st.round
    if st.active == ctx.n - 1:
        ctx.emit(RoundEnded(round=rnd))
        if rnd >= st.rounds:
            scores = [score(st, s) for s in range(ctx.n)]
            ranks = ranks_from_keys([(sc,) for sc in scores])
            ctx.emit(GameEnded(ranks=ranks, scores=tuple(float(s) for s in scores),
                               reason="rounds_completed"))  # fmt: skip
            ctx.flow = []
            return
        rnd += 1
    nxt = (st.active + 1) % ctx.n
    ctx.emit(TurnStarted(seat=nxt, round=rnd))
    ctx.flow = turn_flow(nxt, ctx.n)


def pass_action(ctx: Ctx) -> None:
    head = ctx.flow.pop(0)
    if not head.extra and ctx.flow and isinstance(ctx.flow[0], Action):
        ctx.flow.pop(0)


def step_flow(ctx: Ctx, head) -> bool:
    """Work off the flow head if it needs no decision; False if it waits for one."""
    seat = head.seat
    match head:  # the most frequent first
        case Action() | Offering() | Reinforce():
            if has_choice(ctx.state, head) or ctx.player(seat).triton > 0:
                return False
            if isinstance(head, Reinforce):
                ctx.flow.pop(0)
            elif isinstance(head, Offering):
                ctx.flow.pop(0)
                ctx.emit(OfferingFinished(seat=seat))
            else:
                pass_action(ctx)
            return True
        case BlessAll():
            ctx.flow.pop(0)
            ctx.order = seats_from(seat, ctx.n)
            for s in ctx.order:
                divine_blessing(ctx, s, "blessing")
            return True
        case EndOfTurn():
            ctx.flow.pop(0)
            end_turn(ctx)
            return True
        case TakeCard():
            ctx.flow.pop(0)
            take_card(ctx, seat, head.slot)
            return True
        case BlessSeat():
            ctx.flow.pop(0)
            divine_blessing(ctx, seat, "blessing", head.mod)
            return True
        case MinorBless():
            ctx.flow.pop(0)
            faces = roll(ctx, seat, (head.die,), "minor")
            ctx.lane_push(seat, [new_bless(seat, faces, "minor", head.mod, cerberus=True)])
            return True
        case _:
            return False


def advance(ctx: Ctx) -> None:
    while ctx.state.outcome is None:
        if any(ctx.lanes):
            progressed = False
            for seat in ctx.order:
                lane = ctx.lanes[seat]
                while lane:
                    head = lane[0]
                    if sensitive(head) and blocked(ctx.lanes, ctx.order, seat):
                        break
                    if not step_lane(ctx, seat, head):
                        break
                    progressed = True
            if not progressed:
                return
            continue
        if not ctx.flow or not step_flow(ctx, ctx.flow[0]):
            return


# ---------------------------------------------------------------- feats
def perform_feat(ctx: Ctx, seat: int, slot_id: str) -> None:
    idx = data.SLOT_INDEX[slot_id]
    slot = data.SLOTS[idx]
    card = ctx.state.stacks[idx][0]
    ctx.emit(FeatPerformed(seat=seat, slot=slot_id, card=card, sun=slot.sun, moon=slot.moon))
    me = ctx.player(seat)
    if me.pawn != slot.island:
        occupant = next(
            (s for s, p in enumerate(ctx.state.players) if s != seat and p.pawn == slot.island),
            None,
        )
        ctx.emit(PawnMoved(seat=seat, island=slot.island))
        if occupant is not None:
            oust(ctx, seat, occupant)
    ctx.flow.insert(0, TakeCard(seat=seat, slot=idx))


def oust(ctx: Ctx, seat: int, occupant: int) -> None:
    ctx.emit(HeroOusted(seat=occupant, by=seat))
    for s in (seat, occupant):
        bears = ctx.player(s).cards.count("BEAR")
        if bears:
            gain(ctx, s, (0, 0, 0, data.BEAR_GLORY * bears), "bear")
    divine_blessing(ctx, occupant, "ousted")


def take_card(ctx: Ctx, seat: int, idx: int) -> None:
    """Step 3 of a feat: take the top card and resolve its immediate effect (5.10)."""
    slot = data.SLOTS[idx]
    card = ctx.state.stacks[idx][0]
    ctx.emit(CardTaken(seat=seat, slot=slot.id, card=card))
    effect = CARD_EFFECTS.get(card)
    if effect is not None:
        effect(ctx, seat, card)


def effect_hammer(ctx: Ctx, seat: int, card: str) -> None:
    ctx.emit(HammerTokenPlaced(seat=seat))


def effect_token(ctx: Ctx, seat: int, card: str) -> None:
    """Cerberus, Triton: a single-use token."""
    ctx.emit(TokenGained(seat=seat, token=card.lower()))


def effect_satyrs(ctx: Ctx, seat: int, card: str) -> None:
    n = ctx.n
    for s in seats_from((seat + 1) % n, n)[:-1]:
        roll(ctx, s, (0, 1), "satyrs")
    ctx.flow.insert(0, PickSatyrs(seat=seat))


def effect_boar(ctx: Ctx, seat: int, card: str) -> None:
    ctx.flow.insert(0, ChooseBearer(seat=seat, colour=data.BOAR_CARD_COLOUR[card]))


def effect_garden_face(ctx: Ctx, seat: int, card: str) -> None:
    """Helmet, Mirror of the Abyss, Celestial Ship: forge their Garden face now."""
    take_garden_face(ctx, seat, GARDEN_FACE_OF_CARD[card], seat)


def effect_shield(ctx: Ctx, seat: int, card: str) -> None:
    if ctx.state.gardens[data.GARDEN_OF_FACE["SHIELD_SUN"]]:
        ctx.flow.insert(0, PickShield(seat=seat))


def effect_two_blessings(ctx: Ctx, seat: int, card: str) -> None:
    """Cancer, Sentinel: two divine blessings, the second after the first."""
    mod = "sentinel" if card == "SENTINEL" else ""
    ctx.flow[0:0] = [BlessSeat(seat=seat, mod=mod), BlessSeat(seat=seat, mod=mod)]


def effect_typhon(ctx: Ctx, seat: int, card: str) -> None:
    gain(ctx, seat, (0, 0, 0, len(ctx.player(seat).discard)), "typhon")


def effect_minor_blessings(ctx: Ctx, seat: int, card: str) -> None:
    """Sphinx, Cyclops: choose a die, then four minor blessings with it."""
    ctx.flow.insert(0, PickMinorDie(seat=seat, mod="cyclops" if card == "CYCLOPS" else ""))


def effect_minotaur(ctx: Ctx, seat: int, card: str) -> None:
    """Every other player rolls, then each resolves the faces as losses."""
    n = ctx.n
    order = seats_from((seat + 1) % n, n)
    rolled = [(s, roll(ctx, s, (0, 1), "minotaur")) for s in order[:-1]]
    ctx.order = order
    for s, faces in rolled:
        ctx.lanes[s].append(new_bless(s, faces, "minotaur"))


def effect_wild_spirits(ctx: Ctx, seat: int, card: str) -> None:
    ctx.lane_push(seat, [Gain(seat=seat, gold=3, moon=3, source="wild_spirits")])


GARDEN_FACE_OF_CARD = {"HELMET": "X3", "MIRROR_CARD": "MIRROR", "SHIP_CARD": "SHIP"}
CARD_EFFECTS = {
    "HAMMER": effect_hammer,
    "CERBERUS": effect_token,
    "TRITON": effect_token,
    "SATYRS": effect_satyrs,
    **dict.fromkeys(data.BOAR_CARD_COLOUR, effect_boar),
    "HELMET": effect_garden_face,
    "MIRROR_CARD": effect_garden_face,
    "SHIP_CARD": effect_garden_face,
    "SHIELD_CARD": effect_shield,
    "CANCER": effect_two_blessings,
    "SENTINEL": effect_two_blessings,
    "TYPHON": effect_typhon,
    "SPHINX": effect_minor_blessings,
    "CYCLOPS": effect_minor_blessings,
    "MINOTAUR": effect_minotaur,
    "WILD_SPIRITS": effect_wild_spirits,
}
"""Immediate effects by card id. Chest (capacities), Bear, Hind, Owl, Elder (later
effects) and Ferryman, Gorgon, Hydra (glory only) have none."""


# =================================================================== decide
def apply_move(ctx: Ctx, seat: int, task, move) -> None:
    """Apply a legal ``move`` answering ``task``."""
    match move:  # the most frequent moves first: a match tries its cases in order
        case ForgeFace(die=d, slot=s):
            if any(ctx.start.lanes):
                ctx.lanes[seat].pop(0)
            else:
                ctx.flow.pop(0)
            old = ctx.player(seat).dice[d][s]
            ctx.emit(FaceForged(seat=seat, die=d, slot=s, face=task.face, replaced=old))
        case BuyFace(face=face):
            bought: tuple[str, ...] = ()
            if isinstance(task, Offering):
                bought = task.bought
            elif task.extra:
                ctx.emit(ExtraActionTaken(seat=seat, sun=data.EXTRA_ACTION_SUN))
            buy(ctx, seat, face)
            ctx.flow[0:1] = [PlaceFace(seat=seat, face=face),
                             Offering(seat=seat, bought=(*bought, face))]  # fmt: skip
        case SplitGain(hammer=h, gold_glory=gg, sun_glory=sg, moon_glory=mg):
            ctx.lanes[seat].pop(0)
            apply_split(ctx, task, h, gg, sg, mg)
        case PerformFeat(slot=slot):
            if task.extra:
                ctx.emit(ExtraActionTaken(seat=seat, sun=data.EXTRA_ACTION_SUN))
            ctx.flow.pop(0)
            perform_feat(ctx, seat, slot)
        case UseReinforcement(card=i, option=o):
            card = ctx.player(seat).cards[i]
            ctx.flow[0] = _replace(task, used=(*task.used, i))
            ctx.emit(ReinforcementUsed(seat=seat, card=i, card_id=card, option=o))
            if card == "HIND":
                faces = roll(ctx, seat, (data.DIE_NAMES.index(o),), "minor")
                ctx.lane_push(seat, [new_bless(seat, faces, "minor", cerberus=True)])
            elif card == "OWL":
                g, s, m, v = data.OWL_OPTIONS[o]
                ctx.lane_push(seat, [Gain(seat=seat, gold=g, sun=s, moon=m, source="owl")])
            else:
                ctx.emit(ResourcesSpent(seat=seat, gold=data.ELDER_GOLD, reason="elder"))
                gain(ctx, seat, (0, 0, 0, data.ELDER_GLORY), "elder")
        case ChooseOption(option=o):
            if isinstance(task, BoarReward):
                ctx.lanes[seat].pop(0)
                gain(ctx, seat, data.BOAR_OWNER_OPTIONS[o], "boar")
            else:
                picks = list(task.picks)
                i = next(
                    i for i, _ in yielding(task.eff)
                    if pick_options(task.eff[i]) and not picks[i]
                )  # fmt: skip
                picks[i] = o
                ctx.lanes[seat][0] = _replace(task, picks=tuple(picks))
        case EndReinforcements():
            ctx.flow.pop(0)
            ctx.emit(ReinforcementsEnded(seat=seat))
        case EndTurn():
            pass_action(ctx)
        case FinishOffering():
            ctx.flow.pop(0)
            ctx.emit(OfferingFinished(seat=seat))
        case ChooseSatyrFaces(first=a, second=b):
            ctx.flow.pop(0)
            pl = ctx.state.players
            faces = (up_face(pl[a[0]], a[1]), up_face(pl[b[0]], b[1]))
            ctx.lane_push(seat, [new_bless(seat, faces, "satyrs")])
        case ChooseMirror(face=face):
            eff = list(task.eff)
            eff[eff.index("MIRROR")] = face
            ctx.emit(MirrorCopied(seat=seat, face=face))
            ctx.lanes[seat][0] = _replace(task, eff=tuple(eff))
        case ChooseMinorDie(die=d):
            ctx.flow.pop(0)
            ctx.flow[0:0] = [MinorBless(seat=seat, die=d, mod=task.mod) for _ in range(4)]
        case UseTriton(option=o):
            ctx.emit(TokenUsed(seat=seat, token="triton"))
            g, s, m, v = data.TRITON_OPTIONS[o]
            ctx.lane_push(seat, [Gain(seat=seat, gold=g, sun=s, moon=m, glory=v, source="triton")])
        case OrderFaces(ship_first=first):
            lane = ctx.lanes[seat]
            lane.pop(0)
            if first:
                span = lane[: task.span]
                gains = [t for t in span if isinstance(t, Gain)]
                ships = [t for t in span if not isinstance(t, Gain)]
                lane[: task.span] = ships + gains
        case ShipBuy(face=face):
            buy(ctx, seat, face, task.discount)
            ctx.lanes[seat][0] = PlaceFace(seat=seat, face=face)
        case ShipPass():
            ctx.lanes[seat].pop(0)
        case UseCerberus(use=use):
            ctx.lanes[seat].pop(0)
            if use:
                ctx.emit(TokenUsed(seat=seat, token="cerberus"))
                ctx.lanes[seat].insert(0, new_bless(seat, task.faces, task.kind, task.mod))
        case ChooseBoarBearer(seat=bearer):
            ctx.flow.pop(0)
            take_garden_face(ctx, seat, data.BOAR_FACE[task.colour], bearer)
        case ChooseShield(face=face):
            ctx.flow.pop(0)
            take_garden_face(ctx, seat, face, seat)
        case _:
            raise IllegalMove("unknown_move", f"{move!r}")


def decide(state: State, seat: int, move, rng: Rng) -> list:
    task = seat_task(state, seat)
    if task is None:
        raise IllegalMove("nothing_pending", f"seat {seat} has no decision pending")
    if not answers(state, seat, task, move):
        raise IllegalMove(
            "not_legal",
            f"{move!r} does not answer the pending {type(task).__name__} now",
        )
    ctx = Ctx(state, rng)
    apply_move(ctx, seat, task, move)
    advance(ctx)
    return ctx.finish()


def setup(players: int, cards: tuple[str, ...], rng: Rng) -> list:
    """The events that start a match (cards per slot already chosen)."""
    sanctuary = []
    removed: list[str] = []
    for pool in data.SANCTUARY:
        faces = list(pool.faces)
        if players == 2:
            for _ in range(2):
                removed.append(faces.pop(rng.below(len(faces))))
        sanctuary.append(tuple(faces))
    start = GameStarted(
        players=players,
        rounds=data.ROUNDS[players],
        cards=cards,
        sanctuary=tuple(sanctuary),
        removed=tuple(removed),
        gold=data.STARTING_GOLD[:players],
    )
    state = evolve(None, start)
    ctx = Ctx(state, rng)
    ctx.events.append(start)
    ctx.emit(TurnStarted(seat=0, round=1))
    ctx.flow = turn_flow(0, players)
    advance(ctx)
    return ctx.finish()
