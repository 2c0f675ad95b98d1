"""A step decided on the cached projection appends at the sequence it was
decided at, not at whatever that cached object says later: another
coroutine of the same replica (a result recorded from a fact) folds newer
events into it in place while the step awaits the match service. Appending
at the later sequence would start a round twice (and the round deadline
would then loop on a round that never sees its own deadline event)."""

from __future__ import annotations

from services.tournaments.model import RoundStarted
from tabletop.tournaments.v1 import tournaments_pb2 as pb

from .conftest import ORGANISER, create, finished, register_bots, tournament_events


async def test_a_round_is_started_once_when_the_projection_moves_during_its_creation(stack):
    first = await stack.replica()
    second = await stack.replica()
    stub = stack.stub(first)
    tid = await create(stub, "tic_tac_toe", pb.FORMAT_SWISS, rounds=1)
    await register_bots(stub, tid, 4)
    real_create = first.app.matches.create
    raced = []

    async def create_racing(*args, **kwargs):
        if not raced:
            raced.append(True)
            # meanwhile: another replica starts the round, and this replica
            # folds that into its cached projection (as a fact's record would)
            await second.app.advance(tid)
            await first.app.load(tid, fresh=True)
        return await real_create(*args, **kwargs)

    first.app.matches.create = create_racing
    await stub.Start(pb.StartRequest(tournament_id=tid), metadata=ORGANISER)
    assert raced
    await finished(stub, tid, timeout=60)
    events = await tournament_events(stack.nats_url, tid)
    assert [e.round for e in events if isinstance(e, RoundStarted)] == [1]
