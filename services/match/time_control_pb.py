"""The time control's proto form, both ways: what the match service reads
from a request and what the services that create matches (matchmaking,
tournaments) send. Its own module, so that they import no more of the match
service than this (the application's modules register its metrics, which a
process that is not the match service must not export).
"""

from __future__ import annotations

from typing import Any

from services.match.model import (
    ON_MAX_BOT,
    ON_MAX_FORFEIT,
    TC_FISCHER,
    TC_GAME_DEFAULT,
    TC_NONE,
    TC_PER_MOVE,
    TimeControl,
)
from tabletop.match.v1 import match_pb2

__all__ = ["time_control_in", "time_control_pb"]

_TC = match_pb2.TimeControl
_KIND_IN = {
    _TC.KIND_UNSPECIFIED: TC_NONE,
    _TC.KIND_NONE: TC_NONE,
    _TC.KIND_PER_MOVE: TC_PER_MOVE,
    _TC.KIND_FISCHER: TC_FISCHER,
    _TC.KIND_GAME_DEFAULT: TC_GAME_DEFAULT,
}
_KIND_OUT = {v: k for k, v in _KIND_IN.items() if k != _TC.KIND_UNSPECIFIED}
_ON_MAX_IN = {
    _TC.ON_MAX_TIMEOUTS_UNSPECIFIED: ON_MAX_BOT,
    _TC.ON_MAX_TIMEOUTS_BOT: ON_MAX_BOT,
    _TC.ON_MAX_TIMEOUTS_FORFEIT: ON_MAX_FORFEIT,
}
_ON_MAX_OUT = {ON_MAX_BOT: _TC.ON_MAX_TIMEOUTS_BOT, ON_MAX_FORFEIT: _TC.ON_MAX_TIMEOUTS_FORFEIT}


def time_control_in(pb: Any) -> TimeControl:
    """The proto's time control as the model's (checked by the application;
    an unknown enum number becomes a kind the check refuses)."""
    return TimeControl(
        kind=_KIND_IN.get(pb.kind, f"unknown({pb.kind})"),
        per_move_ms=pb.per_move_ms,
        initial_ms=pb.initial_ms,
        increment_ms=pb.increment_ms,
        delay_ms=pb.delay_ms,
        max_timeouts=pb.max_timeouts,
        on_max_timeouts=_ON_MAX_IN.get(pb.on_max_timeouts, f"unknown({pb.on_max_timeouts})"),
        bot=pb.bot,
    )


def time_control_pb(tc: TimeControl | None) -> Any:
    if tc is None:
        return None
    return match_pb2.TimeControl(
        kind=_KIND_OUT[tc.kind],
        per_move_ms=tc.per_move_ms,
        initial_ms=tc.initial_ms,
        increment_ms=tc.increment_ms,
        delay_ms=tc.delay_ms,
        max_timeouts=tc.max_timeouts,
        on_max_timeouts=_ON_MAX_OUT[tc.on_max_timeouts],
        bot=tc.bot,
    )
