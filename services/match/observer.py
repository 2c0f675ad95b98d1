"""Active and stalled matches, for the operator, by a periodic scan.

Every ``scan_s`` the match service reads the active matches from the index
(its ``a.<match id>`` keys: one read of a key-value bucket, written only at
create and finish) and the time of each one's last commit (one direct get per
active match), and sets:

- ``tabletop_match_active{game}``: matches in progress;
- ``tabletop_match_stalled{game}``: active matches with no commit for longer
  than ``stall_after_s`` (a player gone, a bot worker down, a clock that
  never fires): the signal to alert on;
- ``tabletop_match_idle_seconds_max{game}``: the longest time since a commit
  among the active matches;
- ``tabletop_match_scan_timestamp_seconds``: when the last scan finished (an
  alert on its age finds a scan that stopped).

Every replica scans and reports the same cluster-wide figures: aggregate them
with ``max``, not ``sum``. No work is done on the move path.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

from services.common.logging import get_logger
from services.common.tasks import cancel_and_wait
from services.match import metrics
from services.match.index import MatchIndex
from services.match.store import JetStreamStore

log = get_logger("match.observer")


@dataclass
class Scan:
    """What one scan found, by game."""

    active: dict[str, int] = field(default_factory=dict)
    stalled: dict[str, int] = field(default_factory=dict)
    idle_max_s: dict[str, float] = field(default_factory=dict)
    stalled_ids: list[str] = field(default_factory=list)


class MatchObserver:
    def __init__(
        self,
        index: MatchIndex,
        store: JetStreamStore,
        *,
        stall_after_s: float = 600.0,
        scan_s: float = 30.0,
        games: Iterable[str] = (),
    ) -> None:
        self.index = index
        self.store = store
        self.stall_after_s = stall_after_s
        self.scan_s = scan_s
        self._games = set(games)  # every known game reads 0, not absent
        self._task: asyncio.Task[None] | None = None

    async def scan(self, now_ms: int | None = None) -> Scan:
        now_ms = int(time.time() * 1000) if now_ms is None else now_ms
        found = Scan()
        for summary in await self.index.active():
            last = await self.store.last(summary.match_id)
            if last is None:
                continue
            _seq, commit = last
            if commit.outcome is not None:
                continue  # finished, the index not yet told
            game = summary.game
            idle = max(0.0, (now_ms - commit.time_ms) / 1000)
            found.active[game] = found.active.get(game, 0) + 1
            found.idle_max_s[game] = max(found.idle_max_s.get(game, 0.0), idle)
            if idle > self.stall_after_s:
                found.stalled[game] = found.stalled.get(game, 0) + 1
                found.stalled_ids.append(summary.match_id)
        self._publish(found)
        return found

    def _publish(self, found: Scan) -> None:
        self._games |= found.active.keys()
        for game in self._games:
            metrics.ACTIVE.labels(game).set(found.active.get(game, 0))
            metrics.STALLED.labels(game).set(found.stalled.get(game, 0))
            metrics.IDLE_MAX.labels(game).set(found.idle_max_s.get(game, 0.0))
        metrics.SCANNED_AT.set(time.time())

    def start(self) -> None:
        if self._task is None and self.scan_s > 0:
            self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            await cancel_and_wait(self._task)
            self._task = None

    async def _run(self) -> None:
        reported: set[str] = set()
        while True:
            try:
                found = await self.scan()
                new = [m for m in found.stalled_ids if m not in reported]
                if new:
                    log.warning(
                        "matches_stalled",
                        count=len(found.stalled_ids),
                        new=new[:20],
                        stall_after_s=self.stall_after_s,
                    )
                reported = set(found.stalled_ids)
            except asyncio.CancelledError:
                raise
            except Exception as e:  # NATS away: try again next time
                log.warning("match_scan_failed", error=repr(e))
            await asyncio.sleep(self.scan_s)
