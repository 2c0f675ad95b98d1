"""The match application: create, move, read, watch, replay, list.

Each use case is its own file, one path through the service:
``writes.py`` (create, submit), ``timers.py`` (turn clocks running out: the
fire consumer, the reconciler), ``endings.py`` (a service ending a match
from outside), ``reads.py`` (get, list), ``streams.py`` (watch, replay),
``plays.py`` (a watch and moves on one stream), ``sessions.py`` (any
number of those, and creates, on one stream), all over ``projections.py``
(loading a match) and ``base.py`` (ports, settings, the calls to the rules and the store).
"""

from __future__ import annotations

from services.match.base import AppConfig
from services.match.endings import Endings, EndResult
from services.match.reads import MatchView, Reads
from services.match.sessions import Sessions
from services.match.streams import CommitView, Turn
from services.match.writes import MoveResult

__all__ = ["AppConfig", "CommitView", "EndResult", "MatchApp", "MatchView", "MoveResult", "Turn"]


class MatchApp(Endings, Reads, Sessions):
    """Matches as event streams: every use case over one set of ports."""
