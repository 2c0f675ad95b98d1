"""Prometheus metrics of the matchmaking service."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

TICKETS_ENQUEUED = Counter("matchmaking_tickets_enqueued_total", "Tickets queued", ["game"])
MATCHES_MADE = Counter(
    "matchmaking_matches_total", "Matches created from tickets", ["game", "players"]
)
TICKETS_MATCHED = Counter("matchmaking_tickets_matched_total", "Tickets that got a match", ["game"])
QUEUE_TICKETS = Gauge(
    "matchmaking_queue_tickets",
    "Tickets waiting in a queue (game, player count, options)",
    ["queue"],
)
BOT_SEATS = Counter("matchmaking_bot_seats_total", "Seats given to bots", ["game"])
CREATE_FAILURES = Counter(
    "matchmaking_create_failures_total", "CreateMatch calls that failed (tickets released)"
)
TICKETS_SWEPT = Counter(
    "matchmaking_tickets_swept_total", "Tickets expired or cancelled for a lost watcher"
)
ROUND_SECONDS = Histogram(
    "matchmaking_round_seconds",
    "One pairing round (sweep, read, pair, claim, create, finalise)",
    buckets=(0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 2, 5, 10),
)
MATCHES_RATED = Counter("matchmaking_matches_rated_total", "MatchFinished facts rated", ["result"])
