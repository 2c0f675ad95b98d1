"""``Mailbox``: the one-reader queue of the hot paths."""

from __future__ import annotations

import asyncio

import pytest

from services.common.mailbox import Mailbox


async def test_items_come_out_in_order_and_a_waiting_get_is_woken() -> None:
    box: Mailbox[int] = Mailbox()
    box.put_nowait(1)
    box.put_nowait(2)
    assert (box.qsize(), box.empty()) == (2, False)
    assert [await box.get(), await box.get()] == [1, 2]
    assert box.empty()
    getter = asyncio.ensure_future(box.get())
    await asyncio.sleep(0)
    assert not getter.done()
    asyncio.get_running_loop().call_soon(box.put_nowait, 3)
    assert await asyncio.wait_for(getter, 5) == 3


async def test_a_cancelled_get_takes_nothing() -> None:
    box: Mailbox[str] = Mailbox()
    getter = asyncio.ensure_future(box.get())
    await asyncio.sleep(0)
    getter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await getter
    box.put_nowait("a")
    assert await box.get() == "a"
    # woken and cancelled before it ran: the item stays for the next get
    getter = asyncio.ensure_future(box.get())
    await asyncio.sleep(0)
    box.put_nowait("b")
    getter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await getter
    assert box.qsize() == 1 and await box.get() == "b"


async def test_a_second_reader_is_refused() -> None:
    box: Mailbox[int] = Mailbox()
    first = asyncio.ensure_future(box.get())
    await asyncio.sleep(0)
    with pytest.raises(RuntimeError):
        await box.get()
    box.put_nowait(7)
    assert await first == 7


def test_it_is_made_on_a_running_loop() -> None:
    with pytest.raises(RuntimeError):
        Mailbox()
