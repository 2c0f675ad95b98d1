"""The standing fault suite: two match replicas on one nats-server and one
valkey-server, each reached through a ``FaultProxy``; bounded load (tic-tac-
toe, every move with an idempotency key and ``expected_version``, retried like
a careful client) while faults are injected one after the other; then the
audit.

The audit: every acknowledged move is in the stream exactly once at the
version it was acknowledged with; versions are contiguous; every projection
(each replica's memory, Redis) equals the engine's fold of the stream at its
version; every finished match has exactly one ``MatchFinished`` fact; nothing
answered "not applied" was applied.

The figures per fault: moves acknowledged, errors by status and reason during
the fault, the recovery time (from the end of the fault until every match
being played has had a move acknowledged again); overall: moves acked, lost,
doubled. ``tests/faults/test_faults.py`` runs it short in ``make test`` and
long in ``make test-slow``; ``bench.faults`` writes the figures.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import shutil
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import nats
import redis.asyncio as redis

from engine_core.decider import fold
from engine_core.registry import default_registry
from services.common.auth import AuthSettings, Tokens, bearer_metadata
from services.common.codecs import decode_state
from services.common.errors import error_info
from services.common.servers import NatsServer, ValkeyServer, _Process
from services.match.cache import RedisProjectionCache
from services.match.model import decode_commit, key_digest
from services.match.server import MatchServer
from services.match.settings import MatchSettings
from tabletop.match.v1 import match_pb2, match_pb2_grpc
from tests.faults.proxy import FaultProxy

REPO = Path(__file__).resolve().parents[2]
SECRET = "fault-suite-secret-0123456789-0123456789"
GAME = default_registry().get("tic_tac_toe")
RETRYABLE = {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED}
NOT_APPLIED = {"store_unavailable", "rules_unavailable"}


class _NotApplied(Exception):
    """The server said the move was not applied."""


# ================================================================ the stack
class ReplicaProcess(_Process):
    """The match service as its own process (``python -m services.match``) on
    a fixed port: it can be paused, killed with kill -9 and started again."""

    name = "match"

    def __init__(self, env: dict[str, str], data_dir: Path) -> None:
        super().__init__(data_dir=data_dir)
        self.env = {
            **os.environ,
            **env,
            "TABLETOP_MATCH_PORT": str(self.port),
            "TABLETOP_LOG_FORMAT": "json",
            "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""),
        }

    def _command(self) -> list[str]:
        return [sys.executable, "-m", "services.match"]

    def _env(self) -> dict[str, str]:
        return self.env

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"


class FaultStack:
    """nats-server and valkey-server (real processes), a proxy in front of
    each, and two match replicas connected through the proxies: the first in
    this process (the audit reads its projections in memory), the second its
    own process (it can be paused and killed)."""

    def __init__(self, *, store_timeout_s: float = 1.0) -> None:
        self.store_timeout_s = store_timeout_s
        self._dir = Path(tempfile.mkdtemp(prefix="tabletop-faults-"))
        self.nats = NatsServer(data_dir=self._dir / "nats")
        self.valkey = ValkeyServer(data_dir=self._dir / "valkey")
        self.nats_proxy: FaultProxy | None = None
        self.redis_proxy: FaultProxy | None = None
        self.replicas: list[MatchServer] = []  # in this process
        self.replica: ReplicaProcess | None = None  # the one in its own process
        self.tokens = Tokens(AuthSettings(secret=SECRET))

    async def start(self) -> FaultStack:
        await asyncio.to_thread(self.nats.start)
        await asyncio.to_thread(self.valkey.start)
        self.nats_proxy = await FaultProxy(self.nats.host, self.nats.port).start()
        self.redis_proxy = await FaultProxy(self.valkey.host, self.valkey.port).start()
        settings = MatchSettings(
            nats_url=self.nats_proxy.url("nats"),
            redis_url=self.redis_proxy.url("redis", "/0"),
            store_timeout_s=self.store_timeout_s,
            grace_s=0.2,
            auth=AuthSettings(secret=SECRET),
        )
        self.replica = ReplicaProcess(
            {
                "TABLETOP_NATS_URL": settings.nats_url,
                "TABLETOP_REDIS_URL": settings.redis_url,
                "TABLETOP_MATCH_STORE_TIMEOUT_S": str(self.store_timeout_s),
                "TABLETOP_JWT_SECRET": SECRET,
                "TABLETOP_MATCH_GRACE_S": "0.2",
                "TABLETOP_LOG_LEVEL": "WARNING",
            },
            self._dir / "match",
        )
        starting = asyncio.create_task(asyncio.to_thread(self.replica.start, 60.0))
        self.replicas.append(await MatchServer(settings).start())
        await starting
        return self

    @property
    def addresses(self) -> list[str]:
        assert self.replica is not None
        return [r.address for r in self.replicas] + [self.replica.address]

    async def stop(self) -> None:
        if self.replica is not None:
            await asyncio.to_thread(self.replica.close)
        for r in self.replicas:
            with contextlib.suppress(Exception):
                await r.stop(0.1)
        for p in (self.nats_proxy, self.redis_proxy):
            if p is not None:
                await p.stop()
        await asyncio.to_thread(self.nats.close)
        await asyncio.to_thread(self.valkey.close)
        shutil.rmtree(self._dir, ignore_errors=True)

    async def __aenter__(self) -> FaultStack:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()


# ================================================================== faults
@dataclass(frozen=True)
class Fault:
    """``begin`` injects the fault, ``end`` removes it ``duration_s`` later."""

    name: str
    begin: Callable[[FaultStack], Awaitable[None]]
    end: Callable[[FaultStack], Awaitable[None]]
    duration_s: float


async def _nothing(_stack: FaultStack) -> None:
    return None


def _proxy(which: str, **faults: Any) -> Callable[[FaultStack], Awaitable[None]]:
    async def run(stack: FaultStack) -> None:
        getattr(stack, f"{which}_proxy").set(**faults)

    return run


def _clear(which: str) -> Callable[[FaultStack], Awaitable[None]]:
    async def run(stack: FaultStack) -> None:
        getattr(stack, f"{which}_proxy").clear()

    return run


def _drop(which: str) -> Callable[[FaultStack], Awaitable[None]]:
    async def run(stack: FaultStack) -> None:
        getattr(stack, f"{which}_proxy").drop_all()

    return run


def _signal(server: str, action: str) -> Callable[[FaultStack], Awaitable[None]]:
    async def run(stack: FaultStack) -> None:
        process = getattr(stack, server)
        if action == "start":
            await asyncio.to_thread(process.start)
        else:
            await asyncio.to_thread(getattr(process, action))

    return run


def faults(seconds: float, *, long: bool = False) -> list[Fault]:
    """The faults in the order they are injected (``long``: all of them)."""
    out = [
        Fault("nats delay 150 ms", _proxy("nats", delay_s=0.15), _clear("nats"), seconds),
        Fault("nats connections dropped", _drop("nats"), _nothing, 0.0),
        Fault(
            "nats paused (SIGSTOP)", _signal("nats", "pause"), _signal("nats", "resume"), seconds
        ),
        Fault("nats blackholed", _proxy("nats", blackhole=True), _clear("nats"), seconds),
        Fault(
            "nats closed after 16 KB",
            _proxy("nats", close_after_bytes=16 * 1024),
            _clear("nats"),
            seconds,
        ),
        Fault(
            "redis killed (kill -9)", _signal("valkey", "kill"), _signal("valkey", "start"), seconds
        ),
        Fault(
            "a replica killed (kill -9)",
            _signal("replica", "kill"),
            _signal("replica", "start"),
            seconds,
        ),
    ]
    if long:
        out += [
            Fault(
                "nats bandwidth 20 KB/s",
                _proxy("nats", bandwidth_bps=20_000),
                _clear("nats"),
                seconds,
            ),
            Fault("redis blackholed", _proxy("redis", blackhole=True), _clear("redis"), seconds),
            Fault(
                "redis paused (SIGSTOP)",
                _signal("valkey", "pause"),
                _signal("valkey", "resume"),
                seconds,
            ),
            Fault(
                "nats killed (kill -9)", _signal("nats", "kill"), _signal("nats", "start"), seconds
            ),
            Fault("redis delay 100 ms", _proxy("redis", delay_s=0.1), _clear("redis"), seconds),
            Fault(
                "a replica paused (SIGSTOP)",
                _signal("replica", "pause"),
                _signal("replica", "resume"),
                seconds,
            ),
        ]
    return out


# ==================================================================== load
@dataclass
class Ack:
    match_id: str
    version: int
    player: str
    key: str


@dataclass
class PhaseFigures:
    name: str
    acked: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    recovery_s: float | None = None


@dataclass
class Load:
    """Matches played by ``drivers`` concurrent clients, each a careful
    client: an idempotency key and ``expected_version`` on every move, a
    retry with the same key on the other replica after UNAVAILABLE or a
    deadline, until acknowledged."""

    stack: FaultStack
    drivers: int = 8
    max_moves: int = 100_000
    rpc_timeout_s: float = 3.0
    give_up_s: float = 60.0
    seed: int = 7
    acks: list[Ack] = field(default_factory=list)
    matches: list[str] = field(default_factory=list)
    phases: list[PhaseFigures] = field(default_factory=list)
    unexpected: list[str] = field(default_factory=list)
    not_applied: list[tuple[str, str, str]] = field(default_factory=list)
    last_ack: dict[int, float] = field(default_factory=dict)
    active: set[int] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.phase = PhaseFigures("calm")
        self.phases.append(self.phase)
        self._stop = asyncio.Event()
        self._channels = [grpc.aio.insecure_channel(a) for a in self.stack.addresses]
        self._stubs = [match_pb2_grpc.MatchServiceStub(c) for c in self._channels]
        self._rng = random.Random(self.seed)

    def enter(self, name: str) -> PhaseFigures:
        self.phase = PhaseFigures(name)
        self.phases.append(self.phase)
        return self.phase

    def stop(self) -> None:
        self._stop.set()

    async def close(self) -> None:
        for c in self._channels:
            await c.close()

    @property
    def acked(self) -> int:
        return len(self.acks)

    async def run(self) -> None:
        await asyncio.gather(*(self._driver(i) for i in range(self.drivers)))

    async def _call(self, driver: int, method: str, request: Any, player: str) -> Any:
        """One request until it is answered with something other than
        UNAVAILABLE or a deadline; alternates replicas; None if the load stops."""
        metadata = bearer_metadata(self.stack.tokens.issue(player))
        started = time.monotonic()
        attempt = driver
        unknown = False  # an earlier attempt may have been applied
        while True:
            stub = self._stubs[attempt % len(self._stubs)]
            attempt += 1
            phase = self.phase
            try:
                return await getattr(stub, method)(
                    request, metadata=metadata, timeout=self.rpc_timeout_s
                )
            except grpc.aio.AioRpcError as e:
                info = error_info(e)
                reason = info.reason if info is not None else ""
                phase.errors[f"{e.code().name} {reason}".strip()] += 1
                if e.code() not in RETRYABLE:
                    self.unexpected.append(
                        f"{method} to replica {(attempt - 1) % len(self._stubs)} as {player} "
                        f"after {attempt - driver} attempts: " + " ".join(str(request).split())
                    )
                    raise
                if reason not in NOT_APPLIED:
                    unknown = True  # outcome_unknown, a deadline: maybe applied
                elif method == "SubmitMove" and not unknown:
                    # "Not applied" speaks for the attempts it answers: after
                    # an unknown one, that one still may land, so the same key
                    # goes on. Else it is taken at its word: a new key for the
                    # next try. Had it been applied after all,
                    # expected_version would make that try ABORTED (an
                    # unexpected error), and the audit finds the key.
                    self.not_applied.append((request.match_id, player, request.idempotency_key))
                    raise _NotApplied from None
                if time.monotonic() - started > self.give_up_s:
                    raise
                await asyncio.sleep(0.05 + self._rng.random() * 0.1)

    async def _driver(self, driver: int) -> None:
        players = [f"guest:d{driver}x", f"guest:d{driver}o"]
        while not self._stop.is_set() and self.acked < self.max_moves:
            self.active.add(driver)
            try:
                await self._play_one(driver, players)
            except grpc.aio.AioRpcError as e:
                info = error_info(e)
                self.unexpected.append(
                    f"driver {driver}: {e.code().name} {info.reason if info else ''} {e.details()}"
                )
                return
            finally:
                self.active.discard(driver)

    async def _play_one(self, driver: int, players: list[str]) -> None:
        create = match_pb2.CreateMatchRequest(
            game="tic_tac_toe", players=players, idempotency_key=uuid.uuid4().hex
        )
        reply = await self._call(driver, "CreateMatch", create, players[0])
        match_id = reply.match_id
        self.matches.append(match_id)
        board = [-1] * 9
        version = 0
        while not self._stop.is_set() and self.acked < self.max_moves:
            seat = version % 2
            cell = self._rng.choice([c for c in range(9) if board[c] == -1])
            while True:
                key = uuid.uuid4().hex
                request = match_pb2.SubmitMoveRequest(
                    match_id=match_id,
                    move_json=f'{{"type": "place_mark", "cell": {cell}}}',
                    expected_version=version,
                    idempotency_key=key,
                )
                try:
                    reply = await self._call(driver, "SubmitMove", request, players[seat])
                    break
                except _NotApplied:
                    await asyncio.sleep(0.05 + self._rng.random() * 0.1)
            if (reply.version, reply.seat) != (version + 1, seat):
                self.unexpected.append(f"{match_id}: answered {reply} for version {version + 1}")
                return
            version = reply.version
            board[cell] = seat
            self.acks.append(Ack(match_id, version, players[seat], key))
            self.phase.acked += 1
            self.last_ack[driver] = time.monotonic()
            if reply.status == match_pb2.MATCH_STATUS_FINISHED:
                return


async def inject(
    load: Load, fault_list: list[Fault], *, calm_s: float, recover_max_s: float
) -> None:
    """Each fault in turn while ``load`` runs: inject, hold, remove, then
    measure how long until every match in play has moved again."""
    await asyncio.sleep(calm_s)
    for fault in fault_list:
        phase = load.enter(fault.name)
        await fault.begin(load.stack)
        await asyncio.sleep(fault.duration_s)
        await fault.end(load.stack)
        ended = time.monotonic()
        load.enter(f"after {fault.name}")
        waiting = set(load.active)
        deadline = ended + recover_max_s
        while time.monotonic() < deadline:
            waiting = {d for d in waiting if d in load.active and load.last_ack.get(d, 0) < ended}
            if not waiting:
                break
            await asyncio.sleep(0.02)
        phase.recovery_s = (time.monotonic() - ended) if not waiting else None
    await asyncio.sleep(calm_s)


# =================================================================== audit
@dataclass
class Audit:
    matches: int = 0
    finished: int = 0
    commits: int = 0
    acked: int = 0
    lost: int = 0
    doubled: int = 0
    misplaced: int = 0
    gaps: int = 0
    projections_checked: int = 0
    projections_wrong: int = 0
    facts_missing: int = 0
    facts_doubled: int = 0
    not_applied_but_applied: int = 0
    unacknowledged: int = 0  # commits whose client never got an answer (given up)
    problems: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not (
            self.lost
            or self.doubled
            or self.misplaced
            or self.gaps
            or self.projections_wrong
            or self.facts_missing
            or self.facts_doubled
            or self.not_applied_but_applied
            or self.unacknowledged
        )


async def audit(stack: FaultStack, load: Load, *, facts_timeout_s: float = 20.0) -> Audit:
    """Check the stream, the projections and the facts against what was acknowledged."""
    for r in stack.replicas:
        if r.app is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(r.app.drain(), 10)
    out = Audit(matches=len(load.matches), acked=load.acked)
    nc = await nats.connect(stack.nats.url)  # straight to the server, not through the proxy
    client = redis.from_url(stack.valkey.url)
    try:
        js = nc.jetstream(timeout=10)
        streams: dict[str, list[tuple[int, Any]]] = {}
        for m in dict.fromkeys(load.matches):
            streams[m] = await _commits(js, m)
        by_key: dict[tuple[str, str], list[int]] = {}
        for m, items in streams.items():
            versions = [c.version for _s, c in items]
            out.commits += len(items)
            if versions != list(range(len(items))):
                out.gaps += 1
                out.problems.append(f"{m}: versions {versions}")
            for _s, c in items[1:]:
                by_key.setdefault((m, c.key), []).append(c.version)
            if items and items[-1][1].outcome is not None:
                out.finished += 1
        for (m, _k), vs in by_key.items():
            if len(vs) > 1:
                out.doubled += len(vs) - 1
                out.problems.append(f"{m}: one key at versions {vs}")
        for a in load.acks:
            found = by_key.get((a.match_id, key_digest(a.match_id, a.player, a.key)), [])
            if not found:
                out.lost += 1
                out.problems.append(f"{a.match_id}: acked version {a.version} not in the stream")
            elif found != [a.version]:
                out.misplaced += 1
                out.problems.append(f"{a.match_id}: acked at {a.version}, stored at {found}")
        for m, player, key in load.not_applied:
            if by_key.get((m, key_digest(m, player, key))):
                out.not_applied_but_applied += 1
                out.problems.append(f"{m}: answered 'not applied', but applied")
        acked_keys = {(a.match_id, key_digest(a.match_id, a.player, a.key)) for a in load.acks}
        unacked = [k for k in by_key if k not in acked_keys]
        out.unacknowledged = len(unacked)

        # projections: each replica's memory and Redis, at their version
        folds = {m: _folds(items) for m, items in streams.items()}
        cache = RedisProjectionCache(client)
        for m in streams:
            candidates = [r.app._hot.get(m) for r in stack.replicas if r.app is not None]
            with contextlib.suppress(Exception):
                candidates.append(await cache.get(m))
            for p in candidates:
                if p is None:
                    continue
                out.projections_checked += 1
                states = folds[m]
                if p.version >= len(states) or decode_state(GAME, p.state) != states[p.version]:
                    out.projections_wrong += 1
                    out.problems.append(f"{m}: projection at version {p.version} is not the fold")
                    continue
                # its keys: exactly the keys of the commits up to its version, at their sequences
                expected = {c.key: seq for seq, c in streams[m][1 : p.version + 1]}
                if p.keys != expected or p.seq != streams[m][p.version][0]:
                    out.projections_wrong += 1
                    wrong = {k: v for k, v in p.keys.items() if expected.get(k) != v}
                    out.problems.append(
                        f"{m}: projection at version {p.version} (seq {p.seq}) has keys "
                        f"{wrong} not in the stream, misses {set(expected) - set(p.keys)}"
                    )

        # one fact per finished match (the relay may still be at work)
        finished = {m for m, items in streams.items() if items and items[-1][1].outcome is not None}
        deadline = time.monotonic() + facts_timeout_s
        while True:
            counts = await _fact_counts(js)
            missing = [m for m in finished if counts.get(m, 0) == 0]
            if not missing or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.2)
        out.facts_missing = len(missing)
        out.facts_doubled = sum(1 for m in finished if counts.get(m, 0) > 1)
        stray = [m for m in streams if m not in finished and counts.get(m, 0)]
        out.facts_doubled += len(stray)
        for m in missing:
            out.problems.append(f"{m}: finished without a MatchFinished fact")
    finally:
        await nc.close()
        await client.aclose()
    return out


async def _commits(js: Any, match_id: str) -> list[tuple[int, Any]]:
    out, seq = [], 0
    while True:
        try:
            msg = await js.get_msg("MATCHES", seq=seq + 1, subject=f"match.{match_id}", next=True)
        except nats.js.errors.NotFoundError:
            return out
        seq = msg.seq
        out.append((seq, decode_commit(msg.data)))


def _folds(items: list[tuple[int, Any]]) -> list[Any]:
    states, state = [], None
    for _s, c in items:
        state = fold(GAME, [GAME.codec().event_json.decode(e) for e in c.events], state)
        states.append(state)
    return states


async def _fact_counts(js: Any) -> dict[str, int]:
    info = await js.stream_info("RESULTS", subjects_filter="results.*")
    subjects = info.state.subjects or {}
    return {s.split(".", 1)[1]: n for s, n in subjects.items()}


# ================================================================= a run
@dataclass
class Report:
    phases: list[PhaseFigures]
    audit: Audit
    unexpected: list[str]
    seconds: float

    def as_dict(self) -> dict[str, Any]:
        a = self.audit
        return {
            "seconds": round(self.seconds, 1),
            "moves_acked": a.acked,
            "lost": a.lost,
            "doubled": a.doubled,
            "misplaced": a.misplaced,
            "version_gaps": a.gaps,
            "matches": a.matches,
            "finished": a.finished,
            "projections_checked": a.projections_checked,
            "projections_wrong": a.projections_wrong,
            "facts_missing": a.facts_missing,
            "facts_doubled": a.facts_doubled,
            "not_applied_but_applied": a.not_applied_but_applied,
            "unacknowledged_commits": a.unacknowledged,
            "unexpected_errors": self.unexpected,
            "problems": a.problems[:50],
            "phases": [
                {
                    "phase": p.name,
                    "acked": p.acked,
                    "errors": dict(p.errors),
                    **(
                        {"recovery_s": None if p.recovery_s is None else round(p.recovery_s, 2)}
                        if not p.name.startswith(("calm", "after"))
                        else {}
                    ),
                }
                for p in self.phases
            ],
        }

    def table(self) -> str:
        lines = [
            f"{'phase':34} {'acked':>6} {'recovery':>9}  errors by status",
        ]
        for p in self.phases:
            rec = "" if p.recovery_s is None else f"{p.recovery_s:7.2f} s"
            if not p.name.startswith(("calm", "after")) and p.recovery_s is None:
                rec = "   never"
            errs = ", ".join(f"{k} {n}" for k, n in sorted(p.errors.items())) or "-"
            lines.append(f"{p.name:34} {p.acked:6d} {rec:>9}  {errs}")
        a = self.audit
        lines.append(
            f"acked {a.acked}, lost {a.lost}, doubled {a.doubled}, misplaced {a.misplaced}, "
            f"gaps {a.gaps}; {a.matches} matches ({a.finished} finished), facts missing "
            f"{a.facts_missing} doubled {a.facts_doubled}; projections {a.projections_checked} "
            f"checked, {a.projections_wrong} wrong; 'not applied' but applied "
            f"{a.not_applied_but_applied}; commits never acked {a.unacknowledged}; "
            f"{self.seconds:.1f} s"
        )
        lines += [f"  problem: {x}" for x in a.problems[:20]]
        lines += [f"  unexpected: {x}" for x in self.unexpected[:20]]
        return "\n".join(lines)


async def run_suite(
    *,
    long: bool = False,
    fault_s: float = 1.5,
    calm_s: float = 1.0,
    drivers: int = 6,
    max_moves: int = 100_000,
    recover_max_s: float = 15.0,
) -> Report:
    started = time.monotonic()
    async with FaultStack() as stack:
        load = Load(stack, drivers=drivers, max_moves=max_moves)
        runner = asyncio.create_task(load.run())
        try:
            await inject(
                load, faults(fault_s, long=long), calm_s=calm_s, recover_max_s=recover_max_s
            )
        finally:
            load.stop()
            await asyncio.wait_for(runner, 90)
            await load.close()
        for p in (stack.nats_proxy, stack.redis_proxy):
            assert p is not None
            p.clear()
        result = await audit(stack, load)
    return Report(load.phases, result, load.unexpected, time.monotonic() - started)
