"""The contract checks, run over every registered game (see test_contract.py).

A game gets all of this by registering; it writes no test code of its own.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from typing import Any

import msgspec

from engine_core.decider import Game, fold, start
from engine_core.errors import EngineError, GameOver, NotYourTurn, UnknownSeat
from engine_core.notation import move_text, parse_move
from engine_core.rng import Rng, derive
from engine_core.testing import move_entropy, seed_bytes, setup_entropy
from engine_core.types import Outcome

enc_mp = msgspec.msgpack.Encoder()
enc_js = msgspec.json.Encoder()

# How many seeds of full random playouts, per game and player count.
PLAYOUT_SEEDS: dict[str, int] = {
    "tic_tac_toe": 200,
    "dice_forge": 200,
    "dwarves_duel": 300,
    "arcane_academy": 200,
    "assault_of_the_giants": 100,
}
DEFAULT_PLAYOUT_SEEDS = 200
# Seeds per game and player count on which every check runs at every step.
DEEP_SEEDS = 3
# In a deep run, how many legal moves are tried per step at most (a sample).
LEGAL_SAMPLE = 12
# In a deep run, the steps checked in full at most (a sample past that).
DEEP_STEPS = 250


def check_outcome(game: Game, state: Any, players: int) -> Outcome:
    outcome = game.outcome(state)
    assert isinstance(outcome, Outcome), f"{game.name}: finished without an Outcome"
    assert len(outcome.ranks) == players and len(outcome.scores) == players
    assert outcome.reason, "an outcome says how the game ended"
    # Competition ranks: 1 exists; a rank r is shared by k seats -> next is r + k.
    ranks = sorted(outcome.ranks)
    assert ranks[0] == 1, f"nobody placed first: {outcome.ranks}"
    for i, r in enumerate(ranks):
        assert r == (1 if i == 0 else (ranks[i - 1] if r == ranks[i - 1] else i + 1)), (
            f"not competition ranks: {outcome.ranks}"
        )
    assert game.awaiting(state) == (), "a finished game awaits nobody"
    return outcome


def same(a: Any, b: Any) -> bool:
    return enc_mp.encode(a) == enc_mp.encode(b)


def roundtrip(value: Any, tp: Any, what: str) -> None:
    js = enc_js.encode(value)
    assert msgspec.json.decode(js, type=tp) == value, f"{what} does not round-trip through JSON"
    mp = enc_mp.encode(value)
    assert msgspec.msgpack.decode(mp, type=tp) == value, (
        f"{what} does not round-trip through msgpack"
    )


def leaks(blob: bytes, secrets: dict[Any, Iterable[str]], viewer: int | None) -> list[str]:
    """Secret strings of other owners that appear as JSON strings in ``blob``."""
    found = []
    for owner, values in secrets.items():
        if owner is not None and owner == viewer:
            continue
        for v in values:
            if b'"' + v.encode() + b'"' in blob:
                found.append(f"{v!r} (owner {owner})")
    return found


def check_no_leak(game: Game, state: Any, events: Iterable[Any], players: int) -> None:
    secrets = {k: tuple(v) for k, v in game.secrets(state).items()}
    if not any(secrets.values()):
        return
    for viewer in [*range(players), None]:
        view_blob = enc_js.encode(game.view(state, viewer))
        assert not leaks(view_blob, secrets, viewer), (
            f"view for {viewer} leaks {leaks(view_blob, secrets, viewer)}"
        )
        for event in events:
            red = game.redact(event, viewer)
            if red is None:
                continue
            blob = enc_js.encode(red)
            assert not leaks(blob, secrets, viewer), (
                f"event {type(event).__name__} for {viewer} leaks {leaks(blob, secrets, viewer)}"
            )


def mutations(move: Any) -> list[Any]:
    """Made-up variants of a move: each field set to values out of any range."""
    out = []
    for field in move.__struct_fields__:
        value = getattr(move, field)
        candidates: list[Any]
        if isinstance(value, bool):
            candidates = [not value]
        elif isinstance(value, int):
            candidates = [-1, value + 1, 10**6]
        elif isinstance(value, str):
            candidates = ["__bogus__", ""]
        elif isinstance(value, tuple):
            candidates = [(), value + value[:1]] if value else []
        else:
            candidates = []
        for c in candidates:
            with contextlib.suppress(TypeError, ValueError):
                out.append(msgspec.structs.replace(move, **{field: c}))
    return out


def deep_playout(game: Game, players: int, seed: int) -> None:
    """A random playout with every contract check at (a sample of) every step."""
    rng = Rng(derive(seed_bytes(seed), "conformance"))
    state, setup_events = start(game, players, game.Options(), setup_entropy(seed))
    again, _ = start(game, players, game.Options(), setup_entropy(seed))
    assert same(state, again), "setup is not deterministic"
    all_events = list(setup_events)
    for e in setup_events:
        roundtrip(e, game.Event, f"event {type(e).__name__}")
    check_no_leak(game, state, setup_events, players)
    bound = game.max_moves(players)
    step = 0
    example = None
    while game.outcome(state) is None:
        assert step < bound, f"more than max_moves={bound} moves"
        waiting = game.awaiting(state)
        assert waiting, "no outcome, yet nobody is awaited"
        deep = step < DEEP_STEPS or rng.below(10) == 0
        before = enc_mp.encode(state)
        if deep:
            check_step(game, state, players, waiting, step, seed, rng)
            assert enc_mp.encode(state) == before, "a check changed the state"
        seat = rng.choice(waiting)
        moves = game.legal_moves(state, seat)
        assert moves, f"seat {seat} is awaited but has no legal move"
        move = rng.choice(moves)
        if example is None:
            example = move
        entropy = move_entropy(seed, step)
        events = game.decide(state, seat, move, entropy)
        assert enc_mp.encode(state) == before, "decide changed its input state"
        assert enc_mp.encode(game.decide(state, seat, move, entropy)) == enc_mp.encode(events), (
            "the same entropy gave different events"
        )
        assert events, "an accepted move produced no event"
        state = fold(game, events, state)
        all_events.extend(events)
        if deep:
            for e in events:
                roundtrip(e, game.Event, f"event {type(e).__name__}")
            roundtrip(state, game.State, "state")
            for viewer in [*range(players), None]:
                roundtrip(game.view(state, viewer), game.View, f"view for {viewer}")
            check_no_leak(game, state, events, players)
            if step % 10 == 0:
                assert same(fold(game, all_events), state), (
                    f"folding all events differs from the state after step {step}"
                )
        step += 1
    check_outcome(game, state, players)
    assert same(fold(game, all_events), state), "folding all events differs from the final state"
    assert example is not None
    for seat in range(players):
        try:
            game.decide(state, seat, example, b"after the end")
        except GameOver:
            continue
        raise AssertionError("a finished game did not refuse a move with GameOver")


def check_step(
    game: Game, state: Any, players: int, waiting: tuple[int, ...], step: int, seed: int, rng: Rng
) -> None:
    entropy = move_entropy(seed, step)
    for seat in waiting:
        moves = game.legal_moves(state, seat)
        assert moves, f"seat {seat} is awaited but has no legal move"
        assert len(set(map(enc_mp.encode, moves))) == len(moves), "legal_moves has duplicates"
        default = game.default_move(state, seat)
        assert default in moves, f"default_move {default!r} is not legal"
        sample = moves if len(moves) <= LEGAL_SAMPLE else rng.sample(moves, LEGAL_SAMPLE)
        legal = set(map(enc_mp.encode, moves))
        for move in sample:
            roundtrip(move, game.Move, f"move {type(move).__name__}")
            assert parse_move(game.Move, move_text(move)) == move, (
                f"text form does not round-trip: {move_text(move)}"
            )
            events = game.decide(state, seat, move, entropy)  # must not raise
            fold(game, events, state)
        for bad in mutations(rng.choice(moves)):
            if enc_mp.encode(bad) in legal:
                continue
            try:
                events = game.decide(state, seat, bad, entropy)
            except EngineError:
                continue
            raise AssertionError(
                f"decide accepted {bad!r}, which legal_moves does not offer (seat {seat})"
            )
    others = [s for s in range(players) if s not in waiting]
    move = game.legal_moves(state, waiting[0])[0]
    for seat in others:
        try:
            game.decide(state, seat, move, entropy)
        except NotYourTurn:
            pass
        else:
            raise AssertionError(f"seat {seat} moved while not awaited")
    for seat in (-1, players):
        try:
            game.decide(state, seat, move, entropy)
        except UnknownSeat:
            pass
        else:
            raise AssertionError(f"seat {seat} does not exist, yet it moved")
