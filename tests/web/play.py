"""Playing in the page as a player would: open the lobby, start a match
against bots, and click what the page offers (a drawn piece first; a chooser's
first entry when a piece stands for several legal moves)."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

CLICKABLE = "#board .pressable, #board button:not([disabled]), #moves button.move:not([disabled])"
CHOOSER = "#board .chooser button.choice"
GROUP = "#board .chooser button.choice-group"


def open_lobby(page: Any) -> None:
    page.goto("/")
    page.wait_for_selector(".game-card")


def start_vs_bots(page: Any, game: str, players: int | None = None, level: str = "") -> str:
    open_lobby(page)
    card = page.locator(f'.game-card[data-game="{game}"]')
    if players is not None:
        card.locator(f"#players-{game}").select_option(str(players))
    if level:
        card.get_by_label("bot difficulty").select_option(level)
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


def click_something(page: Any, selector: str = CLICKABLE, key: str | None = None) -> str:
    """Click what the page offers: the first clickable thing in the page's
    order (a drawn piece before the list of moves), or press ``key`` on it.
    A piece that stands for several legal moves opens a chooser: its first
    entry is taken then (a long chooser's first group first). Answers "piece",
    "button", "chooser" or "grouped"."""
    version = page.locator("#version").inner_text()
    target = page.locator(selector).first
    kind = "piece" if "pressable" in (target.get_attribute("class") or "") else "button"
    if key:
        target.focus()
        page.keyboard.press(key)
    else:
        target.click()
    # the page answers with a new version (ours), a refusal notice, or a chooser
    waiting = (
        "([v, c]) => document.querySelector('#version').textContent !== v || "
        "document.querySelector('#notice').textContent !== '' || document.querySelector(c)"
    )
    page.wait_for_function(waiting, arg=[version, f"{CHOOSER}, {GROUP}"])
    # a long chooser lists groups first (the die to spend, the unit...)
    grouped = False
    while page.locator("#version").inner_text() == version and page.locator(GROUP).count():
        grouped = True
        if key:
            page.keyboard.press(key)
        else:
            page.locator(GROUP).first.click()
        page.wait_for_function(waiting, arg=[version, CHOOSER])
    if page.locator("#version").inner_text() == version and page.locator(CHOOSER).count():
        kind = "grouped" if grouped else "chooser"
        # a chooser offers legal moves only: each is in the page's list of them
        listed = set(page.locator("#moves button.move").all_text_contents())
        offered = page.locator(CHOOSER).all_text_contents()
        assert len(offered) > 1 and set(offered) <= listed, (offered, listed)
        if key:  # the chooser takes the focus: its first entry
            page.keyboard.press(key)
        else:
            page.locator(CHOOSER).first.click()
        page.wait_for_function(
            "(v) => document.querySelector('#version').textContent !== v || "
            "document.querySelector('#notice').textContent !== ''",
            arg=version,
        )
    return kind


def play_to_end(page: Any, max_clicks: int = 2000) -> int:
    clicks = 0
    while wait_turn_or_end(page) == "turn":
        click_something(page)
        clicks += 1
        assert clicks < max_clicks
    return clicks
