"""The rule scenarios of the spec's §9, one test each, named after its number.

Common Given: corners K1 (0,0) Add Tile [E,S], K2 (3,0) Will 1/Shard 1 [S,W],
K3 (0,2) Complete Assignment/Use Item [N,E], K4 (3,2) Complete Assignment [N,W].
"""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from engine_core.errors import EngineError, IllegalMove
from engine_core.games.arcane_academy import GAME
from engine_core.games.arcane_academy.events import (
    AssignmentCompleted,
    CardDiscarded,
    CardDrawn,
    CardRevealed,
    DeckEmptied,
    ExtraTurnCancelled,
    GameEnded,
    PencilsDown,
    TileActivated,
    TileDrawn,
    TilePlaced,
    TurnStarted,
    WillGained,
)
from engine_core.games.arcane_academy.moves import (
    Cast,
    CollectShards,
    CompleteAssignment,
    FinishCast,
    GainWill,
    PlaceTile,
    RemoveToken,
    ResolveLinked,
    Rest,
    SkipPart,
    TakeTile,
    UseItem,
)
from engine_core.games.arcane_academy.rules import (
    connectors,
    cost_of,
    final_outcome,
    linked_set,
    prestige,
)
from engine_core.games.arcane_academy.view import view
from tests.games.arcane_academy.helpers import (
    blank,
    exhaust,
    kinds,
    play,
    put,
    set_player,
    space,
)


def rejected(state, seat, move, code: str | None = None) -> None:
    assert move not in GAME.legal_moves(state, seat)
    with pytest.raises(EngineError) as err:
        GAME.decide(state, seat, move, b"x")
    if code is not None:
        assert err.value.code == code, err.value


def activated(events) -> TileActivated:
    return next(e for e in events if isinstance(e, TileActivated))


def test_scenario_9_1_linked_pair_via_a_corner() -> None:
    s = put(blank(), 0, "T25", 1, 0)
    s = replace(s, market=("T05", "T12", "T33", "T46"), bag=("T17", "T30", "T01"))
    s, ev = play(s, 0, Cast(x=0, y=0))
    assert activated(ev).linked == ((1, 0),)
    s, _ = play(s, 0, TakeTile(slot=1, part=0))
    assert s.players[0].held == ("T12",)
    assert s.phase == "choose_linked"
    s, _ = play(s, 0, ResolveLinked(x=1, y=0), TakeTile(slot=2, part=0))
    assert s.players[0].held == ("T12", "T33")
    assert space(s, 0, 0, 0).exhausted and not space(s, 0, 1, 0).exhausted
    # Held tiles are not on the slate: nothing can be cast; they must be placed.
    assert s.phase == "place_tiles"
    rejected(s, 0, Cast(x=1, y=0), "wrong_phase")
    s, ev = play(s, 0, PlaceTile(tile="T12", x=1, y=1, rotation=0))
    s, ev = play(s, 0, PlaceTile(tile="T33", x=2, y=1, rotation=0))
    assert s.market == ("T05", "T17", "T30", "T46")
    assert [e.slot for e in ev if isinstance(e, TileDrawn)] == [1, 2]
    assert s.current == 1


def test_scenario_9_2_half_connector_on_one_side_only() -> None:
    s = put(put(blank(), 0, "T09", 1, 1), 0, "T36", 2, 1)
    s, ev = play(s, 0, Cast(x=1, y=1))
    assert activated(ev).linked == ()
    shards = s.players[0].shards
    s, ev = play(s, 0, CollectShards(part=0))
    assert s.players[0].shards == shards + 2
    assert s.current == 1  # the cast ended: nothing else happens


def test_scenario_9_3_rotation_completes_the_octagon() -> None:
    s = put(put(blank(), 0, "T09", 1, 1), 0, "T36", 2, 1, r=1)
    s = replace(s, public=("S01a", None, None, None))
    assert connectors(space(s, 0, 2, 1)) == 2 | 8  # E,W
    s, ev = play(s, 0, Cast(x=1, y=1))
    assert activated(ev).linked == ((2, 1),)
    s, _ = play(s, 0, CollectShards(part=0), ResolveLinked(x=2, y=1))
    assert CompleteAssignment(card="S01a", part=0) in GAME.legal_moves(s, 0)
    s, _ = play(s, 0, CompleteAssignment(card="S01a", part=0))
    assert s.players[0].spells == ("S01a",)


def test_scenario_9_4_exhausted_linked_tile_does_not_trigger() -> None:
    s = put(blank(), 0, "T41", 2, 0)
    s = put(s, 0, "T19", 3, 1, exhausted=True)
    s, ev = play(s, 0, Cast(x=3, y=0))
    assert activated(ev).linked == ((2, 0),)
    s, _ = play(s, 0, SkipPart(part=0), FinishCast())
    assert space(s, 0, 3, 0).exhausted and space(s, 0, 3, 1).exhausted
    assert not space(s, 0, 2, 0).exhausted


def test_scenario_9_5_no_chaining() -> None:
    s = put(blank(), 0, "T05", 1, 1)
    s = put(s, 0, "T01", 2, 1)
    s = put(s, 0, "T02", 2, 2)
    will, shards = s.players[0].will, s.players[0].shards
    s, ev = play(s, 0, Cast(x=1, y=1))
    assert activated(ev).linked == ((2, 1),)
    s, _ = play(s, 0, GainWill(part=0), ResolveLinked(x=2, y=1), CollectShards(part=0))
    assert (s.players[0].will, s.players[0].shards) == (will + 1, shards + 1)
    assert [i for i, sp in enumerate(s.players[0].slate) if sp.exhausted] == [1 * 4 + 1]
    assert s.current == 1


def test_scenario_9_6_resolution_order() -> None:
    s = set_player(blank(), 0, items=("I01a",), tokens=(0,))
    s = put(s, 0, "T44", 1, 2, r=3)
    s = put(s, 0, "T15", 0, 1, r=1)
    s, ev = play(s, 0, Cast(x=0, y=2))
    assert set(activated(ev).linked) == {(1, 2), (0, 1)}
    # K3 first: no linked tile may start while K3 is unresolved.
    rejected(s, 0, ResolveLinked(x=1, y=2), "wrong_phase")
    rejected(s, 0, ResolveLinked(x=0, y=1), "wrong_phase")
    s, _ = play(s, 0, SkipPart(part=0), ResolveLinked(x=1, y=2), UseItem(item="I01a", part=0))
    # T44's Shard is still open: T15 cannot start.
    rejected(s, 0, ResolveLinked(x=0, y=1), "wrong_phase")
    shards = s.players[0].shards
    s, _ = play(s, 0, SkipPart(part=1), ResolveLinked(x=0, y=1), CollectShards(part=0))
    assert s.players[0].shards == shards + 1


def test_scenario_9_7_slash_choice() -> None:
    s = put(blank(), 0, "T41", 2, 0)  # linked to K2, keeps the cast open
    s, _ = play(s, 0, Cast(x=3, y=0), GainWill(part=0))
    assert (s.players[0].will, s.players[0].shards) == (4, 3)
    rejected(s, 0, CollectShards(part=0))


def test_scenario_9_8_will_cap() -> None:
    s = put(set_player(blank(), 0, will=8), 0, "T24", 1, 1)
    s, ev = play(s, 0, Cast(x=1, y=1), GainWill(part=0))
    assert s.players[0].will == 9
    assert [e for e in ev if isinstance(e, WillGained)] == [WillGained(seat=0, amount=1, lost=2)]


def test_scenario_9_9_plus_tile_both_parts() -> None:
    s = put(set_player(blank(), 0, will=5, shards=1), 0, "T22", 1, 1)
    s, _ = play(s, 0, Cast(x=1, y=1), GainWill(part=0))
    assert s.current == 0  # the other part is still open
    s, _ = play(s, 0, CollectShards(part=1))
    assert (s.players[0].will, s.players[0].shards) == (7, 3)


def test_scenario_9_10_chaos_magic_gives_exactly_one_action() -> None:
    s = put(set_player(blank(), 0, will=4), 0, "T46", 1, 1)
    s = put(s, 0, "T01", 2, 1)  # a linked tile keeps the cast open
    s = replace(s, public=("S02a", None, None, None))
    s, _ = play(s, 0, Cast(x=1, y=1))
    options = {type(m).__name__ for m in GAME.legal_moves(s, 0)}
    assert options == {"CollectShards", "GainWill", "UseItem", "CompleteAssignment", "SkipPart"} - {
        "UseItem"  # no Item owned; the market is empty, so no TakeTile either
    }
    s, _ = play(s, 0, CompleteAssignment(card="S02a", part=0))
    assert s.players[0].will == 1 and s.players[0].spells == ("S02a",)
    assert s.players[0].completed == 1
    for move in (GainWill(part=0), CollectShards(part=0), SkipPart(part=0)):
        rejected(s, 0, move)


def test_scenario_9_11_stacking_onto_an_exhausted_tile() -> None:
    s = put(blank(), 0, "T01", 1, 1, exhausted=True)
    s = replace(set_player(s, 0, held=("T22",)), phase="place_tiles")
    s, ev = play(s, 0, PlaceTile(tile="T22", x=1, y=1, rotation=0))
    placed = next(e for e in ev if isinstance(e, TilePlaced))
    assert placed.covered == "T01" and placed.exhausted
    sp = space(s, 0, 1, 1)
    assert sp.stack == ("T01", "T22") and sp.exhausted
    # A later turn: (1,1) cannot be cast until a Rest removes the token.
    s = replace(s, current=0, phase="turn_start")
    rejected(s, 0, Cast(x=1, y=1), "space_exhausted")
    s, _ = play(s, 0, Rest())
    assert not space(s, 0, 1, 1).exhausted
    s = replace(s, current=0, phase="turn_start")
    assert Cast(x=1, y=1) in GAME.legal_moves(s, 0)


def test_scenario_9_12_stacking_on_a_corner() -> None:
    s = replace(set_player(blank(), 0, held=("T33",)), phase="place_tiles")
    s, _ = play(s, 0, PlaceTile(tile="T33", x=0, y=0, rotation=0))
    sp = space(s, 0, 0, 0)
    assert sp.stack == ("K1", "T33")
    s = put(s, 0, "T05", 1, 0)  # W faces (0,0)
    s = put(s, 0, "T06", 0, 1)  # N faces (0,0)
    s = replace(s, current=0, phase="turn_start", public=("S01a", None, None, None))
    assert set(linked_set(s.players[0].slate, 0)) == {1, 4}  # E and S come from T33
    s, _ = play(s, 0, Cast(x=0, y=0))
    moves = GAME.legal_moves(s, 0)
    assert CompleteAssignment(card="S01a", part=0) in moves
    assert not any(isinstance(m, TakeTile) for m in moves)  # K1's Add Tile is gone


def _bob() -> object:
    s = put(blank(), 1, "T01", 0, 2)  # K3 covered
    return replace(s, current=1, phase="place_tiles")


def test_scenario_9_13_last_complete_assignment_protected() -> None:
    s = set_player(_bob(), 1, held=("T05",))
    for r in range(4):
        rejected(s, 1, PlaceTile(tile="T05", x=3, y=2, rotation=r), "last_assignment_action")
    for x, y in [(0, 0), (1, 1), (0, 2), (3, 0)]:
        assert PlaceTile(tile="T05", x=x, y=y, rotation=0) in GAME.legal_moves(s, 1)
    s = set_player(_bob(), 1, held=("T46",))
    play(s, 1, PlaceTile(tile="T46", x=3, y=2, rotation=0))


def test_scenario_9_14_placement_order_matters() -> None:
    s = set_player(_bob(), 1, held=("T33", "T05"))
    rejected(s, 1, PlaceTile(tile="T05", x=3, y=2, rotation=0), "last_assignment_action")
    s, _ = play(
        s,
        1,
        PlaceTile(tile="T33", x=1, y=1, rotation=0),
        PlaceTile(tile="T05", x=3, y=2, rotation=0),
    )
    assert space(s, 1, 3, 2).stack == ("K4", "T05")


def test_scenario_9_15_rest_with_a_swap() -> None:
    s = put(blank(), 0, "T01", 1, 0, exhausted=True)
    s = put(s, 0, "T02", 2, 1, exhausted=True)
    s = exhaust(s, 0, 3, 0)
    s = set_player(s, 0, hand=("S15a", "I02b", "S04a"))
    s = replace(s, deck=("I07a", "S01a", "S01b"))
    s, ev = play(s, 0, Rest(discard="S15a"))
    assert not any(sp.exhausted for sp in s.players[0].slate)
    assert s.players[0].hand == ("I02b", "S04a", "I07a")
    assert s.players[0].discarded == ("S15a",) and s.discard_count == 1
    assert s.deck == ("S01a", "S01b")  # no end-of-turn draw: the hand holds 3
    assert kinds(ev).count("CardDrawn") == 1
    assert not any(isinstance(e, TileActivated) for e in ev)
    # Only Carol sees the cards.
    for e in ev:
        if isinstance(e, CardDrawn | CardDiscarded):
            assert GAME.redact(e, 0) == e
            assert GAME.redact(e, 1).card is None and GAME.redact(e, None).card is None
    other = view(s, 1).players[0]
    assert other.hand is None and other.hand_count == 3 and other.discarded is None
    assert view(s, 0).players[0].hand == ("I02b", "S04a", "I07a")


def test_scenario_9_16_rest_with_dream_pillow() -> None:
    s = set_player(blank(), 0, items=("I10a",), tokens=(0,), will=9, shards=0)
    s, _ = play(s, 0, Rest())
    assert (s.players[0].will, s.players[0].shards) == (9, 1)


def test_scenario_9_17_complete_a_public_spell_refill() -> None:
    s = put(set_player(blank(), 0, will=6), 0, "T33", 1, 1)
    s = put(s, 0, "T01", 2, 1)  # keeps the turn open after the completion
    s = replace(s, public=("S02a", "S04a", "S07a", "S08a"), deck=("S01a", "S01b", "I01a"))
    s, _ = play(s, 0, Cast(x=1, y=1), CompleteAssignment(card="S07a", part=0))
    assert s.players[0].will == 1 and s.players[0].spells == ("S07a",)
    assert s.public[2] is None
    s, ev = play(s, 0, FinishCast())
    assert next(e for e in ev if isinstance(e, CardRevealed)) == CardRevealed(slot=2, card="S01a")
    assert s.public == ("S02a", "S04a", "S01a", "S08a")


def test_scenario_9_18_focusing_wand_discount() -> None:
    s = set_player(blank(), 0, items=("I08a",), tokens=(0,), will=6, hand=("S13a",))
    s = put(s, 0, "T33", 1, 1)
    s, ev = play(s, 0, Cast(x=1, y=1), CompleteAssignment(card="S13a", part=0))
    done = next(e for e in ev if isinstance(e, AssignmentCompleted))
    assert done.will_paid == 6 and done.slot is None
    assert s.players[0].will == 0


def test_scenario_9_19_jewelers_loupe_never_discounts_itself() -> None:
    s = set_player(blank(), 0, shards=4)
    s = put(s, 0, "T33", 1, 1)
    s = replace(s, public=("I09a", "I03a", None, None))
    s, ev = play(s, 0, Cast(x=1, y=1), CompleteAssignment(card="I09a", part=0))
    assert next(e for e in ev if isinstance(e, AssignmentCompleted)).shards_paid == 4
    assert s.players[0].shards == 0
    s = replace(set_player(s, 0, shards=2), current=0, phase="turn_start")
    s, ev = play(s, 0, Cast(x=0, y=2), CompleteAssignment(card="I03a", part=0))
    assert next(e for e in ev if isinstance(e, AssignmentCompleted)).shards_paid == 2
    assert s.players[0].shards == 0
    assert cost_of(s.players[0], "I01a") == 1


def test_scenario_9_20_repeated_use_item_on_one_item() -> None:
    s = set_player(blank(), 0, items=("I04a",), tokens=(0,))
    s = put(s, 0, "T41", 1, 1)
    s = put(s, 0, "T42", 2, 1, r=2)
    s, ev = play(s, 0, Cast(x=1, y=1))
    assert (2, 1) in activated(ev).linked
    s, _ = play(
        s,
        0,
        UseItem(item="I04a", part=0),
        ResolveLinked(x=2, y=1),
        UseItem(item="I04a", part=0),
    )
    assert s.players[0].tokens == (2,)
    assert prestige(s.players[0]) == 3


def test_scenario_9_21_unexhausting_the_activated_tile_during_its_own_cast() -> None:
    s = set_player(blank(), 0, items=("I03a",), tokens=(0,))
    s, _ = play(s, 0, Cast(x=0, y=2), UseItem(item="I03a", part=0))
    assert space(s, 0, 0, 2).exhausted
    assert GAME.legal_moves(s, 0) == (RemoveToken(x=0, y=2),)  # Hourglass is not optional
    s, _ = play(s, 0, RemoveToken(x=0, y=2))
    assert not space(s, 0, 0, 2).exhausted
    assert s.current == 1
    s = replace(s, current=0, phase="turn_start")
    assert Cast(x=0, y=2) in GAME.legal_moves(s, 0)


def test_scenario_9_22_end_of_turn_refill_order() -> None:
    s = set_player(blank(), 0, hand=("S02b", "S01a", "S04a"), will=5, shards=5)
    s = put(s, 0, "T37", 1, 0, r=3)  # W,N: linked to K1 (E)
    s = put(s, 0, "T38", 0, 1, r=0)  # N,S: linked to K1 (S)
    s = replace(
        s,
        market=("T05", "T06", "T07", "T08"),
        bag=("T17", "T30", "T01"),
        public=("S05a", "I03a", "S06a", "S07a"),
        deck=("S08a", "I14b", "S01b", "S03a"),
    )
    s, _ = play(
        s,
        0,
        Cast(x=0, y=0),
        TakeTile(slot=0, part=0),
        ResolveLinked(x=1, y=0),
        CompleteAssignment(card="I03a", part=0),
        TakeTile(slot=3, part=1),
        ResolveLinked(x=0, y=1),
        CompleteAssignment(card="S02b", part=0),
        SkipPart(part=1),
    )
    assert s.players[0].held == ("T05", "T08")
    s, ev = play(
        s,
        0,
        PlaceTile(tile="T05", x=2, y=1, rotation=0),
        PlaceTile(tile="T08", x=2, y=2, rotation=0),
    )
    assert s.market == ("T17", "T06", "T07", "T30")
    assert s.public[1] == "S08a"
    assert s.players[0].hand == ("S01a", "S04a", "I14b")
    order = [type(e).__name__ for e in ev if isinstance(e, TileDrawn | CardRevealed | CardDrawn)]
    assert order == ["TileDrawn", "TileDrawn", "CardRevealed", "CardDrawn"]


def _completed(n: int) -> dict:
    spells = tuple(f"S0{1 + i // 2}{'ab'[i % 2]}" for i in range(n))
    return {"spells": spells}


def test_scenario_9_23_pencils_down_and_final_turns_3_players() -> None:
    s = replace(blank(3), current=1)
    s = set_player(s, 1, **_completed(8))
    s, ev = play(s, 1, Rest())
    pd = next(e for e in ev if isinstance(e, PencilsDown))
    assert (pd.seat, pd.reason, pd.final_order) == (1, "completions", (2, 0, 1))
    assert ev[-1] == TurnStarted(seat=2, kind="final", round=1)
    s, _ = play(s, 2, Rest())
    assert s.current == 0
    s = set_player(s, 0, **_completed(9))  # P1 reaches 9 in its final turn
    s, ev = play(s, 0, Rest())
    assert not any(isinstance(e, PencilsDown) for e in ev)
    assert ev[-1] == TurnStarted(seat=1, kind="final", round=1)
    s, ev = play(s, 1, Rest())
    assert isinstance(ev[-1], GameEnded) and s.outcome is not None
    assert GAME.awaiting(s) == ()


def test_scenario_9_24_eight_reached_mid_turn() -> None:
    s = set_player(blank(), 0, **_completed(7), will=9)
    s = put(s, 0, "T01", 3, 1)  # linked to K4 (N)
    s = replace(
        s, public=("S02a", "S03a", "S03b", "S05a"), deck=("S07a", "S07b", "S08a", "S08b", "S09a")
    )
    s, _ = play(s, 0, Cast(x=3, y=2), CompleteAssignment(card="S02a", part=0))
    assert s.players[0].completed == 8
    assert s.pencils_down is None and s.phase == "choose_linked"
    s, ev = play(s, 0, ResolveLinked(x=3, y=1), CollectShards(part=0))
    names = kinds(ev)
    assert names.index("CardRevealed") < names.index("PencilsDown")
    assert s.pencils_down == 0 and s.end_reason == "completions"


def test_scenario_9_25_deck_out() -> None:
    s = set_player(blank(), 0, hand=("S01a", "S02a", "S04a"), will=9)
    s = put(s, 0, "T33", 1, 1)
    s = put(s, 0, "T34", 2, 1, r=2)  # S,W,N: W faces T33's E
    s = replace(s, public=("S02b", None, None, None), deck=("S07a",))
    s, _ = play(
        s,
        0,
        Cast(x=1, y=1),
        CompleteAssignment(card="S02b", part=0),
        ResolveLinked(x=2, y=1),
        CompleteAssignment(card="S01a", part=0),
    )
    assert s.public[0] == "S07a" and s.deck == ()
    assert len(s.players[0].hand) == 2
    assert s.pencils_down == 0 and s.end_reason == "deck_out"
    assert s.final_queue == (0,) and s.current == 1 and s.turn_kind == "final"
    # Nobody can swap on Rest any more.
    assert GAME.legal_moves(s, 1)[-1] == Rest()
    assert not any(isinstance(m, Rest) and m.discard for m in GAME.legal_moves(s, 1))
    s, ev = play(s, 1, Rest())
    assert ev[-1] == TurnStarted(seat=0, kind="final", round=1)
    s, ev = play(s, 0, Rest())
    assert isinstance(ev[-1], GameEnded)


def test_scenario_9_25_deck_out_event() -> None:
    s = set_player(blank(), 0, hand=("S01a", "S02a"))
    s = replace(s, deck=("S07a",))
    s, ev = play(s, 0, Rest())
    assert kinds(ev)[-4:] == ["CardDrawn", "DeckEmptied", "PencilsDown", "TurnStarted"]
    assert next(e for e in ev if isinstance(e, DeckEmptied)).seat == 0


def test_scenario_9_26_extra_turn_normal_and_cancelled() -> None:
    s = set_player(blank(), 0, **_completed(5), will=9, hand=("S10a",))
    s = put(s, 0, "T33", 1, 1)
    s2, ev = play(s, 0, Cast(x=1, y=1), CompleteAssignment(card="S10a", part=0))
    assert s2.players[0].completed == 6
    assert ev[-1] == TurnStarted(seat=0, kind="extra", round=1)
    s2, ev = play(s2, 0, Rest())
    assert ev[-1] == TurnStarted(seat=1, kind="normal", round=1)
    # The 8th completion is S10: Pencils Down cancels the extra turn.
    s = set_player(s, 0, **_completed(7))
    s3, ev = play(s, 0, Cast(x=1, y=1), CompleteAssignment(card="S10a", part=0))
    names = kinds(ev)
    assert names.index("PencilsDown") < names.index("ExtraTurnCancelled")
    assert next(e for e in ev if isinstance(e, ExtraTurnCancelled)).count == 1
    assert ev[-1] == TurnStarted(seat=1, kind="final", round=1)
    assert s3.extra_owed == 0


def test_scenario_9_27_scoring() -> None:
    s = set_player(
        blank(),
        0,
        spells=("S07a", "S02a"),
        items=("I04a", "I11a", "I13a"),
        tokens=(2, 0, 0),
        shards=5,
    )
    gina = s.players[0]
    assert prestige(gina) == 15 and gina.completed == 5


def test_scenario_9_28_tie_break_by_completions() -> None:
    s = set_player(
        blank(),
        0,
        spells=("S07a", "S02a"),
        items=("I04a", "I11a", "I13a"),
        tokens=(2, 0, 0),
        shards=5,
    )
    s = set_player(
        s, 1, spells=("S13a", "S07b", "S04a", "S04b", "S01a"), items=("I07a",), tokens=(0,)
    )
    ranks, pp = final_outcome(s)
    assert pp == (15, 15) and ranks == (2, 1)
    # And through the end of a real final turn.
    s = replace(s, pencils_down=1, end_reason="completions", final_queue=(1,))
    s, _ = play(s, 0, Rest())
    s, _ = play(s, 1, Rest())
    assert s.outcome is not None and s.outcome.ranks == (2, 1) and s.outcome.winners == (1,)


def test_scenario_9_29_empty_bag_and_market() -> None:
    s = put(blank(), 0, "T05", 1, 0)  # linked to K1: keeps the cast open
    s, _ = play(s, 0, Cast(x=0, y=0))
    assert GAME.legal_moves(s, 0) == (SkipPart(part=0),)
    s, ev = play(s, 0, SkipPart(part=0), FinishCast())
    assert not any(isinstance(e, TileDrawn | PencilsDown) for e in ev)
    assert ev[-1] == TurnStarted(seat=1, kind="normal", round=1)


def test_scenario_9_30_cast_illegal_on_an_exhausted_space() -> None:
    s = put(blank(), 0, "T05", 2, 1, exhausted=True)
    rejected(s, 0, Cast(x=2, y=1), "space_exhausted")
    moves = GAME.legal_moves(s, 0)
    assert Cast(x=0, y=0) in moves and Rest() in moves
    with pytest.raises(IllegalMove) as err:
        GAME.decide(s, 0, Cast(x=1, y=1), b"x")
    assert err.value.code == "empty_space"


def test_scenario_9_31_round_limit() -> None:
    s = replace(blank(3, first=1), current=0, round=40, extra_owed=1)
    s, ev = play(s, 0, Rest())
    pd = next(e for e in ev if isinstance(e, PencilsDown))
    assert (pd.seat, pd.reason, pd.final_order) == (0, "round_limit", (1, 2, 0))
    assert ExtraTurnCancelled(seat=0, count=1) in ev
    assert ev[-1] == TurnStarted(seat=1, kind="final", round=40)
    for seat in (1, 2, 0):
        s, ev = play(s, seat, Rest())
    assert isinstance(ev[-1], GameEnded) and ev[-1].reason == "round_limit"
    # Had P2 or P3 ended a 40th normal turn, nothing would have happened.
    for seat in (1, 2):
        s = replace(blank(3, first=1), current=seat, round=40)
        s, ev = play(s, seat, Rest())
        assert not any(isinstance(e, PencilsDown) for e in ev)


def test_scenario_9_31_every_player_gets_exactly_41_normal_turns() -> None:
    s = blank(2, first=1)
    turns = [0, 0]
    while s.outcome is None:
        seat = s.current
        turns[seat] += 1
        s, _ = play(s, seat, Rest())
    assert turns == [41, 41] and s.outcome.reason == "round_limit"
