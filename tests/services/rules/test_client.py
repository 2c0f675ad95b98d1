"""The typed client over a dns:/// target, with deadlines and typed errors."""

import grpc
import pytest

from engine_core.types import Outcome
from services.common.errors import ServiceError, status_of
from services.rules.client import RulesClient, RulesError


@pytest.fixture
async def rules(rules_process):
    async with RulesClient(f"dns:///127.0.0.1:{rules_process.port}", timeout=5) as client:
        yield client


async def test_a_game_through_the_client(rules):
    games = await rules.list_games()
    ttt = next(g for g in games if g.id == "tic_tac_toe")
    assert (ttt.min_players, ttt.max_players) == (2, 2)
    assert "PlaceMark" in ttt.schemas["move"]["$defs"]
    played = await rules.new_game("tic_tac_toe", 2, entropy=b"seed")
    assert played.entropy == b"seed"
    for seat, cell in [(0, 0), (1, 3), (0, 1), (1, 4), (0, 2)]:
        played = await rules.apply_move(
            "tic_tac_toe", played.state, seat, {"type": "place_mark", "cell": cell}
        )
    assert played.event_dicts()[-1]["type"] == "game_ended"
    expected = Outcome(ranks=(1, 2), scores=(1.0, 0.0), reason="three_in_a_row")
    assert played.status.outcome == expected and played.status.awaiting == ()
    assert (await rules.outcome("tic_tac_toe", played.state)).outcome == expected
    view, status = await rules.view("tic_tac_toe", played.state, None)
    assert '"board":[0,0,0,1,1,-1,-1,-1,-1]' in view and status.over


async def test_rejections_are_rules_errors_that_keep_status_and_reason(rules):
    played = await rules.new_game("tic_tac_toe", 2)
    with pytest.raises(RulesError) as e:
        await rules.apply_move("tic_tac_toe", played.state, 1, '{"type": "place_mark", "cell": 4}')
    assert e.value.status == grpc.StatusCode.FAILED_PRECONDITION
    assert e.value.reason == "not_your_turn" and e.value.metadata["error"] == "NotYourTurn"
    # re-raised by another service, it maps to the same status and reason
    assert isinstance(e.value, ServiceError)
    assert status_of(e.value)[:2] == (grpc.StatusCode.FAILED_PRECONDITION, "not_your_turn")
    with pytest.raises(RulesError) as e:
        await rules.legal_moves("chess", played.state, 0)
    assert (e.value.status, e.value.reason) == (grpc.StatusCode.NOT_FOUND, "unknown_game")


async def test_fold_rebuilds_and_refuses_logs_that_do_not_apply(rules):
    new = await rules.new_game("tic_tac_toe", 2, entropy=b"s")
    one = await rules.apply_move("", new.state, 0, {"type": "place_mark", "cell": 4})
    assert one.rules_version == "1" and one.visible(None) == one.events
    state, status = await rules.fold("tic_tac_toe", None, [*new.events, *one.events])
    assert state == one.state and status.awaiting == (1,)
    state, _ = await rules.fold("", new.state, one.events)
    assert state == one.state
    cases = [
        (None, ['{"type": "mark_placed"}'], "malformed_event"),
        (None, one.events, "events_do_not_apply"),  # a move before the game started
        (None, [], "nothing_to_fold"),
    ]
    for state, events, reason in cases:
        with pytest.raises(RulesError) as e:
            await rules.fold("tic_tac_toe", state, events)
        assert (e.value.status, e.value.reason) == (grpc.StatusCode.INVALID_ARGUMENT, reason)


async def test_full_state_only_once_the_game_is_over(rules):
    played = await rules.new_game("tic_tac_toe", 2)
    with pytest.raises(RulesError) as e:
        await rules.view("", played.state, None, full=True)
    assert (e.value.status, e.value.reason) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "game_not_over",
    )
    for seat, cell in [(0, 0), (1, 3), (0, 1), (1, 4), (0, 2)]:
        played = await rules.apply_move(
            "", played.state, seat, {"type": "place_mark", "cell": cell}
        )
    view, status = await rules.view("", played.state, None, full=True)
    assert '"outcome":{"ranks":[1,2]' in view and status.over


async def test_an_unknown_game_named_beside_a_state_is_not_found(rules):
    played = await rules.new_game("tic_tac_toe", 2)
    with pytest.raises(RulesError) as e:
        await rules.legal_moves("no_such_game", played.state, 0)
    assert e.value.reason == "unknown_game"
