"""The browser client in a real Chromium against the real stack: games played
by clicking, a socket killed mid-match, hidden cards kept out of the DOM and
of every WebSocket frame, and a phone-sized screen."""

from __future__ import annotations

import asyncio
import json
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from services.cli.stack import Stack
from tests.services.gateway.test_gateway import hidden_hands
from tests.web.play import click_something, play_to_end, start_vs_bots, wait_turn_or_end

pytestmark = pytest.mark.timeout(600)


def in_thread(coro: Any) -> Any:
    """Run a coroutine beside Playwright's own event loop."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


def socket_stats(page: Any) -> dict[str, int]:
    return page.evaluate("() => window.__tabletop.socket.stats")


def test_tic_tac_toe_played_to_the_end_by_clicking(page_factory: Any) -> None:
    page, frames = page_factory()
    start_vs_bots(page, "tic_tac_toe")
    clicks = play_to_end(page)
    assert clicks >= 2  # a bot that wins as the first player leaves us two moves
    assert "Game over" in page.locator("#outcome").inner_text()
    # every move went on the socket, each answered by the commit naming it
    moves = [f for f in map(json.loads, frames.sent) if f.get("op") == "move"]
    assert len(moves) == clicks
    assert not [p for p in frames.posts if p.endswith("/moves")]
    answered = {
        f["ref"]
        for f in map(json.loads, frames.received)
        if f.get("type") == "commit" and f.get("ref")
    }
    assert answered == {m["ref"] for m in moves}
    stats = socket_stats(page)
    assert stats["duplicates"] == 0 and stats["gaps"] == 0
    assert not page.errors  # type: ignore[attr-defined]


def test_the_lobby_plays_against_bots_of_the_chosen_difficulty(page_factory: Any) -> None:
    page, frames = page_factory()
    start_vs_bots(page, "tic_tac_toe", level="search")
    matched = [
        f
        for f in map(json.loads, frames.received)
        if f.get("type") == "ticket" and f.get("state") == "matched"
    ]
    assert [f["matched"]["bot_level"] for f in matched] == ["search"]
    assert "bot search-1" in page.locator('ul.seats[aria-label="players"]').inner_text()
    play_to_end(page)  # the worker plays the search bot's seat
    assert "Game over" in page.locator("#outcome").inner_text()
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
    for game in (
        "tic_tac_toe",
        "dwarves_duel",
        "dice_forge",
        "arcane_academy",
        "assault_of_the_giants",
    ):
        start_vs_bots(page, game)
        wait_turn_or_end(page)
        overflow = page.evaluate(
            "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert overflow <= 0, (game, overflow)
        assert page.locator("#board > *").count() and not page.locator("#board .error").count()


BOARD = "#board .pressable, #board button:not([disabled])"
PIECE = "#board .pressable"


def unlabelled_controls(page: Any) -> list[str]:
    """Controls of the drawn page a screen reader could not name."""
    return page.evaluate(
        """() => [...document.querySelectorAll('#board [role=button], #board button')]
              .filter(e => !(e.getAttribute('aria-label') || e.textContent).trim())
              .map(e => e.outerHTML.slice(0, 120))"""
    )


def catalog_of(page: Any, game: str) -> dict[str, Any]:
    return page.evaluate("(g) => fetch(`/api/v1/games/${g}/catalog`).then(r => r.json())", game)


def test_a_whole_dwarves_duel_played_to_the_end_by_clicking_the_drawn_page(
    page_factory: Any,
) -> None:
    page, _ = page_factory()
    start_vs_bots(page, "dwarves_duel")
    names = {c["name"] for c in catalog_of(page, "dwarves_duel")["cards"].values()}
    kinds: dict[str, int] = {"piece": 0, "button": 0, "chooser": 0, "grouped": 0}
    seen_names: set[str] = set()
    while wait_turn_or_end(page) == "turn":
        # every legal move can be reached from the drawn page itself
        assert page.locator(BOARD).count(), "a move is listed but nothing on the board plays it"
        assert not unlabelled_controls(page)
        seen_names |= set(page.locator("#board .dd-card .name").all_inner_texts())
        kinds[click_something(page, BOARD)] += 1
        assert sum(kinds.values()) < 1500
    assert "Game over" in page.locator("#outcome").inner_text()
    assert seen_names and seen_names <= names  # the cards are named from the catalog
    drawn = kinds["piece"] + kinds["chooser"] + kinds["grouped"]
    assert drawn >= 5, kinds  # cards, dice, piles were clicked
    assert kinds["chooser"] + kinds["grouped"] >= 1, kinds  # a card with several payments
    stats = socket_stats(page)
    assert stats["duplicates"] == 0 and stats["gaps"] == 0
    # the replay draws the same page at any version
    page.get_by_role("link", name="Replay this match").click()
    scrubber = page.locator("#scrubber")
    scrubber.wait_for()
    scrubber.fill(str(int(scrubber.get_attribute("max")) // 2))
    page.wait_for_selector("#board .dd .dd-card")
    assert not page.locator("#board .error").count()
    assert not page.errors  # type: ignore[attr-defined]
    print(f"dwarves duel clicks: {kinds}")


def expect_dice_forge(page: Any, players: int) -> None:
    assert page.locator("#board .island").count() == 7
    assert page.locator("#board .island .df-card").count() == 15
    assert page.locator("#board .temple .pool:not(.garden)").count() == 10
    assert page.locator("#board .hero").count() == players
    dice = page.locator("#board .df-die")
    assert dice.count() == 2 * players
    for i in range(dice.count()):
        assert dice.nth(i).locator(".die-face svg.face").count() == 6
        assert dice.nth(i).locator("svg.face.up").count() == 1
    assert "gold" in page.locator("#board .hero").first.inner_text()
    assert "/12" in page.locator("#board .hero").first.inner_text()  # the gold cap


def expect_arcane_academy(page: Any, players: int) -> None:
    slates = page.locator("#board svg.slate")
    assert slates.count() == players
    for i in range(players):
        assert slates.nth(i).locator("g.space").count() == 12
        assert slates.nth(i).locator("rect.connector").count() >= 8  # the four corners
    assert page.locator("#board .market .aa-tile").count() == 4
    assert page.locator("#board .public .aa-card").count() >= 1
    assert page.locator("#board .aa-player.mine .aa-card").count() >= 1  # my hand


def expect_assault(page: Any, players: int) -> None:
    assert page.locator("#board .giants-map g.region").count() == 22
    assert page.locator("#board .giants-map line.road").count() >= 30
    assert page.locator("#board .giants-map .unit-badge").count() >= 1
    assert page.locator("#board .giant-player").count() == players
    assert page.locator("#board .giant-player .command").count() >= 9
    assert "OP pool A" in page.locator("#board").inner_text()


@pytest.mark.parametrize(
    ("game", "players", "expect"),
    [
        ("dice_forge", 2, expect_dice_forge),
        ("arcane_academy", 2, expect_arcane_academy),
        ("assault_of_the_giants", 3, expect_assault),
    ],
)
def test_a_turn_of_each_other_game_played_on_its_drawn_page(
    page_factory: Any, game: str, players: int, expect: Any
) -> None:
    page, _ = page_factory()
    start_vs_bots(page, game, players)
    assert wait_turn_or_end(page) == "turn"
    expect(page, players)
    assert not unlabelled_controls(page)
    # play until a drawn piece was used (the first with the keyboard), the
    # other moves of the turn from the page's own buttons
    pieces, clicks = 0, 0
    while pieces < 2 and clicks < 40 and wait_turn_or_end(page) == "turn":
        if page.locator(PIECE).count():
            kind = click_something(page, PIECE, key="Enter" if pieces == 0 else None)
            assert kind in ("piece", "chooser", "grouped")
            pieces += 1
        else:
            click_something(page, BOARD)
        clicks += 1
    assert pieces >= 1, f"no drawn piece was ever clickable in {clicks} moves"
    assert not page.locator("#notice").inner_text(), page.locator("#notice").inner_text()
    assert not page.errors  # type: ignore[attr-defined]


async def _end_as_tournament(stack: Stack, match_id: str) -> None:
    """What a tournament's round deadline does: EndMatch with a service token."""
    import grpc

    from services.common.auth import AuthSettings, Tokens, bearer_metadata
    from tabletop.match.v1 import match_pb2, match_pb2_grpc

    token = Tokens(AuthSettings(secret=stack._secret())).issue(
        "service:tournaments", role="service"
    )
    async with grpc.aio.insecure_channel(f"{stack.s.host}:{stack.s.match_port}") as channel:
        stub = match_pb2_grpc.MatchServiceStub(channel)
        await stub.EndMatch(
            match_pb2.EndMatchRequest(
                match_id=match_id, ranks=[1, 1], scores=[0, 0], reason="round_deadline",
                idempotency_key=f"{match_id}:end",
            ),
            metadata=bearer_metadata(token),
        )  # fmt: skip


def test_a_match_ended_by_the_tournament_says_so(page_factory: Any, stack: Stack) -> None:
    page, _frames = page_factory()
    match_id = start_vs_bots(page, "dwarves_duel")
    assert wait_turn_or_end(page) == "turn"
    in_thread(_end_as_tournament(stack, match_id))
    page.wait_for_selector("#outcome")
    assert "ended by the tournament: round deadline" in page.locator("#outcome").inner_text()
    assert "ended by the tournament: round deadline" in page.locator("#log").inner_text()
    assert not page.errors  # type: ignore[attr-defined]


def _sign_in_shortly(page: Any, stack: Stack, ttl_s: int, *, honest: bool) -> str:
    """Replace the page's token with one of the same player that expires in
    ``ttl_s`` seconds; ``honest``: the saved identity says when (else it
    claims a month, as a page whose clock is far off would believe)."""
    from services.common.auth import AuthSettings, Tokens

    player = page.evaluate("() => JSON.parse(localStorage.getItem('tabletop.identity')).player_id")
    token = Tokens(AuthSettings(secret=stack._secret())).issue(player, ttl_s=ttl_s)
    expires = time.time() + (ttl_s if honest else 30 * 24 * 3600)
    page.evaluate(
        "([me, ms]) => localStorage.setItem('tabletop.identity', "
        "JSON.stringify({...me, expires_at: new Date(ms).toISOString()}))",
        [{"player_id": player, "token": token}, expires * 1000],
    )
    return token


def _reconnect(page: Any) -> None:
    connects = socket_stats(page)["connects"]
    page.evaluate("() => window.__tabletop.socket.drop()")
    page.wait_for_function("(n) => window.__tabletop.socket.stats.connects > n", arg=connects)


def _token(page: Any) -> str:
    return page.evaluate("() => JSON.parse(localStorage.getItem('tabletop.identity')).token")


def _expired_frames(frames: Any) -> list[dict[str, Any]]:
    return [
        f
        for f in map(json.loads, frames.received)
        if f.get("type") == "error" and f.get("reason") == "token_expired"
    ]


def _played_on_without_a_gap(page: Any, frames: Any, match_id: str) -> None:
    play_to_end(page)
    assert "Game over" in page.locator("#outcome").inner_text()
    stats = socket_stats(page)
    assert stats["duplicates"] == 0 and stats["gaps"] == 0, stats
    versions = [
        f["version"]
        for f in map(json.loads, frames.received)
        if f.get("type") == "commit" and f.get("match_id") == match_id
    ]
    assert sorted(set(versions)) == list(range(max(versions) + 1)), versions
    assert not page.locator("#notice").inner_text(), page.locator("#notice").inner_text()
    assert not page.errors  # type: ignore[attr-defined]


def test_a_token_that_expires_mid_match_is_renewed_and_the_match_goes_on(
    page_factory: Any, stack: Stack
) -> None:
    # The page believes its token good for a month; the gateway ends the
    # match's stream when it expires, and the page renews and resumes.
    page, frames = page_factory()
    match_id = start_vs_bots(page, "tic_tac_toe")
    assert wait_turn_or_end(page) == "turn"
    short = _sign_in_shortly(page, stack, 3, honest=False)
    _reconnect(page)
    page.wait_for_function("() => window.__tabletop.socket.stats.renewals >= 1", timeout=20_000)
    assert _expired_frames(frames), "the gateway said nothing of the expiry"
    assert _token(page) != short
    _played_on_without_a_gap(page, frames, match_id)


def test_a_token_is_renewed_before_it_expires(page_factory: Any, stack: Stack) -> None:
    page, frames = page_factory()
    match_id = start_vs_bots(page, "tic_tac_toe")
    assert wait_turn_or_end(page) == "turn"
    short = _sign_in_shortly(page, stack, 4, honest=True)
    _reconnect(page)
    page.wait_for_function("() => window.__tabletop.socket.stats.renewals >= 1", timeout=20_000)
    assert _token(page) != short
    _played_on_without_a_gap(page, frames, match_id)
    assert not _expired_frames(frames)  # renewed in time: no stream ended


def test_an_http_call_refused_for_an_expired_token_is_made_again_once_renewed(
    page_factory: Any, stack: Stack
) -> None:
    page, _frames = page_factory()
    start_vs_bots(page, "tic_tac_toe")
    expired = _sign_in_shortly(page, stack, -5, honest=False)
    listed = page.evaluate("() => import('/web/js/api.js').then((m) => m.api.matches())")
    assert "matches" in listed
    assert _token(page) != expired
