"""Crash safety: a replica killed at any step of the process manager, then a
restart or another replica, never creates a match twice and never skips one;
the tournament finishes with every result recorded once.

In process: a fault hook stops a replica dead at a named step (its manager
task is cancelled where it stands, nothing after that line runs), a fresh
replica with an empty memory takes over. Out of process: replicas run as
``python -m services.tournaments`` and are SIGKILLed while rounds are played.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import subprocess
import sys
from collections import Counter

import pytest

from services.common.servers import free_port
from services.tournaments.model import (
    MatchResultRecorded,
    RoundCompleted,
    RoundStarted,
    TournamentFinished,
)
from tabletop.tournaments.v1 import tournaments_pb2 as pb

from .conftest import (
    ORGANISER,
    SECRET,
    create,
    finished,
    match_subjects,
    register_bots,
    tournament_events,
    until,
)
from .sim import replay_undisturbed


class Killed(BaseException):
    """A replica stopped dead (not an Exception: no handler catches it)."""


def kill_at(server, point: str, nth: int = 1):
    """Arm ``server`` to die at the ``nth`` time it reaches ``point``."""
    hits = Counter()
    state = {"dead": False}

    def hook(name: str, **_where) -> None:
        if state["dead"] or name != point:
            return
        hits[name] += 1
        if hits[name] == nth:
            state["dead"] = True
            server._task.cancel()  # the whole process manager stops here
            raise Killed(point)

    server.app.fault = hook
    return state


async def check_exactly_once(stack, tid: str, t: pb.Tournament) -> None:
    ids = [m for r in t.rounds for tb in r.tables for m in tb.match_ids]
    assert len(ids) == len(set(ids))
    subjects = await match_subjects(stack.nats_url)
    assert {f"match.{m}" for m in ids} == set(subjects)  # no match outside the tables
    events = await tournament_events(stack.nats_url, tid)
    results = [e.match_id for e in events if isinstance(e, MatchResultRecorded)]
    assert sorted(results) == sorted(ids)  # each recorded once
    started = [e.round for e in events if isinstance(e, RoundStarted)]
    completed = [e.round for e in events if isinstance(e, RoundCompleted)]
    assert started == completed == list(range(1, len(t.rounds) + 1))
    same_as_undisturbed(events)


def same_as_undisturbed(events: list) -> None:
    """Pairings and standings are those of an undisturbed run with the same
    seed and the same results."""
    calm = replay_undisturbed(events)
    rounds = [e for e in events if isinstance(e, RoundStarted)]
    assert [[tb.players for tb in r.tables] for r in rounds] == [
        [tuple(tb.players) for tb in r.tables] for r in calm.rounds
    ]
    assert [r.byes for r in rounds] == [tuple(r.byes) for r in calm.rounds]
    (done,) = [e for e in events if isinstance(e, TournamentFinished)]
    assert done.standings == calm.standings


POINTS = [
    "after_create",
    "before_round_started",
    "after_record",
    "before_round_completed",
    "before_finished",
]


@pytest.mark.parametrize("point", POINTS)
async def test_a_replica_killed_at_each_step_is_taken_over(stack, point):
    first = await stack.replica()
    stub = stack.stub(first)
    tid = await create(stub, "tic_tac_toe", pb.FORMAT_SWISS, rounds=3)
    await register_bots(stub, tid, 6)
    await stub.Start(pb.StartRequest(tournament_id=tid), metadata=ORGANISER)
    state = kill_at(first, point, nth=1 if point == "before_finished" else 2)
    await until(lambda: asyncio.sleep(0, state["dead"]), timeout=60)
    # the dead replica answers nothing more; a fresh one takes over
    await first.stop(0)
    second = await stack.replica()
    t = await finished(stack.stub(second), tid, timeout=60)
    assert len(t.rounds) == 3
    await check_exactly_once(stack, tid, t)


async def test_many_kills_with_two_replicas(stack):
    """Two replicas share the work; one of them is killed again and again at
    random steps and replaced, while the other keeps going."""
    rng = random.Random(7)
    survivor = await stack.replica()
    stub = stack.stub(survivor)
    tid = await create(stub, "tic_tac_toe", pb.FORMAT_SWISS, rounds=4)
    await register_bots(stub, tid, 10)
    victim = await stack.replica()
    await stub.Start(pb.StartRequest(tournament_id=tid), metadata=ORGANISER)
    kills = 0
    while kills < 6:
        state = kill_at(victim, rng.choice(POINTS), nth=1)
        with contextlib.suppress(AssertionError):  # that step may not come round here
            await until(lambda state=state: asyncio.sleep(0, state["dead"]), timeout=5)
        t = await stub.GetTournament(pb.GetTournamentRequest(tournament_id=tid), metadata=ORGANISER)
        if t.status == pb.STATUS_FINISHED:
            break
        if state["dead"]:
            kills += 1
            await victim.stop(0)
            victim = await stack.replica()
    t = await finished(stub, tid, timeout=60)
    assert kills >= 1
    await check_exactly_once(stack, tid, t)


def serving(p: subprocess.Popen) -> bool:
    return b"listening on" in p.log_path.read_bytes()  # type: ignore[attr-defined]


@pytest.fixture
def spawn(stack, tmp_path):
    procs: list[subprocess.Popen] = []

    def start() -> subprocess.Popen:
        env = dict(os.environ)
        env.update(
            TABLETOP_NATS_URL=stack.nats_url,
            TABLETOP_REDIS_URL=stack.redis_url,
            TABLETOP_MATCH_ADDR=stack.match.address,
            TABLETOP_JWT_SECRET=SECRET,
            TABLETOP_TOURNAMENTS_PORT=str(free_port()),
            TABLETOP_TOURNAMENTS_SWEEP_S="0.2",
            TABLETOP_TOURNAMENTS_RECONCILE_S="1",
            TABLETOP_LOG_LEVEL="warning",
        )
        path = tmp_path / f"replica-{len(procs)}.log"
        log = open(path, "wb")  # noqa: SIM115
        p = subprocess.Popen(
            [sys.executable, "-m", "services.tournaments"],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        p.log_path = path  # type: ignore[attr-defined]
        procs.append(p)
        return p

    yield start
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGKILL)
            p.wait(10)


async def test_sigkilled_replicas_never_create_twice_nor_skip(stack, spawn):
    """Real processes, SIGKILL while rounds are being played and started."""
    helper = await stack.replica()  # takes no part: only answers the test's calls
    helper.manager.sweep_s = 3600
    helper._task.cancel()
    stub = stack.stub(helper)
    # Dwarves Duel: long enough matches that rounds outlast a replica's start
    tid = await create(stub, "dwarves_duel", pb.FORMAT_SWISS, rounds=5)
    await register_bots(stub, tid, 8)
    replicas = [spawn(), spawn()]
    await asyncio.sleep(0)
    await stub.Start(pb.StartRequest(tournament_id=tid), metadata=ORGANISER)
    rng = random.Random(11)
    kills = 0
    while kills < 6:
        # kill once the replica serves (so the round it works on moves on)
        i = rng.randrange(len(replicas))
        await until(lambda p=replicas[i]: asyncio.sleep(0, serving(p)), timeout=30)
        await asyncio.sleep(rng.uniform(0.2, 1.0))
        t = await stub.GetTournament(pb.GetTournamentRequest(tournament_id=tid), metadata=ORGANISER)
        if t.status == pb.STATUS_FINISHED:
            break
        replicas[i].send_signal(signal.SIGKILL)
        replicas[i].wait(10)
        kills += 1
        replicas[i] = spawn()
    t = await finished(stub, tid, timeout=90)
    assert kills >= 2
    assert len(t.rounds) == 5
    await check_exactly_once(stack, tid, t)
