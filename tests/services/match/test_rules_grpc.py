"""The match service with the rules service over gRPC (a real rules server)."""

from __future__ import annotations

import asyncio
import gc
import json

import grpc
import pytest
from prometheus_client import REGISTRY

from engine_core.registry import default_registry
from services.common.errors import error_info
from services.common.grpcserver import GrpcServer, ServerConfig
from services.match.ports import RulesUnavailable
from services.match.rules_grpc import GrpcRules
from services.rules.client import RulesError
from services.rules.server import build_server
from services.rules.servicer import SERVICE_NAME, RulesServicer
from services.rules.settings import RulesSettings
from tabletop.match.v1 import match_pb2
from tabletop.rules.v1 import rules_pb2, rules_pb2_grpc
from tests.services.match.conftest import stream_commits
from tests.services.match.helpers import (
    commits_of,
    play_out,
    replay_in_process,
    state_json,
    states_by_version,
)


@pytest.fixture
async def rules_server():
    server = build_server(RulesSettings(host="127.0.0.1", port=0, grace_seconds=0.1))
    await server.start()
    yield server
    await server.stop(0.1)


@pytest.fixture
async def remote(start_service, rules_server):
    address = f"127.0.0.1:{rules_server.port}"
    return await start_service(rules=GrpcRules(address, timeout_s=1.0), rules_timeout_s=1.0)


FAST = ["tic_tac_toe", "dwarves_duel"]
SLOW = [
    pytest.param(g, marks=pytest.mark.slow) for g in default_registry().names() if g not in FAST
]


@pytest.mark.parametrize("game_id", [*FAST, *SLOW])
async def test_a_full_match_with_remote_rules(remote, game_id) -> None:
    game = default_registry().get(game_id)
    ids = [f"guest:p{s}" for s in range(game.min_players)]
    players = [remote.player(p) for p in ids]
    match_id = await players[0].create(
        game_id, ids, match_options=match_pb2.MatchOptions(public_replay=True)
    )
    played = await play_out(remote, game, match_id, players, seed=5)
    commits = await commits_of(remote, match_id)
    final, events = replay_in_process(game, commits)
    assert [c.events for c in commits] == events
    info = await players[0].get(match_id)
    assert info.version == played and list(info.outcome.ranks) == list(game.outcome(final).ranks)

    # rebuilt through Fold after losing every cache
    await remote.app.drain()
    await remote.app.cache.client.flushall()
    remote.app.forget()
    again = await players[1].get(match_id)
    assert again.version == played and again.view_json == state_json(game.view(final, 1))

    # a full replay: the events in full, the whole state at the end
    replay = [c async for c in remote.player("guest:x").replay(match_id, include_view=True)]
    assert [list(c.events_json) for c in replay] == [list(c.events) for c in commits]
    assert replay[-1].view_json == state_json(states_by_version(game, commits)[-1])


async def test_remote_rejections_keep_their_status_and_reason(remote) -> None:
    a = remote.player("guest:a")
    match_id = await a.create("tic_tac_toe", ["guest:a", "guest:b"])
    with pytest.raises(grpc.aio.AioRpcError) as e:
        await a.submit(match_id, json.dumps({"type": "place_mark", "cell": 42}))
    assert e.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert error_info(e.value).reason == "no_such_cell"
    with pytest.raises(grpc.aio.AioRpcError) as e:
        await a.submit(match_id, "{")
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    with pytest.raises(grpc.aio.AioRpcError) as e:
        await a.create("no_such_game", ["guest:a"])
    assert e.value.code() == grpc.StatusCode.NOT_FOUND


async def test_rules_service_down_is_unavailable_and_appends_nothing(
    remote, rules_server, settings
) -> None:
    a = remote.player("guest:a")
    match_id = await a.create("tic_tac_toe", ["guest:a", "guest:b"])
    await rules_server.stop(0)
    with pytest.raises(grpc.aio.AioRpcError) as e:
        await a.submit(match_id, json.dumps({"type": "place_mark", "cell": 4}))
    assert e.value.code() == grpc.StatusCode.UNAVAILABLE
    assert error_info(e.value).reason == "rules_unavailable"
    assert len(await stream_commits(settings.nats_url, match_id)) == 1


async def test_timeouts_with_remote_rules_play_the_default_then_the_bot(remote) -> None:
    """The timer asks the rules service for the default move (DefaultMove),
    then for the bot's once the seat is handed over."""
    a = remote.player("guest:a")
    tc = match_pb2.TimeControl(
        kind=match_pb2.TimeControl.KIND_PER_MOVE, per_move_ms=300, max_timeouts=1
    )
    match_id = await a.create(
        "tic_tac_toe",
        ["guest:a", "guest:b"],
        match_options=match_pb2.MatchOptions(time_control=tc),
    )
    for _ in range(400):  # two default moves, then the bot's (a second later)
        if (await a.get(match_id)).version >= 3:
            break
        await asyncio.sleep(0.05)
    commits = await commits_of(remote, match_id)
    assert len(commits) >= 4
    assert all(c.timeout for c in commits[1:])
    assert [c.clocks.taken_over for c in commits[1:3]] == [(True, False), (True, True)]
    _final, events = replay_in_process(default_registry().get("tic_tac_toe"), commits)
    assert [c.events for c in commits] == events


async def test_default_move_rpc(rules_server) -> None:
    from services.rules.client import RulesClient, RulesError

    async with RulesClient(f"127.0.0.1:{rules_server.port}") as client:
        played = await client.new_game("tic_tac_toe", 2)
        assert json.loads(await client.default_move("", played.state, 0)) == {
            "type": "place_mark",
            "cell": 0,
        }
        greedy = json.loads(await client.default_move("", played.state, 0, bot="greedy"))
        assert greedy["type"] == "place_mark"
        with pytest.raises(RulesError) as e:
            await client.default_move("", played.state, 1)
        assert e.value.reason == "not_awaited"
        with pytest.raises(RulesError) as e:
            await client.default_move("", played.state, 0, bot="nobody")
        assert e.value.reason == "unknown_bot"


class _Silent(RulesServicer):
    """Reads ApplyMoves calls and never answers them."""

    async def ApplyMoves(self, requests, context):
        async for _ in requests:
            pass
        yield rules_pb2.ApplyMovesResponse()


def _before_apply_moves(servicer, server) -> None:
    """Registers the unary RPCs only: a rules service from before ApplyMoves
    (gRPC answers UNIMPLEMENTED for it)."""
    service = rules_pb2.DESCRIPTOR.services_by_name["RulesService"]
    handlers = {
        m.name: grpc.unary_unary_rpc_method_handler(
            getattr(servicer, m.name),
            request_deserializer=getattr(rules_pb2, m.input_type.name).FromString,
            response_serializer=getattr(rules_pb2, m.output_type.name).SerializeToString,
        )
        for m in service.methods
        if m.name != "ApplyMoves"
    }
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(service.full_name, handlers),)
    )


async def _serving(servicer, register=rules_pb2_grpc.add_RulesServiceServicer_to_server):
    server = GrpcServer(ServerConfig(host="127.0.0.1", port=0, grace_seconds=0.1))
    server.add_service(register, servicer, SERVICE_NAME)
    await server.start()
    return server


async def test_a_decision_past_its_deadline_is_rules_unavailable() -> None:
    server = await _serving(_Silent())
    rules = GrpcRules(server.address, timeout_s=0.3, streams=2)
    try:
        new = await rules.setup("tic_tac_toe", 2, "", b"seed")
        started = asyncio.get_running_loop().time()
        with pytest.raises(RulesUnavailable, match="DEADLINE_EXCEEDED"):
            await rules.decide(new.state, 0, json.dumps({"type": "place_mark", "cell": 4}), b"")
        assert 0.25 < asyncio.get_running_loop().time() - started < 2
        streams = rules.client.streams
        assert streams.calls == 1 and not any(s.pending for s in streams._streams if s)
    finally:
        await rules.close()
        await server.stop(0.1)


@pytest.mark.parametrize(
    ("port_s", "service_s"),
    [(0.3, 5.0), (5.0, 0.3)],
    ids=["the port's deadline", "the service's timeout"],
)
async def test_a_move_whose_rules_call_outlives_the_tighter_bound_is_unavailable(
    start_service, settings, port_s, service_s
) -> None:
    """A move waits for the rules no longer than the tighter of the port's
    deadline (``GrpcRules``: every call carries it, so the service sets no
    timer of its own) and ``rules_timeout_s`` (a timer around the call when
    the port's deadline is longer): either way ``UNAVAILABLE
    rules_unavailable``, and nothing appended."""
    server = await _serving(_Silent())  # answers NewGame, never a move
    service = await start_service(
        rules=GrpcRules(server.address, timeout_s=port_s, streams=2), rules_timeout_s=service_s
    )
    try:
        a = service.player("guest:a")
        match_id = await a.create("tic_tac_toe", ["guest:a", "guest:b"])
        started = asyncio.get_running_loop().time()
        with pytest.raises(grpc.aio.AioRpcError) as e:
            await a.submit(match_id, json.dumps({"type": "place_mark", "cell": 4}))
        waited = asyncio.get_running_loop().time() - started
        assert e.value.code() == grpc.StatusCode.UNAVAILABLE
        assert error_info(e.value).reason == "rules_unavailable"
        assert 0.25 < waited < 2.5
        assert len(await stream_commits(settings.nats_url, match_id)) == 1
    finally:
        await server.stop(0.1)


async def test_a_rules_service_without_apply_moves_is_called_unary() -> None:
    server = await _serving(RulesServicer(), _before_apply_moves)
    rules = GrpcRules(server.address, timeout_s=2.0, streams=2)
    try:
        new = await rules.setup("tic_tac_toe", 2, "", b"seed")
        moves = [json.dumps({"type": "place_mark", "cell": c}) for c in (4, 0)]
        one = await rules.decide(new.state, 0, moves[0], b"")
        assert rules.client.streams.unary_only
        assert _scraped("tabletop_match_rules_unary_only") == 1
        two = await rules.decide(one.state, 1, moves[1], b"")
        assert two.awaiting == (0,)
        with pytest.raises(RulesError) as e:  # rejections as ever
            await rules.decide(two.state, 0, moves[1], b"")
        assert (e.value.status, e.value.reason) == (
            grpc.StatusCode.FAILED_PRECONDITION,
            "cell_taken",
        )
    finally:
        await rules.close()
        await server.stop(0.1)


def _scraped(name: str) -> float:
    value = REGISTRY.get_sample_value(name)
    assert value is not None, f"{name} is not exported"
    return value


_STREAM_COUNTS = {
    "opened": "tabletop_match_rules_streams_opened_total",
    "respread": "tabletop_match_rules_streams_respread_total",
    "calls": "tabletop_match_rules_stream_calls_total",
    "messages": "tabletop_match_rules_stream_messages_total",
    "resent": "tabletop_match_rules_calls_resent_total",
}


async def test_the_rules_streams_counts_are_scraped_as_match_metrics(rules_server) -> None:
    gc.collect()  # a client of an earlier test collected now, not between the readings
    before = {n: _scraped(m) for n, m in _STREAM_COUNTS.items()}
    rules = GrpcRules(f"127.0.0.1:{rules_server.port}", timeout_s=2.0, streams=2)
    try:
        state = (await rules.setup("tic_tac_toe", 2, "", b"seed")).state
        for seat, cell in enumerate((4, 0, 8)):
            move = json.dumps({"type": "place_mark", "cell": cell})
            state = (await rules.decide(state, seat % 2, move, b"")).state
        streams = rules.client.streams
        after = {n: _scraped(m) for n, m in _STREAM_COUNTS.items()}
        assert {n: after[n] - before[n] for n in _STREAM_COUNTS} == {
            n: getattr(streams, n) for n in _STREAM_COUNTS
        }
        assert streams.calls >= 3 and streams.opened >= 1
        assert _scraped("tabletop_match_rules_unary_only") == 0
    finally:
        await rules.close()
