"""Seeded bad input into every route and the WebSocket of the gateway, on the
whole stack: no 5xx, every refusal of a known route a JSON error with a
status and a reason, no INTERNAL or UNKNOWN frame on the socket."""

from __future__ import annotations

import asyncio
import json
import random
import urllib.parse
from typing import Any

import httpx
import websockets

from tests.services.gateway.conftest import Player

WEIRD = ["", " ", "a" * 300, "é", "🎲", "../../etc", "%00", "null", "-1", "0", "1e309", "{}"]
WEIRD += ["[]", "a/b", "x" * 5000, "tic_tac_toe"]
KEYS = ["game", "move", "name", "player_counts", "allow_bots", "bot_level", "options"]
KEYS += ["time_control", "idempotency_key", "seat", "expected_version", "type", "cell"]
ROUTES = [
    ("POST", "/api/v1/auth/guest"),
    ("POST", "/api/v1/auth/refresh"),
    ("GET", "/api/v1/games"),
    ("GET", "/api/v1/games/{x}/catalog"),
    ("GET", "/api/v1/matches"),
    ("GET", "/api/v1/matches/{x}"),
    ("POST", "/api/v1/matches/{x}/moves"),
    ("GET", "/api/v1/matches/{x}/replay"),
    ("POST", "/api/v1/tickets"),
    ("DELETE", "/api/v1/tickets/{x}"),
    ("GET", "/api/v1/leaderboard/{x}"),
    ("GET", "/api/v1/tournaments"),
    ("GET", "/api/v1/tournaments/{x}"),
    ("POST", "/api/v1/tournaments/{x}/register"),
    ("POST", "/api/v1/tournaments/{x}/withdraw"),
]


def _value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(10)
    if kind == 0:
        return None
    if kind == 1:
        return rng.choice([True, False])
    if kind == 2:
        return rng.choice([0, -1, 2**63, 2**70, 1.5, 1e308, -0.0])
    if kind == 3:
        return rng.choice(WEIRD)
    if kind == 4 and depth < 4:
        return [_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    if kind == 5 and depth < 4:
        return {rng.choice(KEYS): _value(rng, depth + 1) for _ in range(rng.randrange(5))}
    return rng.choice(["tic_tac_toe", "dwarves_duel", "place_mark", "search", "30s", "5m+3s"])


def _body(rng: random.Random) -> dict[str, Any]:
    kind = rng.randrange(4)
    if kind == 0:
        return {"json": _value(rng)}
    if kind == 1:
        return {"content": bytes(rng.randrange(256) for _ in range(rng.randrange(100)))}
    if kind == 2:
        return {"content": b"{" * rng.randrange(1, 3000)}  # deeper than any parser likes
    return {}


async def test_fuzzed_requests_get_no_5xx_and_json_errors(base_url: str) -> None:
    rng = random.Random(20261202)
    player = await Player(base_url).login("fuzz")
    token = player.token
    r = await player.http.post(
        "/api/v1/tickets", json={"game": "tic_tac_toe", "player_counts": [2], "allow_bots": True}
    )
    assert r.status_code == 200, r.text
    ids = ["0" * 26]
    statuses: dict[int, int] = {}
    try:
        async with httpx.AsyncClient(base_url=base_url, timeout=15) as http:
            for _ in range(1500):
                method, path = rng.choice(ROUTES)
                if "{x}" in path:
                    path = path.replace("{x}", urllib.parse.quote(rng.choice(WEIRD + ids), safe=""))
                headers = {}
                auth = rng.randrange(4)
                if auth == 0:
                    headers["authorization"] = f"Bearer {token}"
                elif auth == 1:
                    headers["authorization"] = rng.choice(
                        ["Bearer", "Bearer x.y.z", "Basic abc", f"Bearer {token[:-3]}abc"]
                    )
                params = {
                    k: str(_value(rng))[:300]
                    for k in rng.sample(["status", "game", "limit", "after_version"], 2)
                }
                r = await http.request(method, path, headers=headers, params=params, **_body(rng))
                statuses[r.status_code] = statuses.get(r.status_code, 0) + 1
                assert r.status_code < 500, (method, path[:80], r.status_code, r.text[:300])
                if r.status_code >= 400:
                    assert r.headers.get("content-type", "").startswith("application/json"), (
                        method,
                        path[:80],
                        r.status_code,
                        r.text[:300],
                    )
                    error = r.json()["error"]
                    assert error["status"] and error["reason"], (method, path[:80], r.text[:300])
    finally:
        await player.close()
    # the run reached past the front door: accepted calls and every kind of refusal
    assert statuses.get(200, 0) > 60 and statuses.get(400, 0) > 60
    assert statuses.get(401, 0) > 60 and statuses.get(404, 0) > 60, statuses


async def test_fuzzed_socket_frames_get_no_internal_error(base_url: str) -> None:
    rng = random.Random(1202)
    player = await Player(base_url).login("fuzz-socket")
    url = base_url.replace("http", "ws", 1) + "/api/v1/ws"
    errors: list[dict[str, Any]] = []
    try:
        for _ in range(40):
            async with websockets.connect(url, open_timeout=10) as ws:
                if rng.random() < 0.7:
                    await ws.send(json.dumps({"op": "auth", "token": player.token}))
                for _ in range(rng.randrange(1, 8)):
                    frame = _value(rng)
                    if isinstance(frame, dict) and rng.random() < 0.8:
                        frame["op"] = rng.choice(
                            [
                                "watch",
                                "watch_ticket",
                                "watch_tournament",
                                "unwatch",
                                "ping",
                                "move",
                                "zz",
                            ]
                        )
                        if frame["op"] == "move" and rng.random() < 0.7:
                            frame["ref"], frame["move"] = _value(rng), _value(rng)
                        frame["sub"] = _value(rng)
                        frame["match_id"] = rng.choice(WEIRD)
                    text = json.dumps(frame) if rng.random() < 0.9 else "x" * rng.randrange(40000)
                    await ws.send(text)
                try:
                    while True:
                        reply = json.loads(await asyncio.wait_for(ws.recv(), 0.3))
                        if reply.get("type") == "error":
                            errors.append(reply)
                except (TimeoutError, websockets.ConnectionClosed):
                    pass
    finally:
        await player.close()
    assert errors, "no frame was refused: the fuzzing did not reach the socket's checks"
    assert not [e for e in errors if e.get("status") in ("INTERNAL", "UNKNOWN")], errors
    assert all(e.get("reason") for e in errors), errors


async def test_a_path_or_method_of_no_route_is_a_json_error_under_the_api(base_url: str) -> None:
    async with httpx.AsyncClient(base_url=base_url, timeout=15) as http:
        r = await http.get("/api/v1/nothing-here")
        assert r.status_code == 404
        assert r.json()["error"]["reason"] == "no_route"
        r = await http.put("/api/v1/games")
        assert r.status_code == 405 and "GET" in r.headers["allow"]
        assert r.json()["error"]["reason"] == "method_not_allowed"
        r = await http.get("/web/no-such-file.js")  # the browser client's files: plain
        assert r.status_code == 404 and not r.headers["content-type"].startswith("application/json")
