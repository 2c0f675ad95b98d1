"""The gateway's OpenAPI 3.1 document (served at ``/api/v1/openapi.json``)."""

from __future__ import annotations

from typing import Any

ERROR = {"$ref": "#/components/schemas/Error"}


def _ok(schema: dict[str, Any], description: str = "OK") -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _errors(*codes: int) -> dict[str, Any]:
    text = {
        400: "Bad input (INVALID_ARGUMENT)",
        401: "No or bad token (UNAUTHENTICATED)",
        403: "Not yours (PERMISSION_DENIED)",
        404: "No such thing (NOT_FOUND)",
        409: "Illegal now, or a stale version (FAILED_PRECONDITION, ABORTED, ALREADY_EXISTS)",
        429: "Rate limited (RESOURCE_EXHAUSTED; Retry-After set)",
        503: "A service behind the gateway is down (UNAVAILABLE)",
    }
    return {str(c): _ok(ERROR, text[c]) for c in codes}


def _op(
    op_id: str,
    summary: str,
    ok: dict[str, Any],
    *,
    auth: bool = True,
    body: dict[str, Any] | None = None,
    params: list[dict[str, Any]] | None = None,
    errors: tuple[int, ...] = (400, 401, 404, 503),
) -> dict[str, Any]:
    op: dict[str, Any] = {
        "operationId": op_id,
        "summary": summary,
        "responses": {"200": _ok(ok), **_errors(*errors)},
    }
    if auth:
        op["security"] = [{"bearer": []}]
    if body is not None:
        op["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": body}},
        }
    if params:
        op["parameters"] = params
    return op


def _path(name: str, description: str) -> dict[str, Any]:
    return {
        "name": name,
        "in": "path",
        "required": True,
        "description": description,
        "schema": {"type": "string", "maxLength": 200},
    }


OBJ = {"type": "object"}
ANY: dict[str, Any] = {}
CLOCKS = {
    "type": "array",
    "description": "turn clocks per seat (docs/clocks.md); empty without a time control",
    "items": {
        "type": "object",
        "properties": {
            "seat": {"type": "integer"},
            "deadline": {"type": ["string", "null"], "description": "RFC 3339 UTC"},
            "remaining_ms": {"type": ["integer", "null"]},
            "timeouts": {"type": "integer"},
            "taken_over": {"type": "boolean"},
        },
    },
}


def openapi_document() -> dict[str, Any]:
    ref = lambda name: {"$ref": f"#/components/schemas/{name}"}  # noqa: E731
    match_id = _path("match_id", "the match id")
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Tabletop gateway",
            "version": "1",
            "description": (
                "HTTP + JSON and one WebSocket (`/api/v1/ws`, protocol in docs/gateway.md) "
                "over the Tabletop gRPC services. Errors carry the same status and reason "
                "codes as gRPC (docs/errors.md)."
            ),
        },
        "paths": {
            "/api/v1/auth/guest": {
                "post": _op(
                    "guestLogin",
                    "A token for a new guest player (no token needed)",
                    ref("Token"),
                    auth=False,
                    body={
                        "type": "object",
                        "properties": {"name": {"type": "string", "maxLength": 64}},
                    },
                    errors=(400, 429, 503),
                )
            },
            "/api/v1/auth/refresh": {
                "post": _op("refreshToken", "A fresh token for the same player", ref("Token"))
            },
            "/api/v1/games/{game}/catalog": {
                "get": _op(
                    "gameCatalog",
                    "The game's public component tables (cards, faces, tiles, regions, "
                    "units: names, costs, points, effects); never any match's state",
                    {"type": "object", "properties": {"game": {"type": "string"}}},
                    auth=False,
                    params=[_path("game", "the game id")],
                    errors=(404,),
                )
            },
            "/api/v1/games": {
                "get": _op(
                    "listGames",
                    "The games, their player counts and options schemas",
                    {
                        "type": "object",
                        "properties": {"games": {"type": "array", "items": ref("Game")}},
                    },
                    auth=False,
                    errors=(503,),
                )
            },
            "/api/v1/matches": {
                "get": _op(
                    "listMatches",
                    "The caller's matches, newest first",
                    {"type": "object", "properties": {"matches": {"type": "array", "items": OBJ}}},
                    params=[
                        {
                            "name": "status",
                            "in": "query",
                            "schema": {"enum": ["", "active", "finished"]},
                        }
                    ],
                )
            },
            "/api/v1/matches/{match_id}": {
                "get": _op(
                    "getMatch",
                    "The match as the caller may see it, with the caller's legal moves",
                    ref("Match"),
                    params=[match_id],
                )
            },
            "/api/v1/matches/{match_id}/moves": {
                "post": _op(
                    "submitMove",
                    "Play one move for the caller's seat",
                    ref("MoveResult"),
                    params=[match_id],
                    body=ref("SubmitMove"),
                    errors=(400, 401, 403, 404, 409, 429, 503),
                )
            },
            "/api/v1/matches/{match_id}/replay": {
                "get": _op(
                    "replayMatch",
                    "Every commit with the caller's view after it (in full for public replays)",
                    {
                        "type": "object",
                        "properties": {"commits": {"type": "array", "items": ref("Commit")}},
                    },
                    params=[match_id],
                )
            },
            "/api/v1/tickets": {
                "post": _op(
                    "enqueue",
                    "Queue for a match (follow it on the WebSocket with watch_ticket). "
                    "Safe to retry with an Idempotency-Key header (or idempotency_key): "
                    "the retry answers the same ticket, replayed true",
                    {
                        "type": "object",
                        "properties": {
                            "ticket_id": {"type": "string"},
                            "state": {"enum": ["searching", "matched", "cancelled", "expired"]},
                            "replayed": {
                                "type": "boolean",
                                "description": "an earlier request with the same key made "
                                "this ticket: nothing new was queued",
                            },
                        },
                    },
                    body=ref("Enqueue"),
                    params=[
                        {
                            "name": "Idempotency-Key",
                            "in": "header",
                            "required": False,
                            "description": "at most 200 characters; the same key as "
                            "idempotency_key when both are sent",
                            "schema": {"type": "string", "maxLength": 200},
                        }
                    ],
                    errors=(400, 401, 409, 429, 503),
                )
            },
            "/api/v1/tickets/{ticket_id}": {
                "delete": _op(
                    "cancelTicket",
                    "Leave the queue",
                    OBJ,
                    params=[_path("ticket_id", "the ticket id")],
                )
            },
            "/api/v1/leaderboard/{game}": {
                "get": _op(
                    "leaderboard",
                    "The best rated players of a game",
                    OBJ,
                    auth=False,
                    params=[_path("game", "the game id")],
                )
            },
        },
        "components": {
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}
            },
            "schemas": {
                "Error": {
                    "type": "object",
                    "required": ["error"],
                    "properties": {
                        "error": {
                            "type": "object",
                            "required": ["status", "reason", "message"],
                            "properties": {
                                "status": {"type": "string", "description": "the gRPC status name"},
                                "reason": {"type": "string", "description": "a stable reason code"},
                                "message": {"type": "string"},
                                "metadata": {
                                    "type": "object",
                                    "additionalProperties": {"type": "string"},
                                },
                            },
                        }
                    },
                },
                "Token": {
                    "type": "object",
                    "properties": {
                        "player_id": {"type": "string"},
                        "token": {"type": "string"},
                        "expires_at": {"type": "string", "format": "date-time"},
                    },
                },
                "Game": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string"},
                        "title": {"type": "string"},
                        "min_players": {"type": "integer"},
                        "max_players": {"type": "integer"},
                        "rules_version": {"type": "string"},
                        "options_schema": OBJ,
                    },
                },
                "Match": {
                    "type": "object",
                    "properties": {
                        "match_id": {"type": "string"},
                        "game": {"type": "string"},
                        "version": {"type": "integer"},
                        "status": {"enum": ["active", "finished"]},
                        "seats": {"type": "array", "items": OBJ},
                        "your_seat": {"type": ["integer", "null"]},
                        "view": ANY,
                        "awaiting": {"type": "array", "items": {"type": "integer"}},
                        "legal_moves": {"type": "array", "items": OBJ},
                        "outcome": {"type": ["object", "null"]},
                        "clocks": CLOCKS,
                        "server_time": {"type": "string", "description": "RFC 3339"},
                    },
                },
                "SubmitMove": {
                    "type": "object",
                    "required": ["move"],
                    "properties": {
                        "move": {"type": "object", "description": "one of the legal moves"},
                        "expected_version": {"type": "integer", "minimum": 0},
                        "idempotency_key": {"type": "string", "maxLength": 200},
                        "seat": {"type": "integer", "minimum": 0},
                    },
                },
                "MoveResult": {
                    "type": "object",
                    "properties": {
                        "version": {"type": "integer"},
                        "seat": {"type": "integer"},
                        "events": {"type": "array", "items": OBJ},
                        "status": {"enum": ["active", "finished"]},
                        "outcome": {"type": ["object", "null"]},
                    },
                },
                "Commit": {
                    "type": "object",
                    "properties": {
                        "version": {"type": "integer"},
                        "seat": {"type": ["integer", "null"]},
                        "events": {"type": "array", "items": OBJ},
                        "view": ANY,
                        "move": ANY,
                        "status": {"enum": ["active", "finished"]},
                        "committed_at": {"type": "string"},
                        "clocks": CLOCKS,
                        "timeout": {
                            "type": "boolean",
                            "description": "the server moved: time ran out",
                        },
                        "forfeit": {"type": "boolean"},
                    },
                },
                "Enqueue": {
                    "type": "object",
                    "required": ["game"],
                    "properties": {
                        "game": {"type": "string"},
                        "player_counts": {"type": "array", "items": {"type": "integer"}},
                        "options": OBJ,
                        "allow_bots": {"type": "boolean"},
                        "time_control": {
                            "type": "string",
                            "description": 'the turn clock ("30s", "5m+3s", "default", '
                            '"none"); empty: the matchmaker\'s',
                        },
                        "bot_level": {
                            "enum": ["", "random", "greedy", "search"],
                            "description": "the difficulty of the bots that may fill the "
                            "match (with allow_bots); empty: the matchmaker's setting",
                        },
                        "idempotency_key": {
                            "type": "string",
                            "maxLength": 200,
                            "description": "a retry with the same key answers the same "
                            "ticket; the same key with another request is 409 "
                            "idempotency_key_reused (or send the Idempotency-Key header)",
                        },
                    },
                },
            },
        },
    }
