"""A greedy Arcane Academy bot: one-step heuristics, no search.

* Turn start: score every castable space by what it and its linked tiles
  would yield (resources, tiles, Item uses, the best completions the cast can
  pay for) and cast the best; Rest (swapping the least affordable private
  card) when no cast is worth much.
* Resolving: resources first, then Items, then the most Prestige it can pay
  for; take the best market tile; skip only what cannot help.
* Linked tiles: all of them, resource tiles first.
* Placement: the spot and rotation that link the most, never covering a
  better tile than the one placed.
"""

from __future__ import annotations

import functools

from engine_core.games.arcane_academy import data
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
from engine_core.games.arcane_academy.rules import (
    connectors,
    cost_of,
    exhausted_spaces,
    linked_set,
    prestige,
    usable_items,
)
from engine_core.games.arcane_academy.state import Player, State
from engine_core.rng import Rng
from engine_core.types import Seat

_ACTION_VALUE = {data.SHARD: 1.0, data.WILL: 1.0, data.ADD_TILE: 1.6, data.USE_ITEM: 1.2}
_ITEM_USE_VALUE = {
    "I01": 1.0,
    "I02": 1.0,
    "I03": 1.5,
    "I04": 3.0,
    "I05": 1.5,
    "I06": 1.5,
    "I07": 1.6,
}
_ORDER = {data.SHARD: 0, data.WILL: 0, data.USE_ITEM: 1, data.ADD_TILE: 2, data.COMPLETE: 3}


@functools.cache
def tile_value(tile: str) -> float:
    """How much a component's actions are worth, roughly, plus its links (a
    pure function of the game's data, computed once per tile)."""
    total = 0.0
    for part in data.PARTS[tile]:
        best = 0.0
        for action, amount in part:
            v = 4.0 if action == data.COMPLETE else _ACTION_VALUE[action] * max(1, amount)
            best = max(best, v)
        total += best
    return total + 0.4 * bin(data.CONNECTORS[tile][0]).count("1")


@functools.cache
def card_value(card: str) -> float:
    d = data.design(card)
    return data.PP[d] * 3.0 + 2.0


def _resource_gain(parts) -> tuple[int, int]:
    """Will and Shards a set of parts can yield (a slash or Chaos: the larger option)."""
    will = shards = 0
    for part in parts:
        w = max((a for act, a in part if act == data.WILL), default=0)
        s = max((a for act, a in part if act == data.SHARD), default=0)
        if len(part) == 1:
            will, shards = will + w, shards + s
        elif s >= w:
            shards += s
        else:
            will += w
    return will, shards


def cast_value(state: State, p: Player, i: int) -> float:
    spaces = (i, *linked_set(p.slate, i))
    parts = [part for j in spaces for part in data.PARTS[p.slate[j].stack[-1]]]
    will_gain, shard_gain = _resource_gain(parts)
    will = min(data.WILL_CAP, p.will + will_gain)
    shards = p.shards + shard_gain
    value = min(will_gain, data.WILL_CAP - p.will) * 1.0 + shard_gain * 1.0
    completes = 0
    for part in parts:
        actions = {a for a, _ in part}
        if data.COMPLETE in actions:
            completes += 1
        elif data.ADD_TILE in actions and any(t is not None for t in state.market):
            value += 1.6
        elif data.USE_ITEM in actions and usable_items(p):
            value += 1.2
    cards = sorted(completable_with(state, p, will, shards), key=card_value, reverse=True)
    for card in cards[:completes]:
        value += card_value(card)
    return value


def completable_with(state: State, p: Player, will: int, shards: int) -> list[str]:
    cards = [c for c in state.public if c is not None] + list(p.hand)
    out = []
    for c in cards:
        have = will if data.KIND[data.design(c)] == data.SPELL else shards
        if have >= cost_of(p, c):
            out.append(c)
    return out


class ArcaneAcademyGreedy:
    name = "greedy"
    standing_scale = 4.0  # a lead of this much in standing is a clear one

    def standing(self, state: State) -> tuple[float, ...]:
        """Each seat's Prestige as it would score now."""
        return tuple(float(prestige(p)) for p in state.players)

    def choose(self, game, state: State, seat: Seat, rng: Rng) -> ArcaneMove:
        moves = game.legal_moves(state, seat)
        p = state.players[seat]
        phase = state.phase
        if phase == "turn_start":
            return self._turn_start(state, p, moves)
        if phase == "resolving":
            if state.effect is not None:
                return self._effect(state, p, moves)
            return self._part(state, p, moves)
        if phase == "choose_linked":
            return self._linked(p, moves)
        if phase == "place_tiles":
            return self._place(p, moves)
        return moves[0]

    # ------------------------------------------------------------ turn start
    def _turn_start(self, state: State, p: Player, moves) -> ArcaneMove:
        best, best_v = None, -1.0
        for m in moves:
            if isinstance(m, Cast):
                v = cast_value(state, p, m.y * data.COLS + m.x)
                if v > best_v:
                    best, best_v = m, v
        rest_v = 0.6 * len(exhausted_spaces(p)) + 2.0 * sum(
            1 for it in p.items if data.design(it) == "I10"
        )
        if best is not None and best_v >= max(1.5, rest_v):
            return best
        swaps = [m for m in moves if isinstance(m, Rest) and m.discard]
        worst = None
        for m in swaps:
            card = m.discard
            assert card is not None
            gap = cost_of(p, card) - (
                p.will if data.KIND[data.design(card)] == data.SPELL else p.shards
            )
            if gap >= 3 and (worst is None or gap > worst[0]):
                worst = (gap, m)
        return worst[1] if worst else Rest()

    # -------------------------------------------------------------- resolving
    def _part(self, state: State, p: Player, moves) -> ArcaneMove:
        cast = state.cast
        assert cast is not None
        parts = data.PARTS[cast.component]
        open_parts = [k for k, done in enumerate(cast.parts_done) if not done]
        # Resources before Items before tiles before completions.
        open_parts.sort(key=lambda k: min(_ORDER[a] for a, _ in parts[k]))
        for k in open_parts:
            best, best_v = None, 0.0
            for m in moves:
                if getattr(m, "part", None) != k or isinstance(m, SkipPart):
                    continue
                v = self._move_value(state, p, parts[k], m)
                if v > best_v:
                    best, best_v = m, v
            if best is not None:
                return best
            return SkipPart(part=k)
        return moves[0]

    def _move_value(self, state: State, p: Player, part, m: ArcaneMove) -> float:
        amount = {a: n for a, n in part}
        if isinstance(m, CollectShards):
            return 1.0 * amount[data.SHARD] + 0.1
        if isinstance(m, GainWill):
            room = data.WILL_CAP - p.will
            return 1.0 * min(room, amount[data.WILL])
        if isinstance(m, TakeTile):
            tile = state.market[m.slot]
            return 1.0 + tile_value(tile) / 10 if tile else 0.0
        if isinstance(m, UseItem):
            return _ITEM_USE_VALUE.get(data.design(m.item), 0.5)
        if isinstance(m, CompleteAssignment):
            return card_value(m.card) * 2
        return 0.0

    def _effect(self, state: State, p: Player, moves) -> ArcaneMove:
        takes = [m for m in moves if isinstance(m, TakeTile)]
        if takes:
            return max(takes, key=lambda m: tile_value(state.market[m.slot] or "T01"))
        uses = [m for m in moves if isinstance(m, UseItem)]
        if uses:
            return max(uses, key=lambda m: _ITEM_USE_VALUE.get(data.design(m.item), 0.5))
        removes = [m for m in moves if isinstance(m, RemoveToken)]
        if removes:
            return max(
                removes,
                key=lambda m: tile_value(p.slate[m.y * data.COLS + m.x].stack[-1]),
            )
        return next(m for m in moves if isinstance(m, DeclineEffect))

    # ---------------------------------------------------------------- linked
    def _linked(self, p: Player, moves) -> ArcaneMove:
        options = [m for m in moves if isinstance(m, ResolveLinked)]
        if not options:
            return FinishCast()

        def order(m: ResolveLinked) -> int:
            parts = data.PARTS[p.slate[m.y * data.COLS + m.x].stack[-1]]
            return max(min(_ORDER[a] for a, _ in part) for part in parts)

        return min(options, key=order)

    # ------------------------------------------------------------- placement
    def _place(self, p: Player, moves) -> ArcaneMove:
        best, best_v = moves[0], -1e9
        for m in moves:
            assert isinstance(m, PlaceTile)
            v = self._placement_value(p, m)
            if v > best_v:
                best, best_v = m, v
        return best

    def _placement_value(self, p: Player, m: PlaceTile) -> float:
        i = m.y * data.COLS + m.x
        sp = p.slate[i]
        mine = data.CONNECTORS[m.tile][m.rotation]
        links = 0
        for edge, j in data.NEIGHBOURS[i]:
            if mine & edge and p.slate[j].stack and connectors(p.slate[j]) & data.OPPOSITE[edge]:
                links += 1
        value = tile_value(m.tile) + 1.5 * links
        if sp.stack:
            value -= tile_value(sp.stack[-1]) + 1.0
        if sp.exhausted:
            value -= 1.0
        return value
