"""Prometheus metrics of the matchmaking service."""

from __future__ import annotations

from collections.abc import Iterable

from prometheus_client import Counter, Gauge, Histogram

TICKETS_ENQUEUED = Counter("matchmaking_tickets_enqueued_total", "Tickets queued", ["game"])
ENQUEUE_REPLAYED = Counter(
    "matchmaking_enqueue_replayed_total",
    "Enqueues answered with the ticket an earlier one with the same idempotency key made",
    ["game"],
)
MATCHES_MADE = Counter(
    "matchmaking_matches_total", "Matches created from tickets", ["game", "players"]
)
TICKETS_MATCHED = Counter("matchmaking_tickets_matched_total", "Tickets that got a match", ["game"])
QUEUE_TICKETS = Gauge(
    "matchmaking_queue_tickets",
    "Tickets waiting, by game and player count (all option sets summed; a "
    "ticket open to several player counts is counted in each)",
    ["game", "players"],
)
_queue_labels: set[tuple[str, str]] = set()


def set_queue_sizes(sizes: Iterable[tuple[str, int, int]]) -> None:
    """``(game, players, tickets)`` of every queue read in a round: summed by
    game and player count; a queue gone since the last round reads 0."""
    totals: dict[tuple[str, str], int] = {}
    for game, players, tickets in sizes:
        key = (game, str(players))
        totals[key] = totals.get(key, 0) + tickets
    for key in _queue_labels - totals.keys():
        QUEUE_TICKETS.labels(*key).set(0)
    for key, tickets in totals.items():
        QUEUE_TICKETS.labels(*key).set(tickets)
    _queue_labels.update(totals)


BOT_SEATS = Counter(
    "matchmaking_bot_seats_total", "Seats given to bots, by game and level", ["game", "level"]
)
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
