"""Browser tests: Python Playwright driving the system's Chromium against
the real stack. The Playwright wheel brings no browser (and none can be
downloaded here), so the browser is Debian's ``chromium``, which ``make test``
installs when it is missing. Without a browser these tests skip, except
under ``CI=true``, where they fail.

The browser is started per module (not per session, as pytest-playwright's
fixtures do), so no Playwright event loop outlives the module into the
asyncio tests that share its worker process."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

from tests.services.gateway.conftest import base_url, stack  # noqa: F401  (fixtures)

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "chrome")


def chromium_path() -> str | None:
    explicit = os.environ.get("TABLETOP_CHROMIUM")
    if explicit:
        return explicit
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.fixture(scope="session")
def browser_path() -> str:
    path = chromium_path()
    if path is None:
        message = "no Chromium found (install Debian's chromium, or set TABLETOP_CHROMIUM)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return path


@pytest.fixture(scope="module")
def browser(browser_path: str) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=browser_path,
            headless=True,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-dev-shm-usage",
            ],
        )
        try:
            yield b
        finally:
            b.close()


class Frames:
    """Every WebSocket frame a page received and sent, as text, and the paths
    of its HTTP POST requests."""

    def __init__(self, page: Any) -> None:
        self.received: list[str] = []
        self.sent: list[str] = []
        self.posts: list[str] = []
        page.on("websocket", self._socket)
        page.on("request", self._request)

    def _socket(self, ws: Any) -> None:
        ws.on("framereceived", lambda payload: self.received.append(str(payload)))
        ws.on("framesent", lambda payload: self.sent.append(str(payload)))

    def _request(self, request: Any) -> None:
        if request.method == "POST":
            self.posts.append(request.url)


@pytest.fixture
def page_factory(browser: Any, base_url: str) -> Iterator[Any]:  # noqa: F811
    contexts: list[Any] = []

    def make(**context_args: Any) -> tuple[Any, Frames]:
        context = browser.new_context(base_url=base_url, **context_args)
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(30_000)
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.errors = errors  # type: ignore[attr-defined]
        return page, Frames(page)

    yield make
    for c in contexts:
        c.close()
