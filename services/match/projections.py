"""Loading a match: the projection in memory, else in Redis, else folded
from the stream; catching up with commits appended elsewhere. What a load
learns goes to the cache behind the answer (``writebehind``)."""

from __future__ import annotations

import structlog

from services.match import metrics
from services.match.base import AppBase
from services.match.errors import BadRequest, MatchNotFound
from services.match.model import (
    KIND_CREATED,
    KIND_MOVE,
    Commit,
    MatchMeta,
    Projection,
    valid_match_id,
)

log = structlog.get_logger("tabletop.match")


class Projections(AppBase):
    async def load(self, match_id: str, *, fresh: bool = False) -> Projection:
        """The match's projection: in memory, else Redis, else folded from the
        stream. ``fresh`` also checks the stream's head and catches up."""
        if not valid_match_id(match_id):
            raise BadRequest("malformed match id", "bad_match_id")
        p = self._hot.get(match_id)
        if p is None:
            p = await self.cache.get(match_id)
            if p is None:
                p = await self._rebuild(match_id)
                metrics.LOOKUPS["stream"].inc()
            else:
                metrics.LOOKUPS["redis"].inc()
            self._remember(p)
        else:
            metrics.LOOKUPS["memory"].inc()
        if fresh:
            last = await self._store(self.store.last_seq(match_id))
            if last > p.seq:
                p = await self._catch_up(p)
        else:
            self._hot.move_to_end(match_id)
        return p

    async def _rebuild(self, match_id: str) -> Projection:
        items = [x async for x in self._store_iter(self.store.commits(match_id, 0))]
        if not items:
            raise MatchNotFound(f"no match {match_id}")
        p = await self._fold(match_id, None, items)
        self.cache_writes.full(p)
        metrics.REBUILDS.inc()
        log.info("projection_rebuilt", match=match_id, version=p.version)
        return p

    async def _catch_up(self, p: Projection) -> Projection:
        """``p`` plus the commits appended since it (read from the stream)."""
        items = [x async for x in self._store_iter(self.store.commits(p.meta.match_id, p.seq))]
        if not items:
            return p
        metrics.CATCH_UPS.inc()
        new = await self._fold(p.meta.match_id, p, items)
        self._remember(new)
        self.cache_writes.full(new)
        return new

    async def _fold(
        self, match_id: str, base: Projection | None, items: list[tuple[int, Commit]]
    ) -> Projection:
        if base is None:
            first = items[0][1]
            if first.kind != KIND_CREATED or first.version != 0:
                raise MatchNotFound(f"match {match_id} has no creation commit")
            meta = MatchMeta.from_creation(match_id, first)
            state, version, keys = None, -1, {}
        else:
            meta, state, version, keys = base.meta, base.state, base.version, dict(base.keys)
        events: list[str] = []
        for seq, c in items:
            if c.version != version + 1:
                raise RuntimeError(f"match {match_id}: version {c.version} after {version}")
            version = c.version
            events.extend(c.events)
            if c.key and c.kind == KIND_MOVE:
                keys[c.key] = seq
        new_state = (
            await self._rules(self.rules.evolve(meta.game, state, events)) if events else state
        )
        assert new_state is not None
        last_seq, last = items[-1]
        return Projection(
            meta=meta,
            version=version,
            seq=last_seq,
            state=new_state,
            awaiting=last.awaiting,
            outcome=last.outcome,
            keys=keys,
            time_ms=last.time_ms,
            clocks=last.clocks,
        )

    def _remember(self, p: Projection) -> None:
        current = self._hot.get(p.meta.match_id)
        if current is not None and current.version > p.version:
            return
        self._hot[p.meta.match_id] = p
        self._hot.move_to_end(p.meta.match_id)
        while len(self._hot) > self.config.hot_cache_size:
            self._hot.popitem(last=False)

    def forget(self, match_id: str | None = None) -> None:
        """Drop the in-memory projections (all, or one match's)."""
        if match_id is None:
            self._hot.clear()
        else:
            self._hot.pop(match_id, None)
