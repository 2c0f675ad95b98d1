"""Screenshots of each game's page mid-game: ``make screenshots`` (or
``python -m tests.web.screenshots docs/screenshots [game ...]``).

Starts the whole stack on free ports in a temporary folder (as the browser
tests do), plays a few moves of each game against bots in Debian's Chromium by
clicking the drawn page, and saves ``<game>.png`` at 1280x900 when it is the
player's turn again."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from services.cli.stack import Stack, StackSettings
from tests.web.conftest import chromium_path
from tests.web.play import click_something, start_vs_bots, wait_turn_or_end

# game, players, moves of ours before the picture, and what the picture should
# show once those are played (more moves, up to EXTRA, until it does): pieces
# the player can click
GAMES = (
    ("dwarves_duel", 2, 9, "#board .hand .playable"),
    ("dice_forge", 3, 6, "#board .pool-face.playable"),
    ("arcane_academy", 2, 8, "#board .slate .playable"),
    ("assault_of_the_giants", 3, 6, "#board .giants-map .playable"),
)
EXTRA = 30
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-dev-shm-usage"]


def shoot(out: Path, only: set[str]) -> list[Path]:
    from playwright.sync_api import sync_playwright

    browser_path = chromium_path()
    if browser_path is None:
        raise SystemExit("no Chromium found (install Debian's chromium, or set TABLETOP_CHROMIUM)")
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    with tempfile.TemporaryDirectory() as tmp:
        settings = StackSettings.ephemeral(
            Path(tmp) / "data", extra_env={"TABLETOP_MATCHMAKING_BOT_FILL_AFTER_S": "0.2"}
        )
        stack = Stack(settings, echo=lambda _line: None)
        stack.start()
        try:
            base = stack.endpoints()["gateway"]
            with sync_playwright() as p:
                browser = p.chromium.launch(
                    executable_path=browser_path, headless=True, args=LAUNCH_ARGS
                )
                for game, players, moves, wanted in GAMES:
                    if only and game not in only:
                        continue
                    context = browser.new_context(
                        base_url=base, viewport={"width": 1280, "height": 900}
                    )
                    page = context.new_page()
                    page.set_default_timeout(30_000)
                    start_vs_bots(page, game, players)
                    for played in range(moves + EXTRA):
                        if wait_turn_or_end(page) == "over":
                            break
                        if played >= moves and page.locator(wanted).count():
                            break
                        click_something(page)
                    path = out / f"{game}.png"
                    page.screenshot(path=str(path), full_page=True, animations="disabled")
                    written.append(path)
                    print(f"wrote {path}")
                    context.close()
                browser.close()
        finally:
            stack.stop()
    return written


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else Path("docs/screenshots")
    shoot(out, set(argv[1:]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
