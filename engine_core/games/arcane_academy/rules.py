"""Arcane Academy's rules: legal moves, decide, one small function per effect.

``decide`` checks a move against ``legal_moves`` (so the two can never
disagree), explains a rejection with a specific reason code, then runs the
move's handler. Handlers emit events through ``Turn``, which folds each event
as it is emitted, so later steps of the same move see the updated state.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec
from msgspec.structs import asdict

from engine_core.errors import IllegalMove, MalformedMove
from engine_core.flow import Phase, Phases, seats_from
from engine_core.games.arcane_academy import data
from engine_core.games.arcane_academy.events import (
    ArcaneEvent,
    AssignmentCompleted,
    BagShuffled,
    CardDiscarded,
    CardDrawn,
    CardRevealed,
    CastFinished,
    DeckEmptied,
    DeckShuffled,
    EffectEnded,
    EffectPending,
    ExtraTurnCancelled,
    ExtraTurnGranted,
    GameEnded,
    GameStarted,
    ItemUsed,
    LinkedTileStarted,
    PartPerformed,
    PartSkipped,
    PencilsDown,
    PrestigeTokenAdded,
    ResourcesSpent,
    Rested,
    ShardsCollected,
    TileActivated,
    TileDrawn,
    TilePlaced,
    TileResolved,
    TileTaken,
    TokensRemoved,
    TurnStarted,
    WillGained,
)
from engine_core.games.arcane_academy.evolve import evolve
from engine_core.games.arcane_academy.moves import (
    ArcaneMove,
    Cast,
    CollectShards,
    CompleteAssignment,
    DeclineEffect,
    FinishCast,
    GainWill,
    PlaceTile,
    RemoveToken,
    ResolveLinked,
    Rest,
    SkipPart,
    TakeTile,
    UseItem,
)
from engine_core.games.arcane_academy.state import Player, Space, State
from engine_core.rng import Rng
from engine_core.types import Outcome, Seat, ranks_from_keys

PHASES = Phases(
    Phase("turn_start", frozenset({"cast", "rest"})),
    Phase(
        "resolving",
        frozenset(
            {
                "collect_shards",
                "gain_will",
                "take_tile",
                "use_item",
                "complete_assignment",
                "skip_part",
                "remove_token",
                "decline_effect",
            }
        ),
        next="choose_linked",
    ),
    Phase("choose_linked", frozenset({"resolve_linked", "finish_cast"}), next="resolving"),
    Phase("place_tiles", frozenset({"place_tile"}), next="end_of_turn"),
    Phase("end_of_turn", frozenset()),
    Phase("setup", frozenset()),
    Phase("over", frozenset()),
)


# ==================================================================== queries
def top(space: Space) -> str | None:
    return space.stack[-1] if space.stack else None


def connectors(space: Space) -> int:
    if not space.stack:
        return 0
    return data.CONNECTORS[space.stack[-1]][space.rotations[-1]]


def linked_set(slate: tuple[Space, ...], origin: int) -> tuple[int, ...]:
    """§4.1 step 2: neighbours with a tile, both half-connectors, no token."""
    mine = connectors(slate[origin])
    out = []
    for edge, j in data.NEIGHBOURS[origin]:
        q = slate[j]
        if mine & edge and q.stack and not q.exhausted and connectors(q) & data.OPPOSITE[edge]:
            out.append(j)
    return tuple(out)


def exhausted_spaces(p: Player) -> tuple[int, ...]:
    return tuple(i for i, sp in enumerate(p.slate) if sp.exhausted)


def xy(i: int) -> tuple[int, int]:
    return data.XY[i]


def assignment_sources(p: Player) -> int:
    return sum(1 for sp in p.slate if sp.stack and sp.stack[-1] in data.ASSIGNMENT_SOURCE)


def cost_of(p: Player, card: str) -> int:
    """§5.5 step 1: printed cost minus 1 per discount Item owned, at least 0."""
    d = data.design(card)
    discount_by = "I08" if data.KIND[d] == data.SPELL else "I09"
    discount = sum(1 for it in p.items if data.design(it) == discount_by)
    return max(0, data.COST[d] - discount)


def can_afford(p: Player, card: str) -> bool:
    have = p.will if data.KIND[data.design(card)] == data.SPELL else p.shards
    return have >= cost_of(p, card)


def completable(state: State, p: Player) -> tuple[str, ...]:
    cards = [c for c in state.public if c is not None]
    cards.extend(p.hand)
    return tuple(c for c in cards if can_afford(p, c))


def item_usable(p: Player, item: str) -> bool:
    d = data.design(item)
    if data.ITEM_KIND[d] != data.USE:
        return False
    if d == "I05":
        return p.shards >= 2
    if d == "I06":
        return p.will >= 2
    return True


def usable_items(p: Player) -> tuple[str, ...]:
    return tuple(it for it in p.items if item_usable(p, it))


def market_slots(state: State) -> tuple[int, ...]:
    return tuple(i for i, t in enumerate(state.market) if t is not None)


def prestige(p: Player) -> int:
    """§6.5: printed PP, tokens and END bonuses."""
    total = sum(data.PP[data.design(c)] for c in p.spells)
    total += sum(data.PP[data.design(c)] for c in p.items) + sum(p.tokens)
    for it in p.items:
        d = data.design(it)
        if d == "I11":
            total += len(p.spells)
        elif d == "I12":
            total += len(p.items) - 1
        elif d == "I13":
            total += p.shards // 2
    return total


def final_outcome(state: State) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Ranks and Prestige; ties broken by completions, then Will + Shards (§6.6)."""
    pp = tuple(prestige(p) for p in state.players)
    keys = [(pp[s], p.completed, p.will + p.shards) for s, p in enumerate(state.players)]
    return ranks_from_keys(keys), pp


# ============================================================== legal moves
def _part_moves(state: State, p: Player, part: int) -> list[ArcaneMove]:
    assert state.cast is not None
    out: list[ArcaneMove] = []
    for action, _amount in data.PARTS[state.cast.component][part]:
        if action == data.SHARD:
            out.append(CollectShards(part=part))
        elif action == data.WILL:
            out.append(GainWill(part=part))
        elif action == data.ADD_TILE:
            out.extend(TakeTile(slot=s, part=part) for s in market_slots(state))
        elif action == data.USE_ITEM:
            out.extend(UseItem(item=it, part=part) for it in usable_items(p))
        else:
            out.extend(CompleteAssignment(card=c, part=part) for c in completable(state, p))
    out.append(SkipPart(part=part))
    return out


def _effect_moves(state: State, p: Player) -> list[ArcaneMove]:
    effect = state.effect
    assert effect is not None
    out: list[ArcaneMove] = []
    if effect.kind == "add_tile":
        out.extend(TakeTile(slot=s) for s in market_slots(state))
    elif effect.kind == "use_item":
        out.extend(UseItem(item=it) for it in usable_items(p))
    else:
        out.extend(RemoveToken(x=xy(i)[0], y=xy(i)[1]) for i in exhausted_spaces(p))
    if effect.optional:
        out.append(DeclineEffect())
    return out


def _placements(p: Player) -> list[ArcaneMove]:
    sources = assignment_sources(p)
    out: list[ArcaneMove] = []
    for tile in p.held:
        keeps = tile in data.ASSIGNMENT_SOURCE
        for i, sp in enumerate(p.slate):
            if not keeps and sources == 1 and sp.stack and sp.stack[-1] in data.ASSIGNMENT_SOURCE:
                continue
            x, y = xy(i)
            out.extend(PlaceTile(tile=tile, x=x, y=y, rotation=r) for r in range(4))
    return out


def legal_moves(state: State, seat: Seat) -> tuple[ArcaneMove, ...]:
    if state.outcome is not None or seat != state.current:
        return ()
    p = state.players[seat]
    phase = state.phase
    if phase == "turn_start":
        out: list[ArcaneMove] = [
            Cast(x=xy(i)[0], y=xy(i)[1])
            for i, sp in enumerate(p.slate)
            if sp.stack and not sp.exhausted
        ]
        out.append(Rest())
        if state.deck:
            out.extend(Rest(discard=c) for c in p.hand)
        return tuple(out)
    if phase == "resolving":
        if state.effect is not None:
            return tuple(_effect_moves(state, p))
        assert state.cast is not None
        out = []
        for part, done in enumerate(state.cast.parts_done):
            if not done:
                out.extend(_part_moves(state, p, part))
        return tuple(out)
    if phase == "choose_linked":
        assert state.cast is not None
        out = [
            ResolveLinked(x=xy(i)[0], y=xy(i)[1])
            for i in state.cast.linked
            if i not in state.cast.started
        ]
        out.append(FinishCast())
        return tuple(out)
    if phase == "place_tiles":
        return tuple(_placements(p))
    return ()


def _default_part(state: State, p: Player) -> ArcaneMove:
    """The first open part: its free Shards, else its free Will (below the
    cap), else skip it. No strategic choice is made for the player."""
    assert state.cast is not None
    part = state.cast.parts_done.index(False)
    actions = {a for a, _amount in data.PARTS[state.cast.component][part]}
    if data.SHARD in actions:
        return CollectShards(part=part)
    if data.WILL in actions and p.will < data.WILL_CAP:
        return GainWill(part=part)
    return SkipPart(part=part)


def _default_placement(p: Player, moves: tuple[ArcaneMove, ...]) -> ArcaneMove:
    """A placement that covers nothing when an empty space exists."""
    for m in moves:
        if isinstance(m, PlaceTile) and not p.slate[m.y * data.COLS + m.x].stack:
            return m
    return moves[0]


def default_move(state: State, seat: Seat) -> ArcaneMove:
    """Rest; take a part's free resources, else skip it; decline an optional
    effect; finish the cast; place on an empty space if there is one."""
    phase = state.phase
    p = state.players[seat]
    if phase == "turn_start":
        return Rest()
    if phase == "resolving" and state.effect is None and state.cast is not None:
        return _default_part(state, p)
    if phase == "resolving" and state.effect is not None and state.effect.optional:
        return DeclineEffect()
    if phase == "choose_linked":
        return FinishCast()
    moves = legal_moves(state, seat)
    if phase == "place_tiles":
        return _default_placement(p, moves)
    return moves[0]


# ======================================================================= turn
class Turn:
    """Events emitted so far and the state they lead to."""

    __slots__ = ("events", "state")

    def __init__(self, state: State) -> None:
        self.state = state
        self.events: list[ArcaneEvent] = []

    def emit(self, *events: ArcaneEvent) -> None:
        for e in events:
            self.events.append(e)
            self.state = evolve(self.state, e)

    def player(self, seat: Seat) -> Player:
        return self.state.players[seat]


# ---------------------------------------------------------------- resources
def gain_will(t: Turn, seat: Seat, n: int) -> None:
    """§5.2: raise Will by n, to at most 9; the excess is lost."""
    amount = max(0, min(n, data.WILL_CAP - t.player(seat).will))
    t.emit(WillGained(seat=seat, amount=amount, lost=n - amount))


def collect_shards(t: Turn, seat: Seat, n: int) -> None:
    """§5.1: no maximum."""
    t.emit(ShardsCollected(seat=seat, amount=n))


def grant_add_tile(t: Turn, seat: Seat, source: str, then_shards: int = 0) -> None:
    """A card's Add Tile: a choice if the market shows a tile, else nothing."""
    if market_slots(t.state):
        t.emit(EffectPending(seat=seat, kind="add_tile", source=source, then_shards=then_shards))
    elif then_shards:
        collect_shards(t, seat, then_shards)


def grant_token_removal(t: Turn, seat: Seat, source: str, n: int, optional: bool) -> None:
    if exhausted_spaces(t.player(seat)):
        t.emit(
            EffectPending(
                seat=seat, kind="remove_token", source=source, remaining=n, optional=optional
            )
        )


# --------------------------------------------------------------- USE abilities
def _use_quill(t: Turn, seat: Seat, item: str) -> None:
    gain_will(t, seat, 1)


def _use_prism(t: Turn, seat: Seat, item: str) -> None:
    collect_shards(t, seat, 1)


def _use_hourglass(t: Turn, seat: Seat, item: str) -> None:
    grant_token_removal(t, seat, item, 1, optional=False)


def _use_trophy(t: Turn, seat: Seat, item: str) -> None:
    t.emit(PrestigeTokenAdded(seat=seat, item=item, value=1))


def _use_flask(t: Turn, seat: Seat, item: str) -> None:
    t.emit(ResourcesSpent(seat=seat, shards=2))
    gain_will(t, seat, 3)


def _use_willstone(t: Turn, seat: Seat, item: str) -> None:
    t.emit(ResourcesSpent(seat=seat, will=2))
    collect_shards(t, seat, 3)


def _use_satchel(t: Turn, seat: Seat, item: str) -> None:
    grant_add_tile(t, seat, item)


USE_ABILITIES: dict[str, Callable[[Turn, Seat, str], None]] = {
    "I01": _use_quill,
    "I02": _use_prism,
    "I03": _use_hourglass,
    "I04": _use_trophy,
    "I05": _use_flask,
    "I06": _use_willstone,
    "I07": _use_satchel,
}


def use_item(t: Turn, seat: Seat, item: str) -> None:
    """§5.4: resolve one USE ability once."""
    t.emit(ItemUsed(seat=seat, item=item))
    USE_ABILITIES[data.design(item)](t, seat, item)


# ------------------------------------------------------------ Spell effects
def _no_effect(t: Turn, seat: Seat, card: str) -> None:
    return None


def _shards(n: int) -> Callable[[Turn, Seat, str], None]:
    def effect(t: Turn, seat: Seat, card: str) -> None:
        collect_shards(t, seat, n)

    return effect


def _mending_charm(t: Turn, seat: Seat, card: str) -> None:
    grant_token_removal(t, seat, card, 2, optional=True)


def _summon_scaffold(t: Turn, seat: Seat, card: str) -> None:
    grant_add_tile(t, seat, card)


def _second_wind(t: Turn, seat: Seat, card: str) -> None:
    spaces = exhausted_spaces(t.player(seat))
    if spaces:
        t.emit(TokensRemoved(seat=seat, spaces=tuple(xy(i) for i in spaces)))


def _arcane_echo(t: Turn, seat: Seat, card: str) -> None:
    if usable_items(t.player(seat)):
        t.emit(EffectPending(seat=seat, kind="use_item", source=card))


def _time_dilation(t: Turn, seat: Seat, card: str) -> None:
    t.emit(ExtraTurnGranted(seat=seat))


def _scholars_boon(t: Turn, seat: Seat, card: str) -> None:
    grant_add_tile(t, seat, card, then_shards=1)


SPELL_EFFECTS: dict[str, Callable[[Turn, Seat, str], None]] = {
    "S01": _shards(1),
    "S02": _no_effect,
    "S03": _mending_charm,
    "S04": _shards(2),
    "S05": _summon_scaffold,
    "S06": _second_wind,
    "S07": _no_effect,
    "S08": _shards(3),
    "S09": _arcane_echo,
    "S10": _time_dilation,
    "S11": _no_effect,
    "S12": _scholars_boon,
    "S13": _no_effect,
    "S14": _no_effect,
    "S15": _no_effect,
}


def complete_assignment(t: Turn, seat: Seat, card: str) -> None:
    """§5.5: pay, take the card, resolve a Spell's effect."""
    p = t.player(seat)
    cost = cost_of(p, card)
    slot = t.state.public.index(card) if card in t.state.public else None
    spell = data.KIND[data.design(card)] == data.SPELL
    t.emit(
        AssignmentCompleted(
            seat=seat,
            card=card,
            slot=slot,
            will_paid=cost if spell else 0,
            shards_paid=0 if spell else cost,
        )
    )
    if spell:
        SPELL_EFFECTS[data.design(card)](t, seat, card)


# ------------------------------------------------------------- turn steps
def draw_to_hand(t: Turn, seat: Seat) -> None:
    deck = t.state.deck
    t.emit(CardDrawn(seat=seat, card=deck[0]))
    if len(deck) == 1:
        t.emit(DeckEmptied(seat=seat))


def end_turn(t: Turn) -> None:
    """§4.4 steps 2-6 (step 1, placing held tiles, is done by now)."""
    seat = t.state.current
    for slot in range(data.MARKET_SLOTS):
        if t.state.market[slot] is None and t.state.bag:
            t.emit(TileDrawn(slot=slot, tile=t.state.bag[0]))
    for slot in range(data.PUBLIC_SLOTS):
        if t.state.public[slot] is None and t.state.deck:
            last = len(t.state.deck) == 1
            t.emit(CardRevealed(slot=slot, card=t.state.deck[0]))
            if last:
                t.emit(DeckEmptied(seat=seat))
    while len(t.player(seat).hand) < data.HAND_SIZE and t.state.deck:
        draw_to_hand(t, seat)
    s = t.state
    n = len(s.players)
    if s.pencils_down is None:
        reason = ""
        if s.deck_emptied_by is not None:
            reason = "deck_out"
        elif s.players[seat].completed >= data.PENCILS_DOWN_AT:
            reason = "completions"
        elif (
            s.turn_kind == "normal"
            and seat == (s.first_player - 1) % n
            and s.round >= data.ROUND_LIMIT
        ):
            reason = "round_limit"
        if reason:
            order = (*seats_from(seat, n)[1:], seat)
            t.emit(PencilsDown(seat=seat, reason=reason, final_order=order))
    s = t.state
    if s.extra_owed > 0:
        if s.pencils_down is not None:
            t.emit(ExtraTurnCancelled(seat=seat, count=s.extra_owed))
        else:
            t.emit(TurnStarted(seat=seat, kind="extra", round=s.round))
            return
    s = t.state
    if s.pencils_down is not None:
        if s.final_queue:
            t.emit(TurnStarted(seat=s.final_queue[0], kind="final", round=s.round))
        else:
            ranks, pp = final_outcome(s)
            t.emit(
                GameEnded(
                    ranks=ranks,
                    scores=tuple(float(v) for v in pp),
                    prestige=pp,
                    completed=tuple(p.completed for p in s.players),
                    reason=s.end_reason,
                )
            )
        return
    nxt = (seat + 1) % n
    rnd = s.round + 1 if nxt == s.first_player else s.round
    t.emit(TurnStarted(seat=nxt, kind="normal", round=rnd))


def finish_cast(t: Turn, seat: Seat) -> None:
    t.emit(CastFinished(seat=seat))
    if not t.player(seat).held:
        end_turn(t)


def after_action(t: Turn, seat: Seat) -> None:
    """Once no effect waits: close a finished tile, and the cast if nothing is left."""
    s = t.state
    cast = s.cast
    if s.effect is not None or cast is None or cast.current is None:
        return
    if not all(cast.parts_done):
        return
    x, y = xy(cast.current)
    t.emit(TileResolved(seat=seat, x=x, y=y))
    cast = t.state.cast
    assert cast is not None
    if all(i in cast.started for i in cast.linked):
        finish_cast(t, seat)


def end_effect(t: Turn, seat: Seat) -> None:
    effect = t.state.effect
    assert effect is not None
    if effect.then_shards:
        collect_shards(t, seat, effect.then_shards)
    t.emit(EffectEnded(seat=seat))


# =================================================================== handlers
def on_cast(t: Turn, seat: Seat, move: Cast) -> None:
    p = t.player(seat)
    i = data.index(move.x, move.y)
    assert i is not None
    linked = linked_set(p.slate, i)
    t.emit(
        TileActivated(
            seat=seat,
            x=move.x,
            y=move.y,
            component=p.slate[i].stack[-1],
            linked=tuple(xy(j) for j in linked),
        )
    )


def on_rest(t: Turn, seat: Seat, move: Rest) -> None:
    p = t.player(seat)
    t.emit(Rested(seat=seat, spaces=tuple(xy(i) for i in exhausted_spaces(p))))
    for it in p.items:
        if data.design(it) == "I10":
            gain_will(t, seat, 1)
            collect_shards(t, seat, 1)
    if move.discard is not None:
        t.emit(CardDiscarded(seat=seat, card=move.discard))
        draw_to_hand(t, seat)
    end_turn(t)


def _option_amount(state: State, part: int, action: str) -> int:
    assert state.cast is not None
    for a, amount in data.PARTS[state.cast.component][part]:
        if a == action:
            return amount
    raise AssertionError("legal_moves offered an action the part lacks")


def on_collect_shards(t: Turn, seat: Seat, move: CollectShards) -> None:
    amount = _option_amount(t.state, move.part, data.SHARD)
    t.emit(PartPerformed(seat=seat, part=move.part, action=data.SHARD))
    collect_shards(t, seat, amount)
    after_action(t, seat)


def on_gain_will(t: Turn, seat: Seat, move: GainWill) -> None:
    amount = _option_amount(t.state, move.part, data.WILL)
    t.emit(PartPerformed(seat=seat, part=move.part, action=data.WILL))
    gain_will(t, seat, amount)
    after_action(t, seat)


def on_take_tile(t: Turn, seat: Seat, move: TakeTile) -> None:
    tile = t.state.market[move.slot]
    assert tile is not None
    if move.part is None:
        t.emit(TileTaken(seat=seat, slot=move.slot, tile=tile))
        end_effect(t, seat)
    else:
        t.emit(PartPerformed(seat=seat, part=move.part, action=data.ADD_TILE))
        t.emit(TileTaken(seat=seat, slot=move.slot, tile=tile))
    after_action(t, seat)


def on_use_item(t: Turn, seat: Seat, move: UseItem) -> None:
    if move.part is None:
        t.emit(EffectEnded(seat=seat))
    else:
        t.emit(PartPerformed(seat=seat, part=move.part, action=data.USE_ITEM))
    use_item(t, seat, move.item)
    after_action(t, seat)


def on_complete(t: Turn, seat: Seat, move: CompleteAssignment) -> None:
    t.emit(PartPerformed(seat=seat, part=move.part, action=data.COMPLETE))
    complete_assignment(t, seat, move.card)
    after_action(t, seat)


def on_skip(t: Turn, seat: Seat, move: SkipPart) -> None:
    t.emit(PartSkipped(seat=seat, part=move.part))
    after_action(t, seat)


def on_remove_token(t: Turn, seat: Seat, move: RemoveToken) -> None:
    effect = t.state.effect
    assert effect is not None
    t.emit(TokensRemoved(seat=seat, spaces=((move.x, move.y),)))
    if effect.remaining > 1 and exhausted_spaces(t.player(seat)):
        t.emit(
            EffectPending(
                seat=seat,
                kind=effect.kind,
                source=effect.source,
                remaining=effect.remaining - 1,
                optional=effect.optional,
            )
        )
    else:
        t.emit(EffectEnded(seat=seat))
    after_action(t, seat)


def on_decline(t: Turn, seat: Seat, move: DeclineEffect) -> None:
    end_effect(t, seat)
    after_action(t, seat)


def on_resolve_linked(t: Turn, seat: Seat, move: ResolveLinked) -> None:
    i = data.index(move.x, move.y)
    assert i is not None
    component = t.player(seat).slate[i].stack[-1]
    t.emit(LinkedTileStarted(seat=seat, x=move.x, y=move.y, component=component))


def on_finish_cast(t: Turn, seat: Seat, move: FinishCast) -> None:
    finish_cast(t, seat)


def on_place_tile(t: Turn, seat: Seat, move: PlaceTile) -> None:
    i = data.index(move.x, move.y)
    assert i is not None
    sp = t.player(seat).slate[i]
    t.emit(
        TilePlaced(
            seat=seat,
            tile=move.tile,
            x=move.x,
            y=move.y,
            rotation=move.rotation,
            covered=top(sp),
            exhausted=sp.exhausted,
        )
    )
    if not t.player(seat).held:
        end_turn(t)


HANDLERS: dict[type, Callable[[Turn, Seat, ArcaneMove], None]] = {
    Cast: on_cast,
    Rest: on_rest,
    CollectShards: on_collect_shards,
    GainWill: on_gain_will,
    TakeTile: on_take_tile,
    UseItem: on_use_item,
    CompleteAssignment: on_complete,
    SkipPart: on_skip,
    RemoveToken: on_remove_token,
    DeclineEffect: on_decline,
    ResolveLinked: on_resolve_linked,
    FinishCast: on_finish_cast,
    PlaceTile: on_place_tile,
}  # type: ignore[dict-item]


# ===================================================================== decide
def _check_types(move: ArcaneMove) -> None:
    """Field types exactly as declared: ``True`` or ``1.0`` equal ``1`` in
    Python and would otherwise match a legal move (JSON input is already
    checked by the decoder; this covers Python callers)."""
    try:
        msgspec.convert(asdict(move), type(move))
    except msgspec.ValidationError as e:
        raise MalformedMove(message=str(e)) from None


def decide(state: State, seat: Seat, move: ArcaneMove, rng: Rng) -> list[ArcaneEvent]:
    PHASES.check(state.phase, move)
    _check_types(move)
    if move not in legal_moves(state, seat):
        code, message = diagnose(state, seat, move)
        raise IllegalMove(code, message)
    t = Turn(state)
    HANDLERS[type(move)](t, seat, move)
    return t.events


def setup(players: int, rng: Rng) -> list[ArcaneEvent]:
    """§3: first player, bag, market, deck, public slots, hands, first turn."""
    first = rng.below(players)
    bag = rng.shuffle(data.TILE_IDS)
    deck = rng.shuffle(data.CARD_IDS)
    t = Turn(None)  # type: ignore[arg-type]
    t.emit(GameStarted(players=players, first_player=first))
    t.emit(BagShuffled(count=len(bag), tiles=bag))
    t.emit(DeckShuffled(count=len(deck), cards=deck))
    for slot in range(data.MARKET_SLOTS):
        t.emit(TileDrawn(slot=slot, tile=t.state.bag[0]))
    for slot in range(data.PUBLIC_SLOTS):
        t.emit(CardRevealed(slot=slot, card=t.state.deck[0]))
    for seat in seats_from(first, players):
        for _ in range(data.HAND_SIZE):
            t.emit(CardDrawn(seat=seat, card=t.state.deck[0]))
    t.emit(TurnStarted(seat=first, kind="normal", round=1))
    return t.events


def outcome(state: State) -> Outcome | None:
    return state.outcome


# ================================================================== diagnose
def _is(value: object, tp: type) -> bool:
    return type(value) is tp


def diagnose(state: State, seat: Seat, move: ArcaneMove) -> tuple[str, str]:
    """Why a well-formed move is not legal now (only called on rejection)."""
    p = state.players[seat]
    match move:
        case Cast(x=x, y=y):
            i = data.index(x, y)
            if i is None:
                return "no_such_space", f"({x!r}, {y!r}) is not on the slate"
            if not p.slate[i].stack:
                return "empty_space", f"({x}, {y}) holds nothing to cast"
            return "space_exhausted", f"({x}, {y}) has an Exhaustion token"
        case Rest(discard=card):
            if not state.deck:
                return "deck_empty", "no swap is possible once the deck is empty"
            return "not_in_hand", f"{card!r} is not in your hand"
        case PlaceTile(tile=tile, x=x, y=y, rotation=r):
            if tile not in p.held:
                return "not_held", f"you hold no tile {tile!r}"
            if data.index(x, y) is None:
                return "no_such_space", f"({x!r}, {y!r}) is not on the slate"
            if not _is(r, int) or not 0 <= r < 4:
                return "bad_rotation", f"rotation {r!r} is not 0-3"
            return (
                "last_assignment_action",
                "the slate must keep an action that completes an Assignment (§5.7)",
            )
        case ResolveLinked(x=x, y=y):
            return "not_linked", f"({x!r}, {y!r}) is not a linked tile left to resolve"
        case RemoveToken(x=x, y=y):
            if state.effect is None or state.effect.kind != "remove_token":
                return "no_effect", "no token removal is waiting"
            return "no_token", f"({x!r}, {y!r}) has no Exhaustion token"
        case DeclineEffect():
            if state.effect is None:
                return "no_effect", "no granted action is waiting"
            return "not_optional", "this effect must be carried out"
        case FinishCast():
            return "not_legal", "the cast cannot finish now"
        case _:
            pass
    # The part moves and the effect moves.
    part = getattr(move, "part", None)
    if state.effect is not None and part is not None:
        return "effect_pending", "finish the pending card effect first"
    if state.effect is None and part is None:
        return "no_effect", "no granted action is waiting; name the part"
    cast = state.cast
    if part is not None and cast is not None:
        if not _is(part, int) or not 0 <= part < len(cast.parts_done):
            return "no_such_part", f"the tile has no part {part!r}"
        if cast.parts_done[part]:
            return "part_done", f"part {part} is already performed or skipped"
    match move:
        case TakeTile(slot=slot):
            return "market_slot_empty", f"market slot {slot!r} shows no tile"
        case UseItem(item=item):
            return "item_not_usable", f"{item!r} is not an Item of yours you can use now"
        case CompleteAssignment(card=card):
            if card in state.public or card in p.hand:
                return "cannot_afford", f"you cannot pay for {card}"
            return "no_such_card", f"{card!r} is neither public nor in your hand"
        case _:
            return "action_not_offered", "that action is not on this part"
