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


def test_bound_fields_reach_the_lines_and_the_observers_and_stay_in_their_context() -> None:
    """``bind`` sets structlog's own context variables (so every line logged
    in the context has the fields), ``notify`` hands the observers exactly the
    fields bound in the context of the call, and a field bound in a copied
    context (as each call of a rules stream runs) does not leak out of it."""
    import contextvars

    import structlog

    from services.common.logging import bind, bound, notify

    buffer = io.StringIO()
    configure_logging(service="test", fmt="json", level="INFO", stream=buffer)
    seen: list[dict[str, object]] = []

    def call(seat: int) -> None:
        bind(game="tic_tac_toe", seat=seat)
        get_logger("ours").info("in_call")
        notify((lambda _m, _c, _s, fields: seen.append(fields),), "/x/Y", "OK", 0.001)

    try:
        contextvars.copy_context().run(call, 1)
        contextvars.copy_context().run(call, 0)
        assert "seat" not in bound() and "game" not in bound()  # not outside the calls
        assert bound()["service"] == "test"
        assert structlog.contextvars.get_contextvars() == bound()
        structlog.contextvars.clear_contextvars()
        assert bound() == {}
    finally:
        configure_logging(service="test")
    lines = [json.loads(line) for line in buffer.getvalue().splitlines()]
    assert [(r["game"], r["seat"], r["service"]) for r in lines] == [
        ("tic_tac_toe", 1, "test"),
        ("tic_tac_toe", 0, "test"),
    ]
    assert [(f["game"], f["seat"]) for f in seen] == [("tic_tac_toe", 1), ("tic_tac_toe", 0)]
    assert all(f["service"] == "test" and "pid" in f for f in seen)
