"""A feed hands a commit to the watchers of the seats it awaits first: the
player whose turn it is learns of the move before the others do."""

from __future__ import annotations

import asyncio
import itertools
from types import SimpleNamespace

import pytest

from services.match.feeds import Feed
from services.match.model import KIND_MOVE, Commit


def _commit(version: int, awaiting: tuple[int, ...]) -> Commit:
    return Commit(
        version=version,
        kind=KIND_MOVE,
        time_ms=0,
        entropy=b"",
        events=(),
        redacted=(),
        rules_version="1",
        awaiting=awaiting,
    )


async def _woken_in_order(seats: tuple[int | None, ...], awaiting: tuple[int, ...]) -> list:
    """The seats of the watchers (attached in the order of ``seats``) in the
    order their tasks wake for one commit awaiting ``awaiting``."""
    feeds = SimpleNamespace(queue_limit=256, _feeds={}, _unwatched={})
    feed = Feed(feeds, "m", 0)  # type: ignore[arg-type]
    woken: list[int | None] = []

    async def watcher(seat: int | None) -> None:
        w, _ = feed.attach(seat)
        await w.queue.get()
        woken.append(seat)

    tasks = [asyncio.ensure_future(watcher(s)) for s in seats]
    await asyncio.sleep(0)  # every watcher attached and waiting
    feed._hand_out(1, _commit(1, awaiting))
    await asyncio.gather(*tasks)
    return woken


@pytest.mark.parametrize("seats", list(itertools.permutations((0, 1, None))))
async def test_the_awaited_seat_is_woken_first(seats) -> None:
    for awaiting in ((0,), (1,)):
        woken = await _woken_in_order(seats, awaiting)
        assert woken[0] == awaiting[0]
        assert sorted(woken, key=str) == sorted(seats, key=str)  # every watcher, once


async def test_every_awaited_seat_comes_before_the_others() -> None:
    woken = await _woken_in_order((None, 2, 0, 1), (1, 2))
    assert set(woken[:2]) == {1, 2}
    assert set(woken[2:]) == {0, None}
