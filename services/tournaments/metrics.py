"""Prometheus metrics of the tournament service (served on the metrics port)."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

EVENTS = Counter(
    "tabletop_tournament_events_total", "Tournament events appended, by type", ["type"]
)
APPEND_CONFLICTS = Counter(
    "tabletop_tournament_append_conflicts_total",
    "Appends that met another event first (another replica, a retry)",
)
MATCHES_CREATED = Counter(
    "tabletop_tournament_matches_created_total", "CreateMatch calls that returned a match"
)
RESULTS = Counter(
    "tabletop_tournament_results_total",
    "MatchFinished facts handled, by outcome (recorded, duplicate, foreign, pending: a queued race ticket not yet resolved)",
    ["outcome"],
)
RECONCILED = Counter(
    "tabletop_tournament_results_reconciled_total",
    "Results found by asking the match service (a fact missed or not yet read)",
)
ROUND_START_SECONDS = Histogram(
    "tabletop_tournament_round_start_seconds",
    "Pairing a round and creating its matches",
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)
ACTIVE = Gauge("tabletop_tournament_active", "Running tournaments this replica follows")
DEADLINES = Counter(
    "tabletop_tournament_round_deadlines_total",
    "Rounds whose deadline came with matches unfinished (RoundDeadlinePassed appended)",
)
ADJUDICATED = Counter(
    "tabletop_tournament_matches_adjudicated_total",
    "Matches decided by the round-deadline rule (MatchAdjudicated appended)",
)
