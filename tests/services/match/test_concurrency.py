"""Races between service instances, and retried submits."""

from __future__ import annotations

import asyncio
import json

import grpc
import pytest

from services.common.errors import error_info
from services.match.ports import InProcessRules
from tests.services.match.conftest import make_registry, stream_commits


class GatedRules(InProcessRules):
    """The engine, but every ``decide`` waits at a gate: lets a test make two
    instances decide on the same version before either appends."""

    def __init__(self, gate: asyncio.Barrier) -> None:
        super().__init__(make_registry())
        self.gate = gate
        self.decides = 0

    async def decide(self, state, seat, move, entropy):
        decision = await super().decide(state, seat, move, entropy)
        self.decides += 1
        if self.decides == 1:
            await self.gate.wait()
        return decision


def mark(cell: int) -> str:
    return json.dumps({"type": "place_mark", "cell": cell})


def bid(amount: int) -> str:
    return json.dumps({"type": "bid", "amount": amount})


async def two_instances(start_service, game: str, players: list[str]):
    gate = asyncio.Barrier(2)
    one = await start_service(rules=GatedRules(gate))
    two = await start_service(rules=GatedRules(gate))
    match_id = await one.player(players[0]).create(game, players)
    # both instances hold the projection at version 0
    await one.player(players[0]).get(match_id)
    await two.player(players[0]).get(match_id)
    return one, two, match_id


async def test_racing_moves_without_expected_version_are_decided_again(
    start_service, settings
) -> None:
    # Simultaneous bids: both seats may move at version 0. The loser of the
    # append race is decided again on the winner's commit and applies too.
    one, two, match_id = await two_instances(start_service, "secret_bids", ["guest:a", "guest:b"])
    r1, r2 = await asyncio.gather(
        one.player("guest:a").submit(match_id, bid(3)),
        two.player("guest:b").submit(match_id, bid(5)),
    )
    assert sorted([r1.version, r2.version]) == [1, 2]
    commits = await stream_commits(settings.nats_url, match_id)
    assert [c.version for c in commits] == [0, 1, 2]
    assert sorted(c.seat for c in commits[1:]) == [0, 1]


async def test_racing_moves_of_one_seat_apply_exactly_once(start_service, settings) -> None:
    one, two, match_id = await two_instances(start_service, "tic_tac_toe", ["guest:a", "guest:b"])
    results = await asyncio.gather(
        one.player("guest:a").submit(match_id, mark(0)),
        two.player("guest:a").submit(match_id, mark(4)),
        return_exceptions=True,
    )
    ok = [r for r in results if not isinstance(r, Exception)]
    failed = [r for r in results if isinstance(r, Exception)]
    assert len(ok) == 1 and ok[0].version == 1
    # decided again on the winner's commit: it is now seat 1's turn
    assert failed[0].code() == grpc.StatusCode.FAILED_PRECONDITION
    assert error_info(failed[0]).reason == "not_your_turn"
    commits = await stream_commits(settings.nats_url, match_id)
    assert [c.version for c in commits] == [0, 1]


async def test_racing_with_expected_version_aborts_the_loser(start_service, settings) -> None:
    one, two, match_id = await two_instances(start_service, "secret_bids", ["guest:a", "guest:b"])
    results = await asyncio.gather(
        one.player("guest:a").submit(match_id, bid(3), expected_version=0),
        two.player("guest:b").submit(match_id, bid(5), expected_version=0),
        return_exceptions=True,
    )
    ok = [r for r in results if not isinstance(r, Exception)]
    failed = [r for r in results if isinstance(r, Exception)]
    assert len(ok) == 1 and ok[0].version == 1
    assert failed[0].code() == grpc.StatusCode.ABORTED
    info = error_info(failed[0])
    assert info.reason == "stale_version" and info.metadata["current_version"] == "1"
    assert len(await stream_commits(settings.nats_url, match_id)) == 2


async def test_the_same_key_twice_applies_once_and_answers_the_same(service, settings) -> None:
    a = service.player("guest:a")
    match_id = await a.create("secret_bids", ["guest:a", "guest:b"])
    first = await a.submit(match_id, bid(3), idempotency_key="k1")
    again = await a.submit(match_id, bid(3), idempotency_key="k1")
    assert again == first
    assert len(await stream_commits(settings.nats_url, match_id)) == 2


async def test_a_retry_reaching_a_stale_instance_gets_the_first_answer(
    start_service, settings
) -> None:
    one = await start_service()
    two = await start_service()
    match_id = await one.player("guest:a").create("secret_bids", ["guest:a", "guest:b"])
    await two.player("guest:a").get(match_id)  # instance two caches version 0
    first = await one.player("guest:a").submit(match_id, bid(3), idempotency_key="k1")
    # instance two still believes version 0: its append meets 10071, and the
    # commits since hold the same key
    again = await two.player("guest:a").submit(match_id, bid(3), idempotency_key="k1")
    assert again == first
    assert len(await stream_commits(settings.nats_url, match_id)) == 2


@pytest.mark.parametrize("flush", [False, True])
async def test_a_retry_after_the_duplicate_window_still_applies_once(
    start_service, settings, valkey_server, flush
) -> None:
    one = await start_service(duplicate_window_s=0.3)
    a = one.player("guest:a")
    match_id = await a.create("secret_bids", ["guest:a", "guest:b"])
    first = await a.submit(match_id, bid(3), idempotency_key="k1")
    await asyncio.sleep(0.5)
    if flush:  # nothing cached anywhere: the answer comes from the stream
        await one.app.drain()
        await one.app.cache.client.flushall()
        one.app.forget()
    again = await a.submit(match_id, bid(3), idempotency_key="k1")
    assert again == first
    assert len(await stream_commits(settings.nats_url, match_id)) == 2


async def test_keys_are_scoped_to_the_caller(service, settings) -> None:
    a, b = service.player("guest:a"), service.player("guest:b")
    match_id = await a.create("secret_bids", ["guest:a", "guest:b"])
    ra = await a.submit(match_id, bid(3), idempotency_key="same")
    rb = await b.submit(match_id, bid(4), idempotency_key="same")
    assert (ra.version, rb.version) == (1, 2)


async def test_creating_twice_with_one_key_returns_the_same_match(service, settings) -> None:
    mm = service.service("matchmaking")
    m1 = await mm.create("tic_tac_toe", ["guest:a", "guest:b"], idempotency_key="ticket-9")
    m2 = await mm.create("tic_tac_toe", ["guest:a", "guest:b"], idempotency_key="ticket-9")
    assert m1 == m2
    assert len(await stream_commits(settings.nats_url, m1)) == 1
    # the same key from another creator names another match
    m3 = await service.service("other").create(
        "tic_tac_toe", ["guest:a", "guest:b"], idempotency_key="ticket-9"
    )
    assert m3 != m1


async def test_a_rejection_on_a_stale_projection_is_decided_again(start_service, settings) -> None:
    one = await start_service()
    two = await start_service()
    match_id = await one.player("guest:a").create("tic_tac_toe", ["guest:a", "guest:b"])
    await two.player("guest:b").get(match_id)  # two holds version 0: seat 0 to move
    await one.player("guest:a").submit(match_id, mark(4))
    # on two's stale state this is not seat 1's turn; on the stream's head it is
    reply = await two.player("guest:b").submit(match_id, mark(0))
    assert reply.version == 2
    # a rejection on a current projection stays a rejection
    with pytest.raises(grpc.aio.AioRpcError) as e:
        await two.player("guest:b").submit(match_id, mark(1))
    assert error_info(e.value).reason == "not_your_turn"
    assert len(await stream_commits(settings.nats_url, match_id)) == 3


async def test_a_storm_of_concurrent_and_retried_submits_applies_each_key_once(
    start_service, settings
) -> None:
    # Four players bid at once each round, every bid sent twice with the same
    # key to two different instances at the same time.
    services = [await start_service() for _ in range(3)]
    ids = [f"guest:p{s}" for s in range(4)]
    match_id = await services[0].player(ids[0]).create("secret_bids", ids)
    replies: dict[str, list] = {}

    async def send(service, player: str, key: str, amount: int) -> None:
        reply = await service.player(player).submit(match_id, bid(amount), idempotency_key=key)
        replies.setdefault(key, []).append(reply)

    for rnd in range(3):
        calls = []
        for s, player in enumerate(ids):
            key = f"{player}-round-{rnd}"
            calls.append(send(services[s % 3], player, key, s + rnd))
            calls.append(send(services[(s + 1) % 3], player, key, s + rnd))
        await asyncio.gather(*calls)

    commits = await stream_commits(settings.nats_url, match_id)
    assert [c.version for c in commits] == list(range(13))
    assert commits[-1].outcome is not None
    assert len({c.key for c in commits[1:]}) == 12
    for key, answers in replies.items():
        assert len(answers) == 2 and answers[0] == answers[1], key
    assert sorted(a[0].version for a in replies.values()) == list(range(1, 13))


# A copy behind the stream is not a race lost: with a move aborted at its
# first race lost (``decide_attempts=1``), a move made on an instance whose
# copy another instance's commit left behind is still applied, whichever way
# the copy shows it: an append refused (10071) or a move the rules refuse on it.


async def test_a_copy_left_behind_is_not_a_race_lost_when_the_append_is_refused(
    start_service, settings
) -> None:
    one = await start_service(decide_attempts=1)
    two = await start_service()
    match_id = await one.player("guest:a").create("secret_bids", ["guest:a", "guest:b"])
    await one.player("guest:a").get(match_id)  # instance one holds version 0
    await two.player("guest:b").submit(match_id, bid(5))
    # decided on version 0 (bids are simultaneous: the rules take it), refused
    # by JetStream, then decided again on version 1 and applied
    reply = await one.player("guest:a").submit(match_id, bid(3))
    assert reply.version == 2
    commits = await stream_commits(settings.nats_url, match_id)
    assert [c.version for c in commits] == [0, 1, 2]


async def test_a_copy_left_behind_is_not_a_race_lost_when_the_rules_refuse_on_it(
    start_service, settings
) -> None:
    one = await start_service(decide_attempts=1)
    two = await start_service()
    match_id = await one.player("guest:a").create("tic_tac_toe", ["guest:a", "guest:b"])
    await one.player("guest:a").get(match_id)  # instance one holds version 0: X to move
    await two.player("guest:a").submit(match_id, mark(4))
    # O's move, refused on version 0 (not O's turn there), is checked against
    # the stream's head, decided again on version 1 and applied
    reply = await one.player("guest:b").submit(match_id, mark(0))
    assert reply.version == 2
    assert len(await stream_commits(settings.nats_url, match_id)) == 3


class SecondDecideGated(InProcessRules):
    """The engine; the second ``decide`` waits until the test releases it."""

    def __init__(self) -> None:
        super().__init__(make_registry())
        self.decides = 0
        self.reached = asyncio.Event()
        self.release = asyncio.Event()

    async def decide(self, state, seat, move, entropy):
        decision = await super().decide(state, seat, move, entropy)
        self.decides += 1
        if self.decides == 2:
            self.reached.set()
            await self.release.wait()
        return decision


async def test_a_move_that_loses_a_race_on_the_head_it_read_is_aborted(
    start_service, settings
) -> None:
    rules = SecondDecideGated()
    one = await start_service(rules=rules, decide_attempts=1)
    two = await start_service()
    players = ["guest:a", "guest:b", "guest:c"]
    match_id = await one.player("guest:a").create("secret_bids", players)
    await one.player("guest:a").get(match_id)  # instance one holds version 0
    await two.player("guest:b").submit(match_id, bid(5))
    move = asyncio.ensure_future(one.player("guest:a").submit(match_id, bid(3)))
    # refused on its copy, read the head (version 1), decided again there...
    await asyncio.wait_for(rules.reached.wait(), 10)
    # ...and another commit comes first again: a race lost on the head
    await two.player("guest:c").submit(match_id, bid(4))
    rules.release.set()
    with pytest.raises(grpc.aio.AioRpcError) as e:
        await move
    assert e.value.code() == grpc.StatusCode.ABORTED
    info = error_info(e.value)
    assert info.reason == "too_much_contention" and info.metadata["current_version"] == "2"
    assert len(await stream_commits(settings.nats_url, match_id)) == 3
