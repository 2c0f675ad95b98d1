"""Turn clocks in the gateway's JSON (no servers: the proto to JSON step)."""

from __future__ import annotations

from services.gateway.app import commit_dict, match_dict
from tabletop.match.v1 import match_pb2


def test_match_and_commit_json_carry_the_clocks() -> None:
    clocks = [
        match_pb2.SeatClock(seat=0, deadline="2026-12-01T10:00:00.000Z", remaining_ms=9000),
        match_pb2.SeatClock(seat=1, timeouts=2, taken_over=True),
    ]
    m = match_dict(
        match_pb2.GetMatchResponse(clocks=clocks, server_time="2026-12-01T09:59:55.000Z")
    )
    assert m["server_time"] == "2026-12-01T09:59:55.000Z"
    assert m["clocks"] == [
        {
            "seat": 0,
            "deadline": "2026-12-01T10:00:00.000Z",
            "remaining_ms": 9000,
            "timeouts": 0,
            "taken_over": False,
        },
        {"seat": 1, "deadline": None, "remaining_ms": None, "timeouts": 2, "taken_over": True},
    ]
    c = commit_dict(match_pb2.MatchCommit(version=3, clocks=clocks, timeout=True))
    assert c["timeout"] and not c["forfeit"] and len(c["clocks"]) == 2
    assert match_dict(match_pb2.GetMatchResponse())["clocks"] == []


def test_a_commit_ended_by_a_service_says_so() -> None:
    from tabletop.common.v1 import common_pb2

    c = commit_dict(
        match_pb2.MatchCommit(
            version=7,
            status=match_pb2.MATCH_STATUS_FINISHED,
            outcome=common_pb2.Outcome(
                ranks=[2, 1], scores=[0, 1], reason="adjudicated:round_deadline"
            ),
            ended_by_service=True,
        )
    )
    assert c["ended_by_service"] and c["seat"] is None and not c["forfeit"]
    assert c["outcome"]["reason"] == "adjudicated:round_deadline"
    assert not commit_dict(match_pb2.MatchCommit(version=1))["ended_by_service"]
