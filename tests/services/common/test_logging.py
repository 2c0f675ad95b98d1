"""Every line a service writes is of one form: its own, libraries' stdlib
logging, Python's warnings and the start-up announcements."""

from __future__ import annotations

import io
import json
import logging
import warnings

from services.common.logging import announce, configure_logging, get_logger


def test_every_line_is_json_whoever_logs_it() -> None:
    buffer = io.StringIO()
    configure_logging(service="test", fmt="json", level="INFO", stream=buffer)
    try:
        get_logger("ours").info("our_event", match="m1")
        logging.getLogger("nats.aio.client").warning("reconnecting to %s", "nats://x")
        with warnings.catch_warnings():
            warnings.simplefilter("always")
            warnings.warn("the development secret is in use", stacklevel=1)
        announce("listening", "listening on 127.0.0.1:5", address="127.0.0.1:5")
        try:
            raise ValueError("boom")
        except ValueError:
            logging.getLogger("asyncio").exception("task failed")
    finally:
        configure_logging(service="test")
    lines = [json.loads(line) for line in buffer.getvalue().splitlines()]
    events = {r["event"]: r for r in lines}
    assert events["our_event"]["service"] == "test"
    assert events["reconnecting to nats://x"]["level"] == "warning"
    assert events["reconnecting to nats://x"]["logger"] == "nats.aio.client"
    assert any("development secret" in r["event"] for r in lines)
    assert events["listening"]["message"] == "listening on 127.0.0.1:5"
    failed = events["task failed"]
    assert failed["level"] == "error" and "ValueError: boom" in failed["exception"]
    assert len(lines) == 5


def test_responses_hands_an_async_iterator_on_as_it_is_and_wraps_the_rest() -> None:
    import asyncio

    from services.common.logging import responses

    async def gen():
        yield 1
        yield 2

    async def writes() -> None:  # a behaviour that writes with context.write
        return None

    async def collect(it):
        return [x async for x in it]

    g = gen()
    assert responses(g) is g
    assert asyncio.run(collect(responses(gen()))) == [1, 2]
    assert asyncio.run(collect(responses(writes()))) == []
    assert asyncio.run(collect(responses(iter([3, 4])))) == [3, 4]
    assert asyncio.run(collect(responses(None))) == []
