"""Round trips of the wire types: engine values to proto and back."""

import asyncio

from hypothesis import given
from hypothesis import strategies as st

from engine_core.types import Outcome
from services.rules.client import GameStatus, RulesClient, RulesError
from services.rules.servicer import outcome_pb
from tabletop.rules.v1 import rules_pb2

outcomes = st.integers(1, 6).flatmap(
    lambda n: st.builds(
        Outcome,
        ranks=st.tuples(*[st.integers(1, n)] * n),
        scores=st.tuples(*[st.floats(allow_nan=False, allow_infinity=False)] * n),
        reason=st.text(max_size=20),
    )
)


@given(outcome=st.none() | outcomes, awaiting=st.lists(st.integers(0, 5), max_size=6))
def test_status_round_trips_through_proto(outcome, awaiting):
    pb = rules_pb2.GameStatus(awaiting=awaiting, outcome=outcome_pb(outcome))
    back = GameStatus.from_pb(rules_pb2.GameStatus.FromString(pb.SerializeToString()))
    assert back == GameStatus(tuple(awaiting), outcome)


async def test_concurrent_good_and_bad_calls_are_all_answered(rules_address):
    async with RulesClient(rules_address, timeout=20) as rules:
        new = await rules.new_game("tic_tac_toe", 2, entropy=b"c")

        async def good(i: int) -> str:
            played = await rules.apply_move("", new.state, 0, {"type": "place_mark", "cell": i % 9})
            return played.events[0]

        async def bad(i: int) -> str:
            try:
                await rules.apply_move("tic_tac_toe", bytes([i % 256]) * 7, 0, "{}")
            except RulesError as e:
                return e.reason
            return "accepted"

        results = await asyncio.gather(*(good(i) if i % 2 else bad(i) for i in range(200)))
    assert all(r == "corrupt_state" for r in results[0::2])
    assert all('"mark_placed"' in r for r in results[1::2])
