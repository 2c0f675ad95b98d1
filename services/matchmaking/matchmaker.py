"""The matchmaker loop: sweep, read the queues, pair, claim, create, finalise.

One round (``run_once``) costs a handful of Redis round trips however many
tickets wait: one sweep script, one pipelined read of every queue, one claim
script per queue, one finalise script for every match made. Match creation
runs concurrently (``create_concurrency`` calls in flight).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import random
import uuid
from dataclasses import dataclass

import structlog

from engine_core.bots import LEVELS
from services.matchmaking import metrics
from services.matchmaking.pairing import Candidate, Group, form_groups
from services.matchmaking.ports import MatchCreationFailed, MatchCreator
from services.matchmaking.settings import MatchmakingSettings
from services.matchmaking.store import (
    ClaimedTicket,
    MatchResult,
    TicketStore,
    now_ms,
    parse_queue_key,
)

log = structlog.get_logger("matchmaking.matchmaker")

BOT_PREFIX = "bot:"
_REFUSED = object()  # CreateMatch said no: counts against the tickets
_UNREACHABLE = object()  # the match service is down: the tickets wait


@dataclass(frozen=True, slots=True)
class _Blamed:
    """CreateMatch refused the group because of one ticket (it named one of
    its players): that ticket ends, the others go back to the queue."""

    ticket_id: str


@dataclass(frozen=True, slots=True)
class RoundStats:
    tickets_seen: int = 0
    groups: int = 0
    claimed: int = 0
    matches: int = 0
    failed: int = 0
    swept: int = 0
    unreachable: bool = False  # the match service could not be reached


class Matchmaker:
    def __init__(
        self,
        store: TicketStore,
        creator: MatchCreator,
        settings: MatchmakingSettings,
        *,
        name: str | None = None,
        bot_kind: str = "greedy",
    ) -> None:
        self.store = store
        self.creator = creator
        self.settings = settings
        self.name = name or uuid.uuid4().hex[:8]
        if bot_kind not in LEVELS:
            raise ValueError(f"unknown bot level {bot_kind!r}; use one of {', '.join(LEVELS)}")
        # The level of the bots of tickets that name none (queued before
        # levels); a ticket's own level names its bots: bot:<level>-<n>,
        # which the worker reads.
        self.bot_kind = bot_kind
        self._sem = asyncio.Semaphore(settings.create_concurrency)
        self._rng = random.Random()

    async def run_once(self) -> RoundStats:
        with metrics.ROUND_SECONDS.time():
            stats = await self._round()
        if stats.swept:
            metrics.TICKETS_SWEPT.inc(stats.swept)
        if stats.failed:
            metrics.CREATE_FAILURES.inc(stats.failed)
        return stats

    async def _round(self) -> RoundStats:
        s = self.settings
        at = now_ms()
        swept = await self.store.sweep(at)
        keys = await self.store.queues()
        if not keys:
            metrics.set_queue_sizes(())
            return RoundStats(swept=swept)
        queues = await self.store.read_queues(keys)
        token = f"{self.name}:{uuid.uuid4().hex[:12]}"
        taken: set[str] = set()
        claimed: list[tuple[str, Group]] = []
        info: dict[str, ClaimedTicket] = {}
        seen = groups_n = 0
        cands: dict[str, list[Candidate]] = {}
        members: dict[str, dict[str, str]] = {}
        metrics.set_queue_sizes(
            (parse_queue_key(key)[0], parse_queue_key(key)[2], len(queues[key])) for key in keys
        )
        for key in keys:
            entries = queues[key]
            if not entries:
                continue
            seen += len(entries)
            members[key] = {e.ticket_id: e.member for e in entries}
            cands[key] = [
                Candidate(
                    e.ticket_id,
                    e.size,
                    e.rating,
                    (at - e.created_ms) / 1000.0,
                    e.allow_bots,
                    e.bot_level or self.bot_kind,
                )
                for e in entries
            ]
        by_size = sorted(cands, key=lambda k: parse_queue_key(k)[2])
        # People first, larger matches first (a ticket accepting 2 or 4 players
        # fills a 4 before a 2); then bot-filled groups, smaller matches first
        # (fewest bots).
        for key, full in [(k, True) for k in reversed(by_size)] + [(k, False) for k in by_size]:
            _, _, n = parse_queue_key(key)
            groups = form_groups(
                cands[key],
                n,
                s.window,
                None if full else s.bot_fill_after_s,
                skip=taken,
                full=full,
            )
            if not groups:
                continue
            groups_n += len(groups)
            res = await self.store.claim(
                key, [[members[key][t.ticket_id] for t in g.tickets] for g in groups], token, at
            )
            info.update(res.tickets)
            for g, won in zip(groups, res.won, strict=True):
                if won:
                    taken.update(t.ticket_id for t in g.tickets)
                    claimed.append((key, g))
        if not claimed:
            return RoundStats(seen, groups_n, 0, 0, 0, swept)
        results = await asyncio.gather(
            *(self._create(token, k, g, [info[t.ticket_id] for t in g.tickets]) for k, g in claimed)
        )
        made = [r for r in results if isinstance(r, MatchResult)]
        refused = [
            t.ticket_id
            for (_, g), r in zip(claimed, results, strict=True)
            if r is _REFUSED
            for t in g.tickets
        ]
        unreachable = [
            t.ticket_id
            for (_, g), r in zip(claimed, results, strict=True)
            if r is _UNREACHABLE
            for t in g.tickets
        ]
        blamed = [r.ticket_id for r in results if isinstance(r, _Blamed)]
        innocent = [
            t.ticket_id
            for (_, g), r in zip(claimed, results, strict=True)
            if isinstance(r, _Blamed)
            for t in g.tickets
            if t.ticket_id != r.ticket_id
        ]
        if made:
            await self.store.finalize(token, made)
        if refused:
            await self.store.release(token, refused)
        if blamed:
            await self.store.release(token, blamed, count=True, at_once=True)
        if unreachable or innocent:
            await self.store.release(token, unreachable + innocent, count=False)
        return RoundStats(
            seen,
            groups_n,
            len(claimed),
            len(made),
            len(claimed) - len(made),
            swept,
            unreachable=bool(unreachable),
        )

    async def _create(
        self, token: str, queue: str, group: Group, tickets: list[ClaimedTicket]
    ) -> MatchResult | object:
        game, _, n = parse_queue_key(queue)
        players: list[str] = []
        owner: dict[str, str] = {}
        options_json = time_control = ""
        for rec in tickets:
            options_json, time_control = rec.options_json, rec.time_control
            for p in rec.players:
                players.append(p)
                owner[p] = rec.ticket_id
        level = group.bot_level or self.bot_kind
        bots = [f"{BOT_PREFIX}{level}-{i + 1}" for i in range(group.bots)]
        order = players + bots
        self._rng.shuffle(order)
        async with self._sem:
            try:
                # the clock only when the tickets asked for one (creators
                # written before clocks take no such argument)
                clock = {"time_control": time_control} if time_control else {}
                created = await self.creator.create_match(
                    game, order, options_json, key=f"{token}:{group.tickets[0].ticket_id}", **clock
                )
            except MatchCreationFailed as e:
                log.warning(
                    "create_match_failed", game=game, players=n, error=str(e), transient=e.transient
                )
                if e.transient:
                    return _UNREACHABLE
                if e.player in owner:
                    return _Blamed(owner[e.player])
                return _REFUSED
            except Exception as e:  # unknown: counted, so it cannot loop forever
                log.warning("create_match_failed", game=game, players=n, error=repr(e))
                return _REFUSED
        seats: dict[str, dict[str, int]] = {rec.ticket_id: {} for rec in tickets}
        for p in players:
            seats[owner[p]][p] = created.seats[p]
        metrics.MATCHES_MADE.labels(game, str(n)).inc()
        metrics.TICKETS_MATCHED.labels(game).inc(len(group.tickets))
        if bots:
            metrics.BOT_SEATS.labels(game, level).inc(len(bots))
        return MatchResult(
            tickets=tuple(t.ticket_id for t in group.tickets),
            match_id=created.match_id,
            game=game,
            player_count=n,
            seats=seats,
            bot_players={b: created.seats[b] for b in bots},
        )

    async def run(self, stop: asyncio.Event) -> None:
        """Rounds until ``stop`` is set; errors are logged and the loop goes on.
        While the match service (or Redis) is unreachable, rounds back off
        exponentially up to ``max_backoff_s``."""
        pause = self.settings.tick_s
        while not stop.is_set():
            trouble = False
            try:
                stats = await self.run_once()
                trouble = stats.unreachable
                if stats.matches or stats.swept:
                    log.info("round", **dataclasses.asdict(stats))
            except Exception:
                trouble = True
                log.exception("round_failed")
            if trouble:
                pause = min(self.settings.max_backoff_s, max(0.1, pause * 2))
            else:
                pause = self.settings.tick_s
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), pause)
