"""What every path through the match application shares: its ports and
settings, the bounds on input, and the calls to the rules and the store that
turn their failures into ``UNAVAILABLE`` answers.

The application is split by use case, one file per path through the service:
``writes`` (create and submit), ``reads`` (get, list), ``streams`` (watch,
replay), over ``projections`` (load a match: memory, Redis or the stream).
``app.MatchApp`` puts them together.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from services.common.auth import Principal
from services.match.errors import OutcomeUnknown, Unavailable
from services.match.feeds import Feeds
from services.match.index import MatchIndex
from services.match.model import Clocks, Commit, MatchMeta, Projection
from services.match.ports import ProjectionCache, RulesClient, RulesUnavailable
from services.match.relay import KnownFacts
from services.match.store import AppendOutcomeUnknown, JetStreamStore, StoreUnavailable
from services.match.writebehind import WriteBehind

if TYPE_CHECKING:
    from services.match.timers import TimerSchedule

T = TypeVar("T")

MAX_PLAYERS_IDS = 16
MAX_MOVE_BYTES = 64 * 1024
MAX_KEY_LENGTH = 200
REPLAY_MAX_PAUSE_S = 2.0


@dataclass(frozen=True, slots=True)
class AppConfig:
    rules_timeout_s: float = 2.0
    max_decide_attempts: int = 5
    hot_cache_size: int = 1024
    allow_player_create: bool = True
    results_stream: str = "RESULTS"
    results_prefix: str = "results"
    cache_write_interval_s: float = 0.1


class AppBase:
    def __init__(
        self,
        *,
        rules: RulesClient,
        store: JetStreamStore,
        cache: ProjectionCache,
        index: MatchIndex,
        config: AppConfig | None = None,
        timers: TimerSchedule | None = None,
    ) -> None:
        self.rules = rules
        self.timers = timers
        self.store = store
        self.cache = cache
        self.index = index
        self.config = config or AppConfig()
        self.feeds = Feeds(store)
        self.known_facts = KnownFacts()
        """Matches whose ``MatchFinished`` is stored (shared with this process's relay)."""
        self._hot: OrderedDict[str, Projection] = OrderedDict()
        self.finishing: dict[str, tuple[tuple[str, ...], asyncio.Task[None]]] = {}
        """The finishing bookkeeping in flight here (see ``Writes._finish_soon``):
        match id -> its players and the task marking the index and publishing
        the fact."""
        self.cache_writes = WriteBehind(
            cache, self._hot.get, interval_s=self.config.cache_write_interval_s
        )

    @staticmethod
    def viewer_seat(principal: Principal, meta: MatchMeta) -> int | None:
        for s, pid in enumerate(meta.players):
            if pid == principal.subject:
                return s
        return None

    # =============================================================== plumbing
    async def _rules(self, call: Awaitable[T]) -> T:
        """``call`` to the rules, bounded by ``rules_timeout_s``: by the port
        itself when it puts that deadline (or a shorter one) on every call,
        as ``GrpcRules`` does (``deadline_s``), else here (an
        ``asyncio.timeout`` costs a timer and a few microseconds of
        bookkeeping per call: one per move)."""
        try:
            deadline = getattr(self.rules, "deadline_s", None)
            if deadline is not None and deadline <= self.config.rules_timeout_s:
                return await call
            async with asyncio.timeout(self.config.rules_timeout_s):
                return await call
        except (TimeoutError, RulesUnavailable) as e:
            raise Unavailable(
                "rules_unavailable", f"the rules service is unavailable: {e or 'timeout'}"
            ) from None

    async def _store(self, call: Awaitable[T]) -> T:
        try:
            return await call
        except StoreUnavailable as e:
            raise Unavailable("store_unavailable", str(e)) from None

    async def _store_iter(self, it: AsyncIterator[T]) -> AsyncIterator[T]:
        try:
            async for x in it:
                yield x
        except StoreUnavailable as e:
            raise Unavailable("store_unavailable", str(e)) from None

    async def _append(
        self,
        match_id: str,
        commit: Commit,
        expected: int,
        msg_id: str,
        *,
        headers: dict[str, str] | None = None,
        unknown: dict[str, str] | None = None,
    ) -> tuple[int, bool]:
        """Append; an append not acknowledged in time is ``OutcomeUnknown``
        (``UNAVAILABLE outcome_unknown`` with ``unknown`` as its metadata),
        every other store failure ``UNAVAILABLE store_unavailable`` (nothing
        written)."""
        try:
            return await self.store.append(match_id, commit, expected, msg_id, headers)
        except AppendOutcomeUnknown as e:
            raise OutcomeUnknown(
                f"{e}; the commit may still be stored: retry the same request with the same "
                "idempotency key to learn whether it was",
                **(unknown or {}),
            ) from None
        except StoreUnavailable as e:
            raise Unavailable("store_unavailable", str(e)) from None

    async def _arm(self, match_id: str, version: int, clocks: Clocks | None) -> None:
        """Schedule the turn timer after a commit (see ``timers.Timeouts``)."""

    async def finished_of(self, player: str | None = None) -> None:
        """Once the finishing bookkeeping in flight here is done: all of it,
        or only that of ``player``'s matches."""
        tasks = [t for players, t in self.finishing.values() if player is None or player in players]
        if tasks:
            await asyncio.wait(tasks)

    async def drain(self) -> None:
        """The finishing bookkeeping in flight done, then the pending cache
        updates written (graceful shutdown, tests)."""
        await self.finished_of()
        await self.cache_writes.flush()
