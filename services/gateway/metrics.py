"""The gateway's Prometheus metrics."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

HTTP_REQUESTS = Counter(
    "tabletop_gateway_http_requests_total", "HTTP requests by route and status", ["route", "status"]
)
HTTP_SECONDS = Histogram(
    "tabletop_gateway_http_seconds",
    "HTTP request latency by route",
    ["route"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
SOCKETS = Gauge("tabletop_gateway_sockets_connected", "WebSockets open now")
SOCKET_FRAMES = Counter(
    "tabletop_gateway_socket_frames_total", "WebSocket frames sent by type", ["type"]
)
SOCKET_RESUMES = Counter(
    "tabletop_gateway_stream_resumes_total",
    "Upstream streams resumed after their last version (upstream failover)",
)

for _route in ("guest_login", "list_games", "get_match", "submit_move", "list_matches"):
    HTTP_SECONDS.labels(_route)
