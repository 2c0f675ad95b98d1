"""The whole stack (the same code as ``make run``) on free ports, once per
module, with a small async client of the gateway's HTTP and WebSocket API."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets

from services.cli.stack import Stack, StackSettings


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    data: Path = tmp_path_factory.mktemp("stack")
    settings = StackSettings.ephemeral(
        data / "data", extra_env={"TABLETOP_MATCHMAKING_BOT_FILL_AFTER_S": "0.2"}
    )
    s = Stack(settings, echo=lambda _line: None)
    s.start()
    try:
        yield s
    finally:
        s.stop()


@pytest.fixture(scope="module")
def base_url(stack: Stack) -> str:
    return stack.endpoints()["gateway"]


class Player:
    """One browser's worth of API calls."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.http = httpx.AsyncClient(base_url=base, timeout=20)
        self.token = ""
        self.player_id = ""

    async def login(self, name: str = "") -> Player:
        r = await self.http.post("/api/v1/auth/guest", json={"name": name})
        r.raise_for_status()
        body = r.json()
        self.token, self.player_id = body["token"], body["player_id"]
        self.http.headers["authorization"] = f"Bearer {self.token}"
        return self

    async def close(self) -> None:
        await self.http.aclose()

    async def socket(self) -> Socket:
        ws = await websockets.connect(self.base.replace("http", "ws", 1) + "/api/v1/ws")
        sock = Socket(ws)
        await sock.send({"op": "auth", "token": self.token})
        ready = await sock.recv()
        assert ready["type"] == "ready", ready
        return sock

    async def matched(self, game: str, players: int) -> tuple[str, int]:
        """A match against bots, found through matchmaking and the socket."""
        r = await self.http.post(
            "/api/v1/tickets",
            json={"game": game, "player_counts": [players], "allow_bots": True},
        )
        assert r.status_code == 200, r.text
        sock = await self.socket()
        try:
            await sock.send({"op": "watch_ticket", "sub": "t", "ticket_id": r.json()["ticket_id"]})
            while True:
                frame = await sock.recv()
                assert frame["type"] in ("ticket", "end"), frame
                if frame["type"] == "ticket" and frame["state"] == "matched":
                    return frame["matched"]["match_id"], frame["matched"]["seat"]
                assert frame.get("state") != "expired", frame
        finally:
            await sock.close()

    async def my_turn(self, match_id: str, seat: int, timeout: float = 30) -> dict[str, Any]:
        """The match once it waits for ``seat`` (polled)."""
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            m = (await self.http.get(f"/api/v1/matches/{match_id}")).json()
            if seat in m["awaiting"] or m["status"] == "finished":
                return m
            assert asyncio.get_running_loop().time() < deadline, m
            await asyncio.sleep(0.05)

    async def move(self, match_id: str, move: dict[str, Any], version: int) -> httpx.Response:
        return await self.http.post(
            f"/api/v1/matches/{match_id}/moves",
            json={"move": move, "expected_version": version, "idempotency_key": uuid.uuid4().hex},
        )


class Socket:
    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.frames: list[dict[str, Any]] = []  # every frame received, in order
        self.raw: list[str] = []

    async def send(self, msg: dict[str, Any]) -> None:
        await self.ws.send(json.dumps(msg))

    async def recv(self, timeout: float = 30) -> dict[str, Any]:
        raw = await asyncio.wait_for(self.ws.recv(), timeout)
        self.raw.append(raw)
        frame = json.loads(raw)
        self.frames.append(frame)
        return frame

    async def close(self) -> None:
        await self.ws.close()


@pytest.fixture
async def player(base_url: str) -> Any:
    p = await Player(base_url).login("tester")
    try:
        yield p
    finally:
        await p.close()
