"""The browser client in a real Chromium against the real stack: games played
by clicking, a socket killed mid-match, hidden cards kept out of the DOM and
of every WebSocket frame, and a phone-sized screen."""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from services.cli.stack import Stack
from tests.services.gateway.test_gateway import hidden_hands

pytestmark = pytest.mark.timeout(600)

CLICKABLE = "#board .pressable, #board button:not([disabled]), #moves button.move:not([disabled])"


def in_thread(coro: Any) -> Any:
    """Run a coroutine beside Playwright's own event loop."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


def open_lobby(page: Any) -> None:
    page.goto("/")
    page.wait_for_selector(".game-card")


def start_vs_bots(page: Any, game: str, players: int | None = None) -> str:
    open_lobby(page)
    card = page.locator(f'.game-card[data-game="{game}"]')
    if players is not None:
        card.locator("select").select_option(str(players))
    card.get_by_role("button", name="Play against bots").click()
    page.wait_for_selector(".match[data-match]", timeout=60_000)
    return page.locator(".match").get_attribute("data-match")


def wait_turn_or_end(page: Any, timeout_s: float = 60) -> str:
    """'turn' once something is clickable, 'over' once the result shows."""
    try:
        page.wait_for_function(
            """(sel) => document.querySelector('#outcome') ||
                        document.querySelector(sel)""",
            arg=CLICKABLE,
            timeout=timeout_s * 1000,
        )
    except Exception:
        shot = Path(tempfile.gettempdir()) / f"stuck-{int(time.time())}.png"
        page.screenshot(path=str(shot), full_page=True)
        raise AssertionError(f"nothing to click and no result; the page: {shot}") from None
    return "over" if page.locator("#outcome").count() else "turn"


def click_something(page: Any) -> None:
    """Click what the page offers: a drawn piece first, else a listed move."""
    version = page.locator("#version").inner_text()
    page.locator(CLICKABLE).first.click()
    # the page answers with a new version (ours), or a refusal notice
    page.wait_for_function(
        "(v) => document.querySelector('#version').textContent !== v || "
        "document.querySelector('#notice').textContent !== ''",
        arg=version,
    )


def play_to_end(page: Any, max_clicks: int = 2000) -> int:
    clicks = 0
    while wait_turn_or_end(page) == "turn":
        click_something(page)
        clicks += 1
        assert clicks < max_clicks
    return clicks


def socket_stats(page: Any) -> dict[str, int]:
    return page.evaluate("() => window.__tabletop.socket.stats")


def test_tic_tac_toe_played_to_the_end_by_clicking(page_factory: Any) -> None:
    page, _frames = page_factory()
    start_vs_bots(page, "tic_tac_toe")
    clicks = play_to_end(page)
    assert clicks >= 2  # a bot that wins as the first player leaves us two moves
    assert "Game over" in page.locator("#outcome").inner_text()
    stats = socket_stats(page)
    assert stats["duplicates"] == 0 and stats["gaps"] == 0
    assert not page.errors  # type: ignore[attr-defined]


def test_a_killed_socket_resumes_with_no_missing_and_no_repeated_commit(
    page_factory: Any,
) -> None:
    page, frames = page_factory()
    match_id = start_vs_bots(page, "tic_tac_toe")
    drops, resumed_ms = 0, []
    while wait_turn_or_end(page) == "turn":
        connects = socket_stats(page)["connects"]
        page.evaluate("() => window.__tabletop.socket.drop()")
        started = time.monotonic()
        page.wait_for_function("(n) => window.__tabletop.socket.stats.connects > n", arg=connects)
        resumed_ms.append((time.monotonic() - started) * 1000)
        drops += 1
        wait_turn_or_end(page)
        if page.locator("#outcome").count():
            break
        click_something(page)
    assert drops >= 2
    stats = socket_stats(page)
    assert stats["duplicates"] == 0 and stats["gaps"] == 0, stats
    versions = [
        f["version"]
        for f in map(json.loads, frames.received)
        if f.get("type") == "commit" and f.get("match_id") == match_id
    ]
    assert sorted(versions) == list(range(max(versions) + 1)), versions  # none missing
    assert len(versions) == len(set(versions)), versions  # none repeated
    log_versions = page.locator("#log li").evaluate_all("els => els.map(e => e.dataset.version)")
    assert len(log_versions) == len(set(log_versions))
    print(f"reconnects: {drops}, resume ms: {[round(x) for x in resumed_ms]}")


def test_a_seat_and_a_spectator_never_see_the_other_hand(page_factory: Any, stack: Stack) -> None:
    page, frames = page_factory()
    match_id = start_vs_bots(page, "dwarves_duel")
    spectator, spec_frames = page_factory()
    spectator.goto(f"/#/match/{match_id}")
    spectator.wait_for_selector("#board")
    doms: list[tuple[int, str]] = []
    for _ in range(6):
        if wait_turn_or_end(page) == "over":
            break
        version = int(page.locator("#version").inner_text())
        doms.append((version, page.content()))
        click_something(page)
    spectator.wait_for_function(
        "(v) => Number(document.querySelector('#version').textContent) >= v",
        arg=doms[-1][0],
    )
    seat = int(page.evaluate("() => document.querySelector('.seat.me').textContent[0]"))
    spec_dom = spectator.content()
    hands = {s: in_thread(hidden_hands(stack, match_id, s)) for s in (0, 1)}
    other = hands[1 - seat]
    for version, dom in doms:
        assert not {c for c in other[version] if f'"{c}"' in dom or f">{c}<" in dom}
    # the test can see a card: my own hand is on my page
    assert any(c in doms[-1][1] for c in hands[seat][doms[-1][0]])
    for raw in frames.received:
        f = json.loads(raw)
        if f.get("type") == "commit":
            assert not {c for c in other[f["version"]] if f'"{c}"' in raw}, f["version"]
    for raw in spec_frames.received:
        f = json.loads(raw)
        if f.get("type") == "commit":
            secret = hands[0][f["version"]] | hands[1][f["version"]]
            assert not {c for c in secret if f'"{c}"' in raw}, f["version"]
    latest = max(hands[0])
    assert not {c for c in hands[0][latest] | hands[1][latest] if f'"{c}"' in spec_dom}


def test_a_phone_renders_the_match_page_without_horizontal_scrolling(
    page_factory: Any,
) -> None:
    page, _ = page_factory(viewport={"width": 360, "height": 740}, is_mobile=True)
    for game in ("tic_tac_toe", "dwarves_duel"):
        start_vs_bots(page, game)
        wait_turn_or_end(page)
        overflow = page.evaluate(
            "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert overflow <= 0, (game, overflow)
