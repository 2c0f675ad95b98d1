"""The HTTP face of the gateway: JSON routes under ``/api/v1``, the
WebSocket at ``/api/v1/ws``, the OpenAPI document, and the browser client.

Tokens travel as ``Authorization: Bearer <token>`` (no cookies, so no CSRF
surface); the WebSocket authenticates with its first message. Every route is
one call of ``GatewayApp``; refusals are ``GatewayError`` bodies.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from services.common.auth import Tokens
from services.common.logging import get_logger
from services.gateway import metrics
from services.gateway.app import GatewayApp
from services.gateway.catalog import catalog
from services.gateway.errors import GatewayError, bad_request
from services.gateway.openapi import openapi_document
from services.gateway.settings import GatewaySettings
from services.gateway.socket import SocketSession

log = get_logger("gateway")

Handler = Callable[[Request], Awaitable[Any]]

#: Content Security Policy of the browser client: its own scripts only.
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self' ws: wss:; frame-ancestors 'none'; base-uri 'none'"
)


def bearer(request: Request) -> str:
    value = request.headers.get("authorization", "")
    scheme, _, token = value.partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


async def json_body(request: Request, limit: int) -> dict[str, Any]:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise bad_request("body_too_large", f"the body is larger than {limit} bytes")
    raw = await request.body()
    if len(raw) > limit:
        raise bad_request("body_too_large", f"the body is larger than {limit} bytes")
    if not raw:
        return {}
    try:
        body = json.loads(raw)
    except RecursionError:
        raise bad_request("json_too_deep", "the JSON body is nested too deeply") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise bad_request("bad_json", f"the body is not JSON: {str(e)[:80]}") from None
    if not isinstance(body, dict):
        raise bad_request("bad_json", "the body must be a JSON object")
    return body


def route(name: str, handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    """One log line, one metric and JSON errors for every route."""

    async def endpoint(request: Request) -> Response:
        started = time.perf_counter()
        status = 200
        try:
            data = await handler(request)
            response: Response = JSONResponse(data)
        except GatewayError as e:
            status = e.http_status
            response = JSONResponse(e.body(), status_code=status)
            if e.retry_after_s is not None:
                response.headers["retry-after"] = str(max(1, round(e.retry_after_s)))
            level = log.warning if e.status == "UNAUTHENTICATED" else log.info
            if status >= 500:
                level = log.error
            level("http_refused", route=name, status=e.status, reason=e.reason)
        except Exception:
            status = 500
            log.exception("http_failed", route=name)
            response = JSONResponse(
                GatewayError("INTERNAL", "internal", "the gateway failed").body(), status_code=500
            )
        seconds = time.perf_counter() - started
        metrics.HTTP_REQUESTS.labels(name, str(status)).inc()
        metrics.HTTP_SECONDS.labels(name).observe(seconds)
        return response

    return endpoint


class SecurityHeaders:
    """Headers every response carries (the client is same-origin only)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers += [
                    (b"x-content-type-options", b"nosniff"),
                    (b"referrer-policy", b"no-referrer"),
                    (b"content-security-policy", CSP.encode()),
                ]
                if scope["path"].startswith("/api/"):
                    headers.append((b"cache-control", b"no-store"))
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, with_headers)


def build(settings: GatewaySettings, app: GatewayApp | None = None) -> Starlette:
    gw = app or GatewayApp(settings)
    tokens = Tokens(settings.auth)
    limit = settings.max_body_bytes
    web = Path(settings.web_dir)

    async def guest(request: Request) -> Any:
        body = await json_body(request, limit)
        client = request.client.host if request.client is not None else None
        return await gw.guest_login(body.get("name", ""), client)

    async def refresh(request: Request) -> Any:
        return await gw.refresh(bearer(request))

    async def games(request: Request) -> Any:
        return {"games": await gw.games()}

    async def game_catalog(request: Request) -> Any:
        game = request.path_params["game"]
        found = catalog(game)
        if found is None or game not in {g["id"] for g in await gw.games()}:
            raise GatewayError("NOT_FOUND", "unknown_game", f"no game {game[:64]!r} is served")
        return found

    async def matches(request: Request) -> Any:
        status = request.query_params.get("status", "")
        return {"matches": await gw.list_matches(bearer(request), status)}

    async def match(request: Request) -> Any:
        return await gw.get_match(bearer(request), request.path_params["match_id"])

    async def move(request: Request) -> Any:
        body = await json_body(request, limit)
        return await gw.submit(bearer(request), request.path_params["match_id"], body)

    async def replay(request: Request) -> Any:
        commits = await gw.replay(bearer(request), request.path_params["match_id"])
        return {"commits": commits}

    async def enqueue(request: Request) -> Any:
        body = await json_body(request, limit)
        return await gw.enqueue(bearer(request), body, request.headers.get("idempotency-key"))

    async def cancel(request: Request) -> Any:
        return await gw.cancel_ticket(bearer(request), request.path_params["ticket_id"])

    async def leaderboard(request: Request) -> Any:
        raw = request.query_params.get("limit", "10")
        if not raw.isdigit() or not 0 < int(raw) <= 100:
            raise bad_request("bad_limit", "limit must be 1..100")
        entries = await gw.leaderboard(request.path_params["game"], int(raw))
        return {"entries": entries}

    async def tournaments(request: Request) -> Any:
        q = request.query_params
        found = await gw.tournaments_list(bearer(request), q.get("status", ""), q.get("game", ""))
        return {"tournaments": found}

    async def tournament(request: Request) -> Any:
        return await gw.tournament(bearer(request), request.path_params["tournament_id"])

    async def register(request: Request) -> Any:
        return await gw.register(bearer(request), request.path_params["tournament_id"])

    async def withdraw(request: Request) -> Any:
        tid = request.path_params["tournament_id"]
        return await gw.register(bearer(request), tid, withdraw=True)

    async def health(request: Request) -> Any:
        return {"status": "ok"}

    async def openapi(request: Request) -> Any:
        return openapi_document()

    async def index(request: Request) -> Response:
        return FileResponse(web / "index.html", headers={"cache-control": "no-cache"})

    async def socket(websocket: Any) -> None:
        await SocketSession(websocket, gw, tokens, settings).run()

    routes = [
        Route("/api/v1/auth/guest", route("guest_login", guest), methods=["POST"]),
        Route("/api/v1/auth/refresh", route("refresh_token", refresh), methods=["POST"]),
        Route("/api/v1/games", route("list_games", games), methods=["GET"]),
        Route("/api/v1/games/{game}/catalog", route("game_catalog", game_catalog), methods=["GET"]),
        Route("/api/v1/matches", route("list_matches", matches), methods=["GET"]),
        Route("/api/v1/matches/{match_id}", route("get_match", match), methods=["GET"]),
        Route("/api/v1/matches/{match_id}/moves", route("submit_move", move), methods=["POST"]),
        Route("/api/v1/matches/{match_id}/replay", route("replay", replay), methods=["GET"]),
        Route("/api/v1/tickets", route("enqueue", enqueue), methods=["POST"]),
        Route("/api/v1/tickets/{ticket_id}", route("cancel_ticket", cancel), methods=["DELETE"]),
        Route("/api/v1/leaderboard/{game}", route("leaderboard", leaderboard), methods=["GET"]),
        Route("/api/v1/tournaments", route("list_tournaments", tournaments), methods=["GET"]),
        Route(
            "/api/v1/tournaments/{tournament_id}",
            route("get_tournament", tournament),
            methods=["GET"],
        ),
        Route(
            "/api/v1/tournaments/{tournament_id}/register",
            route("register", register),
            methods=["POST"],
        ),
        Route(
            "/api/v1/tournaments/{tournament_id}/withdraw",
            route("withdraw", withdraw),
            methods=["POST"],
        ),
        Route("/api/v1/openapi.json", route("openapi", openapi), methods=["GET"]),
        Route("/healthz", route("health", health), methods=["GET"]),
        WebSocketRoute("/api/v1/ws", socket),
        Route("/", index, methods=["GET"]),
    ]
    if web.is_dir():
        routes.append(Mount("/web", app=StaticFiles(directory=web), name="web"))
    middleware = [Middleware(SecurityHeaders)]
    if settings.cors_origins:
        middleware.append(
            Middleware(
                CORSMiddleware,
                allow_origins=list(settings.cors_origins),
                allow_methods=["GET", "POST", "DELETE"],
                allow_headers=["authorization", "content-type", "idempotency-key"],
                max_age=600,
            )
        )

    async def lifespan(_app: Starlette) -> Any:
        yield
        await gw.close()

    return Starlette(
        routes=routes,
        middleware=middleware,
        lifespan=asynccontextmanager(lifespan),
        exception_handlers={404: no_route, 405: no_route},
    )


async def no_route(request: Request, exc: Exception) -> Response:
    """A path or method no route takes: under ``/api/``, the API's JSON error
    (a client reads every refusal of the API the same way); elsewhere (the
    browser client's files) Starlette's plain answer."""
    assert isinstance(exc, HTTPException)
    if not request.url.path.startswith("/api/"):
        return PlainTextResponse(exc.detail, status_code=exc.status_code, headers=exc.headers)
    if exc.status_code == 405:
        allowed = (exc.headers or {}).get("allow", "")
        error = GatewayError(
            "UNIMPLEMENTED",
            "method_not_allowed",
            f"{request.method} is not a method of this route (it takes {allowed})",
        )
    else:
        error = GatewayError(
            "NOT_FOUND", "no_route", "no API route at this path: see /api/v1/openapi.json"
        )
    return JSONResponse(error.body(), status_code=exc.status_code, headers=exc.headers)
