"""The gateway against the real stack: HTTP + JSON, the WebSocket, resume
after a disconnect, errors with the gRPC reason codes, and no secrets."""

from __future__ import annotations

import json

import grpc
import httpx
import nats
import pytest
import websockets

from engine_core.registry import default_registry
from services.cli.stack import Stack
from services.common.codecs import decode_state
from services.match.ports import InProcessRules
from services.match.store import JetStreamStore, StreamConfig
from tests.services.gateway.conftest import Player

pytestmark = pytest.mark.timeout(300)


async def test_games_and_openapi_need_no_token(base_url: str) -> None:
    async with httpx.AsyncClient(base_url=base_url) as http:
        games = (await http.get("/api/v1/games")).json()["games"]
        assert {g["id"] for g in games} == {g.name for g in default_registry()}
        doc = (await http.get("/api/v1/openapi.json")).json()
        assert doc["openapi"].startswith("3.")
        assert "/api/v1/matches/{match_id}/moves" in doc["paths"]
        page = await http.get("/")
        assert page.status_code == 200 and "<html" in page.text.lower()
        assert "default-src 'self'" in page.headers["content-security-policy"]


async def test_a_tic_tac_toe_match_played_over_http_and_followed_on_the_socket(
    player: Player,
) -> None:
    match_id, seat = await player.matched("tic_tac_toe", 2)
    sock = await player.socket()
    await sock.send({"op": "watch", "sub": "m", "match_id": match_id})
    versions: list[int] = []
    while True:
        frame = await sock.recv()
        if frame["type"] == "end":
            break
        assert frame["type"] == "commit", frame
        versions.append(frame["version"])
        turn = frame["turn"]
        if frame["status"] == "finished":
            assert frame["outcome"]["ranks"]
            continue
        if turn is not None and seat in turn["awaiting"]:
            assert turn["legal_moves"], frame
            r = await player.move(match_id, turn["legal_moves"][0], turn["version"])
            assert r.status_code == 200, r.text
            assert r.json()["version"] == turn["version"] + 1
    await sock.close()
    assert versions == list(range(versions[-1] + 1)), versions  # no gap, no duplicate
    final = (await player.http.get(f"/api/v1/matches/{match_id}")).json()
    assert final["status"] == "finished" and final["your_seat"] == seat
    mine = (await player.http.get("/api/v1/matches", params={"status": "finished"})).json()
    assert match_id in {m["match_id"] for m in mine["matches"]}
    replay = (await player.http.get(f"/api/v1/matches/{match_id}/replay")).json()["commits"]
    assert [c["version"] for c in replay] == versions
    assert all(c["view"] is not None for c in replay)


async def test_a_socket_killed_mid_match_resumes_with_no_gap_and_no_duplicate(
    player: Player,
) -> None:
    match_id, seat = await player.matched("tic_tac_toe", 2)
    seen: list[int] = []
    drops = 0
    finished = False
    while not finished:
        sock = await player.socket()
        msg: dict = {"op": "watch", "sub": "m", "match_id": match_id}
        if seen:
            msg["after_version"] = seen[-1]
        await sock.send(msg)
        frame = await sock.recv()
        if frame["type"] == "end":
            break
        seen.append(frame["version"])
        finished = frame["status"] == "finished"
        turn = frame["turn"]
        if not finished and turn is not None and seat in turn["awaiting"]:
            r = await player.move(match_id, turn["legal_moves"][0], turn["version"])
            assert r.status_code == 200, r.text
        sock.ws.transport.abort()  # the connection dies, no close handshake
        drops += 1
    assert drops >= 3
    assert seen == list(range(len(seen))), seen  # every version once, in order
    final = (await player.http.get(f"/api/v1/matches/{match_id}")).json()
    assert final["status"] == "finished" and seen[-1] == final["version"]


async def test_a_match_played_with_moves_on_the_socket(player: Player) -> None:
    """Moves sent on the match's subscription: each answered once, naming its
    ref (by the commit it made), a refused one by an error frame with
    SubmitMove's status, reason and metadata while the subscription goes on;
    refused before the stream for a bad ref, or for a sub that watches no
    match."""
    match_id, seat = await player.matched("tic_tac_toe", 2)
    sock = await player.socket()
    await sock.send({"op": "move", "sub": "m", "ref": "r0", "move": {"type": "x"}})
    early = await sock.recv()
    assert (early["type"], early["ref"], early["reason"]) == ("error", "r0", "not_watching")
    await sock.send({"op": "watch", "sub": "m", "match_id": match_id})
    versions: list[int] = []
    refused = False
    n = 0
    while True:
        frame = await sock.recv()
        if frame["type"] == "end":
            break
        assert frame["type"] in ("commit", "error"), frame
        if frame["type"] == "error":
            assert "ref" in frame, frame  # a move's, not the subscription's
            continue
        versions.append(frame["version"])
        if frame.get("ref"):
            assert frame["seat"] == seat and frame["ref"] == f"r{n}", frame
        turn = frame["turn"]
        if frame["status"] == "finished" or turn is None or seat not in turn["awaiting"]:
            continue
        if not refused:
            refused = True
            for msg, reason in [
                ({"move": {"type": "place_mark", "cell": 99}}, "no_such_cell"),
                (
                    {"move": {"type": "place_mark", "cell": 0}, "expected_version": 999},
                    "stale_version",
                ),
                ({"move": "e4"}, "bad_move"),
            ]:
                n += 1
                await sock.send({"op": "move", "sub": "m", "ref": f"r{n}", **msg})
                err = await sock.recv()
                assert (err["type"], err["sub"], err["ref"]) == ("error", "m", f"r{n}"), err
                assert err["reason"] == reason, err
            assert err["status"] == "INVALID_ARGUMENT"
            await sock.send({"op": "move", "sub": "m", "ref": "", "move": {}})
            assert (await sock.recv())["reason"] == "bad_ref"
        n += 1
        await sock.send(
            {
                "op": "move",
                "sub": "m",
                "ref": f"r{n}",
                "move": turn["legal_moves"][0],
                "expected_version": turn["version"],
            }
        )
    await sock.close()
    stale = [f for f in sock.frames if f.get("reason") == "stale_version"]
    assert stale and stale[0]["status"] == "ABORTED"  # as SubmitMove says it
    assert stale[0]["metadata"]["current_version"]
    assert versions == list(range(versions[-1] + 1)), versions  # no gap, no duplicate
    answered = [f["ref"] for f in sock.frames if f.get("ref") and f["type"] == "commit"]
    assert answered and len(answered) == len(set(answered))
    final = (await player.http.get(f"/api/v1/matches/{match_id}")).json()
    assert final["status"] == "finished"


async def test_a_move_whose_subscription_ends_first_is_still_answered_once(
    player: Player,
) -> None:
    """Unwatched while its move is on its way: the move is answered all the
    same, by its commit or as of unknown outcome with the key to send it again
    with, and sent again by HTTP with that key it has its one answer."""
    match_id, seat = await player.matched("tic_tac_toe", 2)
    sock = await player.socket()
    await sock.send({"op": "watch", "sub": "m", "match_id": match_id})
    while True:
        frame = await sock.recv()
        assert frame["type"] == "commit", frame
        turn = frame["turn"]
        if turn is not None and seat in turn["awaiting"]:
            break
    move = turn["legal_moves"][0]
    await sock.send({"op": "move", "sub": "m", "ref": "x", "move": move})
    await sock.send({"op": "unwatch", "sub": "m"})
    while True:
        answer = await sock.recv()
        if answer.get("ref") == "x":
            break
    if answer["type"] == "error":
        assert (answer["status"], answer["reason"]) == ("UNAVAILABLE", "outcome_unknown")
        key = answer["metadata"]["idempotency_key"]
        r = await player.http.post(
            f"/api/v1/matches/{match_id}/moves", json={"move": move, "idempotency_key": key}
        )
        assert r.status_code == 200, r.text
        version = r.json()["version"]
    else:
        assert answer["type"] == "commit" and answer["seat"] == seat
        version = answer["version"]
    assert version == turn["version"] + 1
    await sock.send({"op": "ping"})
    while (await sock.recv())["type"] != "pong":
        pass
    assert [f for f in sock.frames if f.get("ref") == "x"] == [answer]  # once
    await sock.close()


async def test_errors_carry_the_grpc_status_and_reason(player: Player, base_url: str) -> None:
    match_id, seat = await player.matched("tic_tac_toe", 2)
    m = await player.my_turn(match_id, seat)
    # not JSON, too deep, not an object
    bad = await player.http.post(f"/api/v1/matches/{match_id}/moves", content=b"{nope")
    assert bad.status_code == 400 and bad.json()["error"]["reason"] == "bad_json"
    deep = b'{"move":' + b"[" * 5000 + b"]" * 5000 + b"}"
    r = await player.http.post(f"/api/v1/matches/{match_id}/moves", content=deep)
    assert r.status_code == 400 and r.json()["error"]["reason"] == "json_too_deep"
    r = await player.move(match_id, {"type": "fly_away"}, m["version"])
    assert r.status_code == 400, r.text
    assert r.json()["error"]["status"] == "INVALID_ARGUMENT"
    r = await player.move(match_id, {"type": "place_mark", "cell": 99}, m["version"])
    assert r.status_code == 409, r.text
    assert r.json()["error"] == {
        "status": "FAILED_PRECONDITION",
        "reason": "no_such_cell",
        "message": "cell 99 is not in 0..8",
        "metadata": {},
    }
    r = await player.move(match_id, {"type": "place_mark", "cell": 0}, m["version"] + 7)
    assert r.status_code == 409 and r.json()["error"]["reason"] == "stale_version", r.text
    async with httpx.AsyncClient(base_url=base_url) as anon:
        r = await anon.get(f"/api/v1/matches/{match_id}")
        assert r.status_code == 401 and r.json()["error"]["reason"] == "missing_token"
        r = await anon.get(
            f"/api/v1/matches/{match_id}", headers={"authorization": "Bearer forged.token.x"}
        )
        assert r.status_code == 401 and r.json()["error"]["status"] == "UNAUTHENTICATED"
        r = await anon.get("/api/v1/matches/nosuchmatch0000000000000000")
        assert r.status_code in (400, 401)
    r = await player.http.get("/api/v1/matches/" + "x" * 300)
    assert r.status_code == 400 and r.json()["error"]["reason"] == "bad_match_id"


async def test_the_socket_authenticates_before_it_streams(base_url: str) -> None:
    url = base_url.replace("http", "ws", 1) + "/api/v1/ws"
    async with websockets.connect(url) as ws:
        await ws.send(json.dumps({"op": "watch", "sub": "m", "match_id": "abc"}))
        frame = json.loads(await ws.recv())
        assert frame["type"] == "error" and frame["status"] == "UNAUTHENTICATED"
        with pytest.raises(websockets.ConnectionClosed):
            await ws.recv()
    async with websockets.connect(url) as ws:
        await ws.send(json.dumps({"op": "auth", "token": "not-a-token"}))
        frame = json.loads(await ws.recv())
        assert frame["type"] == "error" and frame["reason"] == "invalid_token", frame


async def hidden_hands(stack: Stack, match_id: str, seat: int) -> dict[int, set[str]]:
    """The card ids in ``seat``'s hand and unknown to the other seat after each
    version, from the stream itself (the server-side truth)."""
    nc = await nats.connect(stack.nats_url)
    try:
        store = JetStreamStore(nc.jetstream(), StreamConfig())
        rules = InProcessRules()
        game = default_registry().get("dwarves_duel")
        hidden: dict[int, set[str]] = {}
        state = None
        async for _seq, c in store.commits(match_id, 0):
            state = await rules.evolve("dwarves_duel", state, list(c.events))
            p = decode_state(game, state).players[seat]
            hidden[c.version] = {card for card in p.hand if card not in p.known}
        return hidden
    finally:
        await nc.close()


async def test_a_dwarves_duel_socket_never_carries_the_other_seats_hand(
    player: Player, stack: Stack
) -> None:
    match_id, seat = await player.matched("dwarves_duel", 2)
    sock = await player.socket()
    await sock.send({"op": "watch", "sub": "m", "match_id": match_id})
    moves = 0
    while moves < 8:
        frame = await sock.recv()
        if frame["type"] == "end":
            break
        turn = frame["turn"]
        if frame["status"] == "active" and turn is not None and seat in turn["awaiting"]:
            r = await player.move(match_id, turn["legal_moves"][0], turn["version"])
            assert r.status_code == 200, r.text
            moves += 1
    await sock.close()
    theirs = await hidden_hands(stack, match_id, 1 - seat)
    mine = await hidden_hands(stack, match_id, seat)
    commits = [(json.loads(raw), raw) for raw in sock.raw]
    commits = [(f["version"], raw) for f, raw in commits if f.get("type") == "commit"]
    assert len(commits) > 8
    # The check can see a card id: my own hand is in my frames ...
    assert all(any(f'"{c}"' in raw for c in mine[v]) for v, raw in commits if mine[v])
    # ... and the other seat's hidden hand never is.
    for v, raw in commits:
        leaked = {card for card in theirs[v] if f'"{card}"' in raw}
        assert not leaked, (v, leaked)


async def test_every_game_serves_its_public_catalog(base_url: str) -> None:
    async with httpx.AsyncClient(base_url=base_url) as http:
        games = (await http.get("/api/v1/games")).json()["games"]
        for g in games:
            r = await http.get(f"/api/v1/games/{g['id']}/catalog")
            assert r.status_code == 200, r.text
            assert r.json()["game"] == g["id"]
        cards = (await http.get("/api/v1/games/dwarves_duel/catalog")).json()["cards"]
        assert cards["G05"]["name"] == "Tungdil" and cards["G05"]["cost"] == "ONE"
        missing = await http.get("/api/v1/games/chess/catalog")
        assert missing.status_code == 404
        assert missing.json()["error"]["reason"] == "unknown_game"
        doc = (await http.get("/api/v1/openapi.json")).json()
        assert "/api/v1/games/{game}/catalog" in doc["paths"]


async def test_clocks_come_with_the_match_and_every_commit(player: Player) -> None:
    r = await player.http.post(
        "/api/v1/tickets",
        json={
            "game": "tic_tac_toe",
            "player_counts": [2],
            "allow_bots": True,
            "time_control": "1h",
        },
    )
    assert r.status_code == 200, r.text
    sock = await player.socket()
    await sock.send({"op": "watch_ticket", "sub": "t", "ticket_id": r.json()["ticket_id"]})
    while (frame := await sock.recv())["type"] != "ticket" or frame["state"] != "matched":
        pass
    match_id = frame["matched"]["match_id"]
    m = (await player.http.get(f"/api/v1/matches/{match_id}")).json()
    assert m["time_control"]["kind"] == "KIND_PER_MOVE"
    assert m["server_time"]
    awaited = [c for c in m["clocks"] if c["deadline"]]
    assert {c["seat"] for c in awaited} == set(m["awaiting"])
    await sock.send({"op": "watch", "sub": "m", "match_id": match_id})
    while (frame := await sock.recv()).get("sub") != "m":
        pass
    assert frame["type"] == "commit" and frame["clocks"], frame
    assert frame["timeout"] is False
    await sock.close()
    bad = await player.http.post(
        "/api/v1/tickets",
        json={"game": "tic_tac_toe", "player_counts": [2], "time_control": "-5s"},
    )
    assert bad.status_code == 400 and bad.json()["error"]["reason"] == "bad_time_control"


async def test_a_ticket_names_the_level_of_its_bots(player: Player) -> None:
    for bad, why in (("expert", "unknown"), (3, "not a string")):
        r = await player.http.post(
            "/api/v1/tickets",
            json={"game": "tic_tac_toe", "allow_bots": True, "bot_level": bad},
        )
        assert r.status_code == 400, why
        assert r.json()["error"]["reason"] == "bad_bot_level", why
    r = await player.http.post(
        "/api/v1/tickets",
        json={
            "game": "tic_tac_toe",
            "player_counts": [2],
            "allow_bots": True,
            "bot_level": "search",
        },
    )
    assert r.status_code == 200, r.text  # the refusals queued nothing: not already_queued
    sock = await player.socket()
    await sock.send({"op": "watch_ticket", "sub": "t", "ticket_id": r.json()["ticket_id"]})
    while (frame := await sock.recv())["type"] != "ticket" or frame["state"] != "matched":
        pass
    await sock.close()
    assert frame["matched"]["bots"] == 1 and frame["matched"]["bot_level"] == "search"
    m = (await player.http.get(f"/api/v1/matches/{frame['matched']['match_id']}")).json()
    assert [s["player"] for s in m["seats"] if s["bot"]] == ["bot:search-1"]
    doc = (await player.http.get("/api/v1/openapi.json")).json()
    enqueue = doc["components"]["schemas"]["Enqueue"]["properties"]
    assert set(enqueue["bot_level"]["enum"]) == {"", "random", "greedy", "search"}


async def test_a_ticket_retried_with_its_idempotency_key_is_the_same_ticket(
    player: Player,
) -> None:
    """A phone that lost the reply of POST /tickets sends it again with the
    same key: the same ticket, not already_queued, not a second one."""
    body = {"game": "dice_forge", "player_counts": [4]}  # alone: it keeps searching
    r = await player.http.post("/api/v1/tickets", json=body, headers={"Idempotency-Key": "tap-7"})
    assert r.status_code == 200, r.text
    first = r.json()
    assert first["state"] == "searching" and first["replayed"] is False
    # the header or the body field: the same key
    for kwargs in (
        {"json": body, "headers": {"Idempotency-Key": "tap-7"}},
        {"json": body | {"idempotency_key": "tap-7"}},
    ):
        again = await player.http.post("/api/v1/tickets", **kwargs)
        assert again.status_code == 200, again.text
        assert again.json() == {"ticket_id": first["ticket_id"], "state": "searching",
                                "replayed": True}  # fmt: skip
    # the same key with another request: refused, nothing queued
    other = await player.http.post(
        "/api/v1/tickets", json=body | {"player_counts": [3]}, headers={"Idempotency-Key": "tap-7"}
    )
    assert other.status_code == 409, other.text
    assert other.json()["error"]["reason"] == "idempotency_key_reused"
    for bad in (
        {"json": body | {"idempotency_key": "a"}, "headers": {"Idempotency-Key": "b"}},
        {"json": body | {"idempotency_key": 7}},
        {"json": body, "headers": {"Idempotency-Key": "k" * 201}},
    ):
        r = await player.http.post("/api/v1/tickets", **bad)
        assert r.status_code == 400 and r.json()["error"]["reason"] == "bad_key", r.text
    # without a key: unchanged (the player is queued already, with that ticket)
    r = await player.http.post("/api/v1/tickets", json=body)
    assert r.status_code == 409 and r.json()["error"]["reason"] == "already_queued"
    assert r.json()["error"]["metadata"]["ticket_id"] == first["ticket_id"]
    gone = await player.http.delete(f"/api/v1/tickets/{first['ticket_id']}")
    assert gone.status_code == 200, gone.text
    # the key of an ended ticket answers its final state
    r = await player.http.post("/api/v1/tickets", json=body, headers={"Idempotency-Key": "tap-7"})
    assert r.json() == {"ticket_id": first["ticket_id"], "state": "cancelled", "replayed": True}
    doc = (await player.http.get("/api/v1/openapi.json")).json()
    assert "idempotency_key" in doc["components"]["schemas"]["Enqueue"]["properties"]
    params = doc["paths"]["/api/v1/tickets"]["post"]["parameters"]
    assert [p["name"] for p in params] == ["Idempotency-Key"]


async def test_tournaments_are_listed_joined_and_followed(player: Player, stack: Stack) -> None:
    from services.common.auth import ROLE_ORGANISER, AuthSettings, Tokens, bearer_metadata
    from tabletop.tournaments.v1 import tournaments_pb2 as tpb
    from tabletop.tournaments.v1 import tournaments_pb2_grpc

    organiser = Tokens(AuthSettings(secret=stack._secret())).issue("org", role=ROLE_ORGANISER)
    async with grpc.aio.insecure_channel(stack.endpoints()["tournaments"]) as ch:
        stub = tournaments_pb2_grpc.TournamentServiceStub(ch)
        created = await stub.CreateTournament(
            tpb.CreateTournamentRequest(
                name="Friday Swiss", game="tic_tac_toe", format=tpb.FORMAT_SWISS, rounds=2
            ),
            metadata=bearer_metadata(organiser),
        )
    tid = created.tournament_id
    listed = (await player.http.get("/api/v1/tournaments", params={"status": "registering"})).json()
    assert tid in {t["tournament_id"] for t in listed["tournaments"]}
    sock = await player.socket()
    await sock.send({"op": "watch_tournament", "sub": "x", "tournament_id": tid})
    first = await sock.recv()
    assert first["type"] == "tournament" and first["event_type"] == "created", first
    r = await player.http.post(f"/api/v1/tournaments/{tid}/register")
    assert r.status_code == 200, r.text
    registered = await sock.recv()
    assert registered["event_type"] == "registered", registered
    t = (await player.http.get(f"/api/v1/tournaments/{tid}")).json()
    assert t["name"] == "Friday Swiss" and t["status"] == "STATUS_REGISTERING"
    assert [e["player"] for e in t["entrants"]] == [player.player_id]
    again = await player.http.post(f"/api/v1/tournaments/{tid}/register")
    assert again.status_code == 409 and again.json()["error"]["reason"] == "already_registered"
    r = await player.http.post(f"/api/v1/tournaments/{tid}/withdraw")
    assert r.status_code == 200, r.text
    await sock.close()
