"""Rules beyond the numbered scenarios: Hekaton on the move, forced trades,
giantslayer transit, the round limit, tie-breaks, hidden decks."""

from __future__ import annotations

import msgspec
from msgspec.structs import replace

from engine_core.games.assault_of_the_giants import GAME
from engine_core.games.assault_of_the_giants import data as D
from engine_core.games.assault_of_the_giants import moves as M
from engine_core.games.assault_of_the_giants import rules as R
from engine_core.games.assault_of_the_giants.events import GameEnded, StageBegan
from tests.games.assault_of_the_giants.helpers import (
    G,
    U,
    act,
    base,
    kinds_of,
    legal,
    place,
    resources,
    row,
    seat,
    turn,
)


def test_hekaton_moves_into_a_full_region_by_returning_the_storm_champion() -> None:
    s = turn(base(), "storm")
    p = seat(s, "storm")
    s = place(s, "storm_hekaton", "Luskan")
    s, _ = act(s, p, M.PlayCommand(command="move"))
    # Trackless Sea holds Serissa, the Champion and an elite: full (limit 3)
    assert M.Maneuver(unit=U["storm_hekaton"], to=G["Trackless Sea"]) in legal(s, p)
    s, _ = act(s, p, M.Maneuver(unit=U["storm_hekaton"], to=G["Trackless Sea"]))
    assert s.unit_loc[U["storm_champion"]] == D.SUPPLY
    assert len(R.giants_at(s, G["Trackless Sea"])) == 3
    # nobody else may enter a full friendly region
    s2 = place(turn(base(), "storm"), "storm_regular_1", "Luskan")
    s2, _ = act(s2, p, M.PlayCommand(command="move"))
    assert M.Maneuver(unit=U["storm_regular_1"], to=G["Trackless Sea"]) not in legal(s2, p)


def test_forced_trade_returns_come_from_the_cards_held_before() -> None:
    s = turn(base(), "hill")
    p = seat(s, "hill")
    s = resources(s, "hill", ["armament", "armament"])
    s = resources(s, "frost", ["food", "food", "rune_ise"])
    f = seat(s, "frost")
    s, _ = act(s, p, M.PlayCommand(command="trade"))
    s, _ = act(s, p, M.StartTrade(mode="forced", partner=f))
    s, _ = act(s, p, M.GiveCard(card="armament"))
    s, _ = act(s, p, M.GiveCard(card="armament"))
    s, _ = act(s, p, M.ConfirmTrade())
    assert R.awaiting(s) == (f,)
    assert {m.card for m in legal(s, f)} == {"food", "rune_ise"}  # not the armaments
    s, _ = act(s, f, M.ReturnCard(card="rune_ise"))
    s, _ = act(s, f, M.ReturnCard(card="food"))
    assert kinds_of(s.resources[p]) == ["food", "rune_ise"]
    assert kinds_of(s.resources[f]) == ["armament", "armament", "food"]
    assert s.active != p


def test_a_giantslayer_may_only_pass_through_a_starting_region() -> None:
    s = turn(base(), "hill")
    p = seat(s, "hill")
    s = row(s, "hill", ("move", "trade"))
    s = place(s, "giantslayer_1", "Silverymoon")
    s, _ = act(s, p, M.PlayCommand(command="rest"))
    assert s.budget == 2
    s, _ = act(s, p, M.GsMove(slayer=U["giantslayer_1"], to=G["Greypeak Mountains"]))
    assert s.transit == U["giantslayer_1"]
    assert M.EndRest() not in legal(s, p)
    assert all(isinstance(m, M.GsMove) for m in legal(s, p))
    s, _ = act(s, p, M.GsMove(slayer=U["giantslayer_1"], to=G["High Forest"]))
    assert s.active != p and s.rows[p] == ()


def test_the_round_limit_starts_the_endgame_and_round_31_is_the_last() -> None:
    s = base(players=3)
    last = (s.start_seat - 1) % 3
    s = replace(s, round=30, active=last, phase="turn")
    s, ev = act(s, last, M.PlayCommand(command="rest"))
    assert [(e.stage, e.final_round) for e in ev if isinstance(e, StageBegan)] == [("endgame", 31)]
    for _ in range(3):
        assert s.outcome is None and s.round == 31
        p = s.active
        s, ev = act(s, p, M.PlayCommand(command="rest"))
    assert s.outcome is not None and any(isinstance(e, GameEnded) for e in ev)


def test_ties_go_to_board_ov_then_to_the_lower_ordning_number() -> None:
    s = base(players=3)
    fire, frost, hill = seat(s, "fire"), seat(s, "frost"), seat(s, "hill")
    op = [0, 0, 0]
    for p in (fire, frost, hill):
        op[p] = 10
    s = replace(s, op=tuple(op))
    ctx = R.Ctx(s, None)  # type: ignore[arg-type]
    R.finish_game(ctx, "test")
    ov = {p: R.board_ov(s, p) for p in (fire, frost, hill)}
    ranks = ctx.s.outcome.ranks
    order = sorted((fire, frost, hill), key=lambda p: (-ov[p], D.ORDNING[D.RACES[s.seat_race[p]]]))
    assert [ranks[p] for p in order] == [1, 2, 3]


def test_deck_orders_never_leave_the_engine() -> None:
    s = base(players=4)
    secret = GAME.secrets(s)[None]
    assert len(secret) == len(s.res_deck) + len(s.spell_deck) + len(s.uni_deck)
    for viewer in (None, 0, 1, 2, 3):
        text = msgspec.json.encode(GAME.view(s, viewer)).decode()
        assert not [c for c in secret if c in text]
