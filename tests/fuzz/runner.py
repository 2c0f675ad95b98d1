"""The fuzz run: seeded bad inputs into every public RPC of the real servers.

The stack: nats-server and valkey-server (real, free ports), the rules service
as its own process, the match service (calling that rules service over gRPC)
and the matchmaking service (API, matchmaker creating matches through the
match service) in this process. Every RPC of ``RulesService``,
``MatchService``, ``AuthService``, ``MatchmakingService`` and
``TournamentService`` (the tournament service beside them) gets requests built
from its descriptor (``tests.fuzz.inputs``), with random tokens; a share of
calls plays real moves so the matches under attack move on.

Counted, and all must be 0:

* ``crashes``: a server that stopped answering its health check, or the rules
  process gone;
* ``internal``: an answer with status INTERNAL or UNKNOWN (or an unhandled
  error logged);
* ``hangs``: a unary call past its deadline, a stream that sent neither a
  message nor a status in time (where one is due at once);
* ``corrupted``: a match whose projection (this replica's, Redis's) differs
  from the engine's fold of its stream, whose versions are not contiguous, or
  whose moves do not decide to the stored events again.

``python -m tests.fuzz.runner --inputs 5000 --seed 1`` prints the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from engine_core.bots import RandomBot
from engine_core.decider import apply, fold, start
from engine_core.registry import default_registry
from engine_core.rng import Rng
from services.common.auth import AuthSettings, Tokens, bearer_metadata
from services.common.codecs import codec_for, decode_state, encode_state
from services.common.logging import configure_logging
from services.common.ratelimit import LimitSettings, Rate
from services.common.servers import NatsServer, ValkeyServer
from services.match.cache import RedisProjectionCache
from services.match.model import KIND_MOVE
from services.match.rules_grpc import GrpcRules
from services.match.server import MatchServer
from services.match.settings import MatchSettings
from services.matchmaking.server import MatchmakingProcess
from services.matchmaking.settings import MatchmakingSettings
from services.rules.process import RulesProcess
from services.tournaments.server import TournamentServer
from services.tournaments.settings import TournamentSettings
from tabletop.match.v1 import match_pb2, match_pb2_grpc
from tabletop.matchmaking.v1 import matchmaking_pb2
from tabletop.rules.v1 import rules_pb2, rules_pb2_grpc
from tabletop.tournaments.v1 import tournaments_pb2
from tests.fuzz.inputs import Inputs, Pools

SECRET = "fuzz-secret-0123456789-0123456789-0123456789"
BAD = {grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN}
DEADLINE_S = 10.0
GAMES = ["tic_tac_toe", "dwarves_duel", "dice_forge", "arcane_academy", "assault_of_the_giants"]
# Generous limits: the fuzz is not a flood test, but the limiter stays in the path.
LIMITS = LimitSettings(
    guest_login=Rate(10**6, 60),
    create_match=Rate(10**6, 60),
    submit_move=Rate(10**6, 60),
    enqueue=Rate(10**6, 60),
    streams=10**4,
)


@dataclass
class Figures:
    inputs: int = 0
    by_status: Counter[str] = field(default_factory=Counter)
    crashes: int = 0
    internal: int = 0
    hangs: int = 0
    corrupted: int = 0
    matches_audited: int = 0
    commits_audited: int = 0
    seconds: float = 0.0
    examples: list[str] = field(default_factory=list)
    exhausted: Counter[str] = field(default_factory=Counter)  # RESOURCE_EXHAUSTED by detail

    @property
    def clean(self) -> bool:
        return self.crashes == self.internal == self.hangs == self.corrupted == 0

    def line(self) -> str:
        top = ", ".join(f"{k} {v}" for k, v in self.by_status.most_common())
        return (
            f"fuzz: {self.inputs} inputs in {self.seconds:.1f} s: crashes {self.crashes}, "
            f"INTERNAL/UNKNOWN {self.internal}, hangs {self.hangs}, corrupted matches "
            f"{self.corrupted} ({self.matches_audited} matches, {self.commits_audited} "
            f"commits audited); answers: {top}"
        )

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["by_status"] = dict(self.by_status)
        d["exhausted"] = dict(self.exhausted)
        return d


class _LogCounter(io.TextIOBase):
    """A log stream that keeps only the count of unhandled errors."""

    def __init__(self) -> None:
        self.unhandled = 0
        self.lines: list[str] = []

    def write(self, text: str) -> int:
        if "unhandled_error" in text:
            self.unhandled += 1
            if len(self.lines) < 5:
                self.lines.append(text[:2000])
        return len(text)

    def isatty(self) -> bool:
        return False


class FuzzStack:
    """Every server of the fuzz, started on free ports in a temp folder."""

    def __init__(self) -> None:
        self.tokens = Tokens(AuthSettings(secret=SECRET))
        self._tmp = tempfile.TemporaryDirectory(prefix="fuzz-")
        tmp = Path(self._tmp.name)
        self.nats = NatsServer(data_dir=tmp / "nats")
        self.valkey = ValkeyServer(data_dir=tmp / "valkey")
        self.rules = RulesProcess(workers=1, log_dir=tmp)
        self.match: MatchServer | None = None
        self.mm: MatchmakingProcess | None = None
        self.tournaments: TournamentServer | None = None
        self.channels: dict[str, grpc.aio.Channel] = {}

    async def start(self) -> FuzzStack:
        self.nats.start()
        self.valkey.start()
        self.rules.start()
        auth = AuthSettings(secret=SECRET)
        settings = MatchSettings(
            nats_url=self.nats.url,
            redis_url=self.valkey.url,
            rules_addr=self.rules.address,
            grace_s=0.2,
            auth=auth,
            limits=LIMITS,
        )
        rules = GrpcRules(self.rules.address, timeout_s=5.0)
        self.match = await MatchServer(settings, rules=rules).start()
        mm = MatchmakingSettings(
            redis_url=self.valkey.url[:-1] + "1",
            nats_url=self.nats.url,
            match_addr=self.match.address,
            jwt_secret=SECRET,
            tick_s=0.05,
            bot_fill_after_s=0.5,
            watch_grace_s=5.0,
            limits=LIMITS,
        )
        self.mm = await MatchmakingProcess(mm).start()
        self.tournaments = await TournamentServer(
            TournamentSettings(
                nats_url=self.nats.url,
                redis_url=self.valkey.url[:-1] + "2",
                match_addr=self.match.address,
                matchmaking_addr=f"127.0.0.1:{self.mm.port}",  # queued races: this matchmaker
                grace_s=0.2,
                auth=auth,
            )
        ).start()
        for name, addr in (
            ("rules", self.rules.address),
            ("match", self.match.address),
            ("mm", f"127.0.0.1:{self.mm.port}"),
            ("tournaments", self.tournaments.address),
        ):
            self.channels[name] = grpc.aio.insecure_channel(addr)
        return self

    async def stop(self) -> None:
        for ch in self.channels.values():
            await ch.close()
        if self.tournaments is not None:
            await self.tournaments.stop(0.2)
        if self.mm is not None:
            await self.mm.stop()
        if self.match is not None:
            await self.match.stop(0.2)
        self.rules.stop()
        self.valkey.stop()
        self.nats.stop()
        self._tmp.cleanup()

    async def healthy(self) -> bool:
        if self.rules.proc is None or self.rules.proc.poll() is not None:
            return False
        for ch in self.channels.values():
            try:
                reply = await health_pb2_grpc.HealthStub(ch).Check(
                    health_pb2.HealthCheckRequest(service=""), timeout=5
                )
            except grpc.aio.AioRpcError:
                return False
            if reply.status != health_pb2.HealthCheckResponse.SERVING:
                return False
        return True


def _resumes(method: str, request: Any) -> bool:
    """A follow stream opened after a version: silent until the next commit."""
    if method.endswith("/WatchMatch"):
        return request.HasField("after_version")
    if method.endswith("/PlayMatch"):
        return request.HasField("open") and request.open.HasField("after_version")
    if method.endswith("/PlaySession"):
        return request.HasField("open") and request.open.open.HasField("after_version")
    return False


def _methods(stack: FuzzStack) -> list[tuple[str, str, Any, Any, bool]]:
    """``(channel, full method, request descriptor, request class, server streaming)``
    for every RPC of the public services."""
    out = []
    for channel, module in (
        ("rules", rules_pb2),
        ("match", match_pb2),
        ("mm", matchmaking_pb2),
        ("tournaments", tournaments_pb2),
    ):
        for service in module.DESCRIPTOR.services_by_name.values():
            for m in service.methods:
                cls = getattr(module, m.input_type.name)
                out.append(
                    (
                        channel,
                        f"/{service.full_name}/{m.name}",
                        m.input_type,
                        cls,
                        m.server_streaming,
                    )
                )
    return out


class Fuzzer:
    def __init__(self, stack: FuzzStack, seed: int) -> None:
        self.stack = stack
        self.seed = seed
        self.pools = Pools(games=GAMES)
        self.inputs = Inputs(seed, self.pools, stack.tokens)
        self.figures = Figures()
        self.methods = _methods(stack)
        self.games = default_registry()
        self.log = _LogCounter()

    # ------------------------------------------------------------ seeding
    async def seed_pools(self) -> None:
        """Real matches (some played a little), states, moves, events, tickets."""
        match = match_pb2_grpc.MatchServiceStub(self.stack.channels["match"])
        rules = rules_pb2_grpc.RulesServiceStub(self.stack.channels["rules"])
        for i, name in enumerate(GAMES):
            game = self.games.get(name)
            players = [f"guest:fuzz{i}{s}" for s in range(game.min_players)]
            self.pools.players.extend(players)
            reply = await match.CreateMatch(
                match_pb2.CreateMatchRequest(game=name, players=players),
                metadata=bearer_metadata(self.stack.tokens.issue(players[0])),
            )
            self.pools.match_ids.append(reply.match_id)
            state, events = start(game, len(players), None, b"fuzz-seed")
            self.pools.states.append(encode_state(game, state))
            codec = codec_for(game)
            self.pools.events.extend(codec.json_encoder.encode(e).decode() for e in events[:5])
            bot, rng = RandomBot(), Rng(f"fuzz-{i}".encode())
            for _ in range(6):
                if game.outcome(state) is not None:
                    break
                seat = game.awaiting(state)[0]
                move = bot.choose(game, state, seat, rng)
                self.pools.moves.append(codec.json_encoder.encode(move).decode())
                state, _ = apply(game, state, seat, move, b"e")
                self.pools.states.append(encode_state(game, state))
            new = await rules.NewGame(rules_pb2.NewGameRequest(game=name, players=len(players)))
            self.pools.states.append(new.state)
        self.pools.players.extend(["guest:a", "guest:b", "lead", "mate", "guest:c", "guest:d"])

    # -------------------------------------------------------------- calls
    async def one(self, k: int) -> None:
        channel, method, desc, cls, streaming = self.methods[
            self.inputs.rng.randrange(len(self.methods))
        ]
        if self.inputs.chance(0.1):
            await self._legal_move()
            return
        if self.inputs.chance(0.02):
            await self._new_match()
            return
        request = self.inputs.request(desc, cls)
        metadata = self.inputs.metadata()
        serialize = cls.SerializeToString
        if self.inputs.chance(0.05):  # bytes that are not the message at all
            serialize = self._corrupt
        ch = self.stack.channels[channel]
        self.figures.inputs += 1
        started = time.monotonic()
        if streaming:
            call = ch.unary_stream(
                method,
                request_serializer=serialize,
                response_deserializer=lambda b: b,
            )(request, metadata=metadata, timeout=DEADLINE_S)
            code = await self._read_stream(call, method, request)
        else:
            call = ch.unary_unary(
                method,
                request_serializer=serialize,
                response_deserializer=lambda b: b,
            )
            try:
                reply = await call(request, metadata=metadata, timeout=DEADLINE_S)
                code = grpc.StatusCode.OK
                self._learn(method, reply)
            except grpc.aio.AioRpcError as e:
                code = e.code()
                self._bad(code, method, request, e.details() or "")
        self.figures.by_status[code.name] += 1
        if code is grpc.StatusCode.DEADLINE_EXCEEDED and not streaming:
            self.figures.hangs += 1
            self._example("hang", method, request, f"{time.monotonic() - started:.1f} s")

    async def _read_stream(self, call: Any, method: str, request: Any) -> grpc.StatusCode:
        """Read up to 3 messages. A stream due to answer at once (all but a
        WatchMatch, PlayMatch or a PlaySession's open resuming after a
        version: the match may be there already) must send one, or its
        status, within 5 s; after that, waiting for the next commit is
        normal."""
        due = not _resumes(method, request)
        got = 0
        try:
            for _ in range(3):
                item = await asyncio.wait_for(call.read(), 5.0)
                if item is grpc.aio.EOF:
                    break
                got += 1
            return grpc.StatusCode.OK
        except TimeoutError:
            if due and got == 0:
                self.figures.hangs += 1
                self._example("stream hang", method, request, "")
            return grpc.StatusCode.OK
        except grpc.aio.AioRpcError as e:
            self._bad(e.code(), method, request, e.details() or "")
            if e.code() is grpc.StatusCode.DEADLINE_EXCEEDED and due and got == 0:
                self.figures.hangs += 1
                self._example("stream hang", method, request, e.details() or "")
            return e.code()
        finally:
            call.cancel()

    def _corrupt(self, request: Any) -> bytes:
        data = bytearray(request.SerializeToString())
        rng = self.inputs.rng
        if not data or rng.random() < 0.3:
            return rng.randbytes(rng.randrange(1, 200))
        if rng.random() < 0.5:  # a string field that is not UTF-8
            return bytes([0x0A, 3, 0xFF, 0xFE, 0xFD]) + bytes(data)
        for _ in range(rng.randrange(1, 8)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        return bytes(data)

    def _bad(self, code: grpc.StatusCode, method: str, request: Any, details: str) -> None:
        if code is grpc.StatusCode.RESOURCE_EXHAUSTED:
            self.figures.exhausted[details[:60]] += 1
        if code in BAD:
            self.figures.internal += 1
            self._example(code.name, method, request, details)

    def _example(self, what: str, method: str, request: Any, details: str) -> None:
        if len(self.figures.examples) < 20:
            text = str(request).replace("\n", " ")[:300]
            self.figures.examples.append(f"{what} {method} {details[:200]} :: {text}")

    def _learn(self, method: str, reply: bytes) -> None:
        """Keep the ids that come back, so later calls reach further."""
        if method.endswith("/CreateMatch"):
            r = match_pb2.CreateMatchResponse.FromString(reply)
            if len(self.pools.match_ids) < 500:
                self.pools.match_ids.append(r.match_id)
        elif method.endswith("/Enqueue"):
            r = matchmaking_pb2.EnqueueResponse.FromString(reply)
            if len(self.pools.ticket_ids) < 500:
                self.pools.ticket_ids.append(r.ticket_id)

    async def _new_match(self) -> None:
        """A real match (of pooled players) for the attack to aim at and the audit."""
        stub = match_pb2_grpc.MatchServiceStub(self.stack.channels["match"])
        name = self.inputs.pick(GAMES)
        game = self.games.get(name)
        n = self.inputs.rng.randint(game.min_players, game.max_players)
        players = self.inputs.rng.sample(self.pools.players, n)
        self.figures.inputs += 1
        try:
            reply = await stub.CreateMatch(
                match_pb2.CreateMatchRequest(game=name, players=players),
                metadata=bearer_metadata(self.stack.tokens.issue(players[0])),
                timeout=DEADLINE_S,
            )
            self.pools.match_ids.append(reply.match_id)
            code = grpc.StatusCode.OK
        except grpc.aio.AioRpcError as e:
            code = e.code()
            self._bad(code, "new_match", match_pb2.CreateMatchRequest(game=name), "")
        self.figures.by_status[code.name] += 1

    async def _legal_move(self) -> None:
        """A real move in a real match, so matches under attack move on."""
        stub = match_pb2_grpc.MatchServiceStub(self.stack.channels["match"])
        match_id = self.inputs.pick(self.pools.match_ids)
        self.figures.inputs += 1
        code = grpc.StatusCode.OK
        try:
            got = await stub.GetMatch(
                match_pb2.GetMatchRequest(match_id=match_id),
                metadata=bearer_metadata(self.stack.tokens.issue("guest:spectator")),
                timeout=DEADLINE_S,
            )
            if got.status != match_pb2.MATCH_STATUS_ACTIVE or not got.awaiting:
                self.figures.by_status["OK"] += 1
                return
            seat = self.inputs.pick(list(got.awaiting))
            player = got.seats[seat].player
            meta = bearer_metadata(self.stack.tokens.issue(player))
            mine = await stub.GetMatch(
                match_pb2.GetMatchRequest(match_id=match_id), metadata=meta, timeout=DEADLINE_S
            )
            if mine.legal_moves_json:
                await stub.SubmitMove(
                    match_pb2.SubmitMoveRequest(
                        match_id=match_id,
                        move_json=self.inputs.pick(list(mine.legal_moves_json)),
                        expected_version=mine.version,
                        seat=seat,
                    ),
                    metadata=meta,
                    timeout=DEADLINE_S,
                )
        except grpc.aio.AioRpcError as e:
            code = e.code()
            self._bad(code, "legal_move", match_pb2.GetMatchRequest(match_id=match_id), "")
        self.figures.by_status[code.name] += 1

    # -------------------------------------------------------------- audit
    async def audit(self) -> None:
        """Every match: versions contiguous, each move decides to its stored
        events again, and every projection equals the fold of the stream."""
        match = self.stack.match
        assert match is not None and match.app is not None
        app = match.app
        cache = app.cache if isinstance(app.cache, RedisProjectionCache) else None
        await app.drain()
        for match_id in dict.fromkeys(self.pools.match_ids):
            commits = [c async for _s, c in app.store.commits(match_id, 0)]
            if not commits:
                continue
            self.figures.matches_audited += 1
            self.figures.commits_audited += len(commits)
            if not self._consistent(commits):
                self.figures.corrupted += 1
                self._example(
                    "corrupted", "audit", match_pb2.GetMatchRequest(match_id=match_id), ""
                )
                continue
            game = self.games.get(commits[0].game)
            codec = codec_for(game)
            state = fold(game, [codec.event_json.decode(e) for c in commits for e in c.events])
            projections = [await app.load(match_id, fresh=True)]
            if cache is not None:
                cached = await cache.get(match_id)
                if cached is not None and cached.version == commits[-1].version:
                    projections.append(cached)
            for p in projections:
                if p.version != commits[-1].version or decode_state(game, p.state) != state:
                    self.figures.corrupted += 1
                    self._example(
                        "projection", "audit", match_pb2.GetMatchRequest(match_id=match_id), ""
                    )
                    break

    def _consistent(self, commits: list[Any]) -> bool:
        if [c.version for c in commits] != list(range(len(commits))):
            return False
        game = self.games.get(commits[0].game)
        codec = codec_for(game)
        first = commits[0]
        options = codec.decode_options(first.options.encode() or b"{}")
        state, events = start(game, len(first.players), options, first.entropy)
        if tuple(codec.json_encoder.encode(e).decode() for e in events) != first.events:
            return False
        for i, c in enumerate(commits[1:], start=1):
            if c.kind != KIND_MOVE:
                # a forfeit or a service's EndMatch: no move, no events, and
                # nothing may follow it
                if c.events or i != len(commits) - 1 or c.outcome is None:
                    return False
                continue
            move = codec.decode_move(c.move.encode())
            state, events = apply(game, state, c.seat, move, c.entropy)
            if tuple(codec.json_encoder.encode(e).decode() for e in events) != c.events:
                return False
        return True

    # ---------------------------------------------------------------- run
    async def run(self, inputs: int, concurrency: int = 8) -> Figures:
        configure_logging(service="fuzz", level="ERROR", fmt="json", stream=self.log)  # type: ignore[arg-type]
        started = time.monotonic()
        try:
            await self.seed_pools()
            remaining = inputs
            lock = asyncio.Lock()

            async def worker() -> None:
                nonlocal remaining
                while True:
                    async with lock:
                        if remaining <= 0:
                            return
                        remaining -= 1
                        k = remaining
                    await self.one(k)
                    if k % 2000 == 0 and not await self.stack.healthy():
                        self.figures.crashes += 1

            await asyncio.gather(*(worker() for _ in range(concurrency)))
            if not await self.stack.healthy():
                self.figures.crashes += 1
            await self.audit()
        finally:
            configure_logging(service="tests", stream=sys.stdout)
        self.figures.internal += self.log.unhandled
        self.figures.examples.extend(self.log.lines)
        self.figures.seconds = time.monotonic() - started
        return self.figures


async def fuzz(inputs: int, seed: int = 1, concurrency: int = 8) -> Figures:
    stack = await FuzzStack().start()
    try:
        return await Fuzzer(stack, seed).run(inputs, concurrency)
    finally:
        await stack.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--inputs", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    figures = asyncio.run(fuzz(args.inputs, args.seed, args.concurrency))
    print(json.dumps(figures.as_dict(), indent=2) if args.json else figures.line())
    for detail, n in figures.exhausted.most_common():
        print(f"  RESOURCE_EXHAUSTED x{n}: {detail}")
    for example in figures.examples:
        print("  " + example)
    return 0 if figures.clean else 1


if __name__ == "__main__":
    sys.exit(main())
