"""Prometheus metrics of the match service (served on the metrics port)."""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from typing import Any

from prometheus_client import REGISTRY, Counter, Gauge, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

SUBMIT_SECONDS = Histogram(
    "tabletop_match_submit_seconds",
    "SubmitMove handled by the application, by result",
    ["result"],
    buckets=(0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 1.0, 5.0),
)
SUBMITTED = {v: SUBMIT_SECONDS.labels(v) for v in ("active", "finished")}
"""``SUBMIT_SECONDS`` of the moves applied (the match's status after them),
bound once; a refusal's reason is looked up with ``labels``."""
APPEND_CONFLICTS = Counter(
    "tabletop_match_append_conflicts_total",
    "Appends that met another commit first (JetStream 10071)",
)
IDEMPOTENT_REPLIES = Counter(
    "tabletop_match_idempotent_replies_total",
    "Submits answered from an earlier commit with the same idempotency key",
)
REBUILDS = Counter(
    "tabletop_match_projection_rebuilds_total",
    "Projections folded from the stream (cache miss)",
)
CATCH_UPS = Counter(
    "tabletop_match_projection_catch_ups_total",
    "Projections brought forward with the commits since them",
)
MATCHES_CREATED = Counter("tabletop_match_created_total", "Matches created")
MATCHES_FINISHED = Counter("tabletop_match_finished_total", "Matches finished")
WATCHERS = Counter("tabletop_match_watch_streams_total", "WatchMatch and PlayMatch streams opened")
WATCHERS_CONNECTED = Gauge(
    "tabletop_match_watchers_connected",
    "WatchMatch and PlayMatch streams open now in this process, by who watches: a seated "
    "player, a bot (the bot worker follows each of its matches until it ends, "
    "so a match a person left keeps its bot watching), a service, a spectator",
    ["viewer"],
)
WATCHING = {v: WATCHERS_CONNECTED.labels(v) for v in ("player", "bot", "service", "spectator")}
PROJECTION_LOOKUPS = Counter(
    "tabletop_match_projection_lookups_total",
    "Projections loaded, by where they were found (memory, redis, stream)",
    ["source"],
)
LOOKUPS = {v: PROJECTION_LOOKUPS.labels(v) for v in ("memory", "redis", "stream")}
"""The lookup counters by source, bound once (``labels`` costs a lock and a
tuple per call; ``load`` runs once per move)."""
TIMEOUTS = Counter(
    "tabletop_match_timeouts_total",
    "Turn clocks that ran out, by what the server did "
    "(default_move, bot, forfeit, lost_race: the player moved first, refused)",
    ["result"],
)
MATCHES_ENDED = Counter(
    "tabletop_match_ended_by_service_total",
    "Running matches ended from outside by a service (EndMatch: a round deadline)",
)
TIMER_LATENESS = Histogram(
    "tabletop_match_timer_lateness_seconds",
    "How long after its deadline a timeout was handled",
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
)
TIMERS_NOT_ARMED = Counter(
    "tabletop_match_timers_not_armed_total",
    "Commits whose timer could not be scheduled (the reconciler fires them)",
)
TIMERS_RECONCILED = Counter(
    "tabletop_match_timers_reconciled_total",
    "Deadlines the reconciler fired (overdue) or scheduled again (start-up)",
    ["action"],
)
FACTS_RELAYED = Counter(
    "tabletop_match_finished_facts_relayed_total",
    "MatchFinished facts the relay published because the write path had not",
)

# Set by the periodic scan (services.match.observer); the same cluster-wide
# figure on every replica: aggregate with max.
ACTIVE = Gauge("tabletop_match_active", "Matches in progress, by game", ["game"])
STALLED = Gauge(
    "tabletop_match_stalled",
    "Active matches with no commit for longer than TABLETOP_MATCH_STALL_AFTER_S",
    ["game"],
)
IDLE_MAX = Gauge(
    "tabletop_match_idle_seconds_max",
    "The longest time since the last commit among the active matches, by game",
    ["game"],
)
SCANNED_AT = Gauge(
    "tabletop_match_scan_timestamp_seconds", "When the last active-match scan finished"
)


class RulesStreams(Collector):
    """The ApplyMoves streams of this process's rules clients
    (``services.rules.client.MoveStreams``), read when scraped: their plain
    integer counts cost a call nothing. A client's counts go with it (a
    counter reset, as at a restart)."""

    _COUNTS = (
        ("opened", "rules_streams_opened", "ApplyMoves streams opened to the rules service"),
        (
            "respread",
            "rules_streams_respread",
            "ApplyMoves streams replaced for landing on a rules server another stream was on",
        ),
        ("resent", "rules_calls_resent", "Rules calls sent again after their stream broke"),
        ("calls", "rules_stream_calls", "Rules calls sent on ApplyMoves streams"),
        (
            "messages",
            "rules_stream_messages",
            "ApplyMovesRequest messages written (calls over messages: the batching)",
        ),
    )

    def __init__(self) -> None:
        self._streams: weakref.WeakSet[Any] = weakref.WeakSet()

    def track(self, streams: Any) -> None:
        self._streams.add(streams)

    def collect(self) -> Iterator[CounterMetricFamily | GaugeMetricFamily]:
        live = list(self._streams)
        for attr, name, doc in self._COUNTS:
            yield CounterMetricFamily(
                f"tabletop_match_{name}", doc, value=sum(getattr(s, attr) for s in live)
            )
        yield GaugeMetricFamily(
            "tabletop_match_rules_unary_only",
            "1 while a rules client sends every call unary (the server has no ApplyMoves)",
            value=float(any(s.unary_only for s in live)),
        )


RULES_STREAMS = RulesStreams()
REGISTRY.register(RULES_STREAMS)
