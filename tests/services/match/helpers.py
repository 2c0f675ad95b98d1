"""Playing matches through the service while the test keeps the engine's truth."""

from __future__ import annotations

from typing import Any

import msgspec

from engine_core.bots import RandomBot
from engine_core.decider import Game, apply, fold, start
from engine_core.rng import Rng
from services.match.model import Commit
from tests.services.match.conftest import Player, Service

_json = msgspec.json.Encoder()


def move_json(move: Any) -> str:
    return _json.encode(move).decode()


def state_json(state: Any) -> str:
    return _json.encode(state).decode()


def decode_events(game: Game, texts: tuple[str, ...] | list[str]) -> list[Any]:
    return [game.codec().event_json.decode(t) for t in texts]


async def commits_of(service: Service, match_id: str) -> list[Commit]:
    """Every commit of the match as stored in JetStream (via the store adapter)."""
    return [c async for _s, c in service.app.store.commits(match_id, 0)]


def states_by_version(game: Game, commits: list[Commit]) -> list[Any]:
    """The engine's fold after each version."""
    states, state = [], None
    for c in commits:
        state = fold(game, decode_events(game, c.events), state)
        states.append(state)
    return states


def replay_in_process(game: Game, commits: list[Commit]) -> tuple[Any, list[tuple[str, ...]]]:
    """Decide every stored move again with its stored entropy; the final state
    and the events of each commit (JSON) as the engine makes them."""
    creation = commits[0]
    options = game.codec().decode_options(creation.options.encode() or b"{}")
    state, events = start(game, len(creation.players), options, creation.entropy)
    out = [tuple(move_json(e) for e in events)]
    for c in commits[1:]:
        assert c.seat is not None
        move = game.codec().decode_move(c.move.encode())
        state, events = apply(game, state, c.seat, move, c.entropy)
        out.append(tuple(move_json(e) for e in events))
    return state, out


async def play_out(
    service: Service,
    game: Game,
    match_id: str,
    players: list[Player],
    seed: int,
    *,
    limit: int | None = None,
    after_each: Any = None,
) -> int:
    """Play random legal moves until the match ends (or ``limit`` moves);
    the test mirrors the state by folding the stored commits. Returns the
    number of moves played."""
    rng = Rng(seed.to_bytes(8, "big"))
    bot = RandomBot()
    items = [x async for x in service.app.store.commits(match_id, 0)]
    state = states_by_version(game, [c for _s, c in items])[-1]
    seq = items[-1][0]
    played = 0
    while game.outcome(state) is None and (limit is None or played < limit):
        waiting = game.awaiting(state)
        seat = waiting[0] if len(waiting) == 1 else rng.choice(waiting)
        move = bot.choose(game, state, seat, rng)
        reply = await players[seat].submit(match_id, move_json(move))
        assert reply.seat == seat
        new = [x async for x in service.app.store.commits(match_id, seq)]
        assert [c.version for _s, c in new] == [reply.version]
        seq, last = new[-1]
        state = fold(game, decode_events(game, last.events), state)
        played += 1
        if after_each is not None:
            await after_each(played)
    return played
