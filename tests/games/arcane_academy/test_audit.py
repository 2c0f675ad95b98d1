"""Rules audit: one Given/When/Then test per spec rule that the §9 scenarios
do not pin down on their own, named after the spec section."""

from __future__ import annotations

import msgspec
import pytest
from msgspec.structs import replace

from engine_core.decider import fold
from engine_core.errors import IllegalMove
from engine_core.flow import seats_from
from engine_core.games.arcane_academy import GAME
from engine_core.games.arcane_academy.events import (
    AssignmentCompleted,
    CardDrawn,
    DeckEmptied,
    ExtraTurnCancelled,
    GameEnded,
    LinkedTileStarted,
    PencilsDown,
    TileActivated,
    TurnStarted,
    WillGained,
)
from engine_core.games.arcane_academy.moves import (
    Cast,
    CompleteAssignment,
    PlaceTile,
    ResolveLinked,
    Rest,
    TakeTile,
    UseItem,
)
from engine_core.games.arcane_academy.rules import final_outcome
from engine_core.games.arcane_academy.view import view
from engine_core.testing import setup_entropy
from tests.games.arcane_academy.helpers import blank, exhaust, kinds, play, put, set_player, space

_json = msgspec.json.Encoder()


def two_completions(**player) -> object:
    """Seat 0: T33 (Complete Assignment) on (1,1) linked to T34 on (2,1) at r=2
    (S,W,N: its W meets T33's E), so one cast completes two Assignments."""
    s = set_player(blank(), 0, **player)
    return put(put(s, 0, "T33", 1, 1), 0, "T34", 2, 1, r=2)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_3_setup_is_the_same_at_every_player_count(players: int) -> None:
    for seed in range(5):
        events = GAME.setup(players, None, setup_entropy(seed))
        s = fold(GAME, events)
        first = s.first_player
        # Given the setup, Then every player has 3 Will, 3 Shards, 3 private cards
        # and a fresh Slate with only the four corners on it.
        for p in s.players:
            assert (p.will, p.shards, len(p.hand)) == (3, 3, 3)
            assert [sp.stack for sp in p.slate if sp.stack] == [("K1",), ("K2",), ("K3",), ("K4",)]
            assert not any(sp.exhausted for sp in p.slate)
        assert None not in s.market and None not in s.public
        assert len(s.bag) == 44 and len(s.deck) == 60 - 4 - 3 * players
        # Hands are dealt 3 at a time, starting with the first player.
        dealt = [e.seat for e in events if isinstance(e, CardDrawn)]
        assert dealt == [seat for seat in seats_from(first, players) for _ in range(3)]
        assert events[-1] == TurnStarted(seat=first, kind="normal", round=1)
        assert s.pencils_down is None and s.extra_owed == 0


def test_4_1_cast_is_not_legal_when_every_space_is_exhausted_or_empty() -> None:
    s = blank()
    for x, y in [(0, 0), (3, 0), (0, 2), (3, 2)]:
        s = exhaust(s, 0, x, y)
    assert all(isinstance(m, Rest) for m in GAME.legal_moves(s, 0))


def test_4_1_linked_set_is_fixed_at_activation() -> None:
    # Given T33 on (1,1) and an exhausted, connected T01 on (2,1)
    s = put(set_player(blank(), 0, hand=("S06a",), will=9), 0, "T33", 1, 1)
    s = put(s, 0, "T01", 2, 1, exhausted=True)
    # When T33 is cast and Second Wind removes every token
    s, ev = play(s, 0, Cast(x=1, y=1), CompleteAssignment(card="S06a", part=0))
    # Then T01 is fresh again but never joins the linked set
    assert next(e for e in ev if isinstance(e, TileActivated)).linked == ()
    assert not space(s, 0, 2, 1).exhausted
    assert not any(isinstance(e, LinkedTileStarted) for e in ev)
    assert s.current == 1


def test_5_2_will_cap_applies_to_item_gains_too() -> None:
    s = set_player(blank(), 0, items=("I05a",), tokens=(0,), will=8, shards=2)
    s, ev = play(s, 0, Cast(x=0, y=2), UseItem(item="I05a", part=0))
    assert (s.players[0].will, s.players[0].shards) == (9, 0)
    assert WillGained(seat=0, amount=1, lost=2) in ev


def test_5_4_an_item_completed_earlier_this_turn_may_be_used() -> None:
    s = set_player(blank(), 0, hand=("I02a",), shards=2)
    s = put(put(s, 0, "T33", 1, 1), 0, "T41", 2, 1)
    s, _ = play(s, 0, Cast(x=1, y=1), CompleteAssignment(card="I02a", part=0))
    s, _ = play(s, 0, ResolveLinked(x=2, y=1))
    assert UseItem(item="I02a", part=0) in GAME.legal_moves(s, 0)
    s, _ = play(s, 0, UseItem(item="I02a", part=0))
    assert s.players[0].shards == 1


def test_5_5_an_always_ability_takes_effect_at_once() -> None:
    # Given Will 3 and Shards 4, a public Focusing Wand and a private Levitation (3)
    s = two_completions(hand=("S02a",), will=3, shards=4)
    s = replace(s, public=("I08a", None, None, None))
    s, _ = play(s, 0, Cast(x=1, y=1), CompleteAssignment(card="I08a", part=0))
    s, ev = play(s, 0, ResolveLinked(x=2, y=1), CompleteAssignment(card="S02a", part=0))
    # Then the Spell completed after the Wand in the same turn costs 2
    paid = next(e for e in ev if isinstance(e, AssignmentCompleted))
    assert paid.will_paid == 2 and s.players[0].will == 1


def test_5_6_chaos_magic_offers_add_tile_and_use_item() -> None:
    s = set_player(blank(), 0, items=("I01a",), tokens=(0,))
    s = put(put(s, 0, "T46", 1, 1), 0, "T01", 2, 1)
    s = replace(s, market=("T05", None, "T06", None))
    s, _ = play(s, 0, Cast(x=1, y=1))
    moves = GAME.legal_moves(s, 0)
    assert {TakeTile(slot=0, part=0), TakeTile(slot=2, part=0)} <= set(moves)
    assert UseItem(item="I01a", part=0) in moves
    s, _ = play(s, 0, TakeTile(slot=2, part=0))
    assert s.players[0].held == ("T06",)
    assert not any(isinstance(m, UseItem | TakeTile) for m in GAME.legal_moves(s, 0))


def test_5_7_exhausted_and_slash_sources_still_count() -> None:
    # Given K3 covered by T39 (Complete Assignment / Use Item), exhausted
    s = put(blank(), 0, "T39", 0, 2, exhausted=True)
    s = replace(set_player(s, 0, held=("T05",)), phase="place_tiles")
    # Then covering K4 with a plain resource tile is legal
    assert PlaceTile(tile="T05", x=3, y=2, rotation=1) in GAME.legal_moves(s, 0)
    s, _ = play(s, 0, PlaceTile(tile="T05", x=3, y=2, rotation=1))
    assert space(s, 0, 3, 2).stack == ("K4", "T05")


def test_6_2_deck_out_through_the_hand_refill() -> None:
    # Given one card left and a private card completed this turn
    s = put(set_player(blank(), 0, hand=("S01a", "S02a", "S04a"), will=9), 0, "T33", 1, 1)
    s = replace(s, public=("I15a", "I15b", "I14a", "I14b"), deck=("S07a",))
    s, ev = play(s, 0, Cast(x=1, y=1), CompleteAssignment(card="S01a", part=0))
    # Then the hand refill takes the last card and P1 calls Pencils Down
    assert kinds(ev)[-4:] == ["CardDrawn", "DeckEmptied", "PencilsDown", "TurnStarted"]
    assert next(e for e in ev if isinstance(e, DeckEmptied)).seat == 0
    assert next(e for e in ev if isinstance(e, PencilsDown)).reason == "deck_out"
    assert s.players[0].hand == ("S02a", "S04a", "S07a")


def test_6_4_several_extra_turns_are_taken_one_after_another() -> None:
    s = two_completions(hand=("S10a", "S10b"), will=9)
    s = replace(s, deck=())
    s = set_player(s, 0, will=9)
    s, _ = play(s, 0, Cast(x=1, y=1), CompleteAssignment(card="S10a", part=0))
    s = set_player(s, 0, will=9)
    s, ev = play(s, 0, ResolveLinked(x=2, y=1), CompleteAssignment(card="S10b", part=0))
    assert ev[-1] == TurnStarted(seat=0, kind="extra", round=1) and s.extra_owed == 1
    s, ev = play(s, 0, Rest())
    assert ev[-1] == TurnStarted(seat=0, kind="extra", round=1) and s.extra_owed == 0
    s, ev = play(s, 0, Rest())
    assert ev[-1] == TurnStarted(seat=1, kind="normal", round=1)


def test_6_4_an_extra_turn_earned_in_a_final_turn_is_cancelled() -> None:
    # Given Pencils Down is held by seat 1 and seat 0 plays its final turn
    s = put(set_player(blank(), 0, hand=("S10a",), will=9), 0, "T33", 1, 1)
    s = replace(s, pencils_down=1, end_reason="completions", final_queue=(1,), turn_kind="final")
    s, ev = play(s, 0, Cast(x=1, y=1), CompleteAssignment(card="S10a", part=0))
    # Then the extra turn is cancelled and seat 1 takes the last final turn
    assert ExtraTurnCancelled(seat=0, count=1) in ev
    assert ev[-1] == TurnStarted(seat=1, kind="final", round=1)
    s, ev = play(s, 1, Rest())
    assert isinstance(ev[-1], GameEnded)


def test_6_6_tie_break_by_will_and_shards_then_shared() -> None:
    s = set_player(blank(), 0, spells=("S07a",), will=2, shards=3)
    s = set_player(s, 1, spells=("S07b",), will=4, shards=0)
    assert final_outcome(s) == ((1, 2), (3, 3))
    s = set_player(s, 1, will=5)
    assert final_outcome(s) == ((1, 1), (3, 3))


def test_7_a_rest_swap_reveals_neither_card_to_other_seats() -> None:
    # Given Carol (seat 0) holds S15a and the deck top is I07a
    s = set_player(blank(3), 0, hand=("S15a", "I02b", "S04a"))
    s = replace(s, deck=("I07a", "S01a", "S01b"))
    # When she Rests and discards S15a
    s, ev = play(s, 0, Rest(discard="S15a"))
    # Then no event or view another seat (or a spectator) receives names either card
    for viewer in (1, 2, None):
        seen = b"".join(_json.encode(GAME.redact(e, viewer)) for e in ev)
        seen += _json.encode(view(s, viewer))
        assert b"S15a" not in seen and b"I07a" not in seen
    mine = b"".join(_json.encode(GAME.redact(e, 0)) for e in ev) + _json.encode(view(s, 0))
    assert b"S15a" in mine and b"I07a" in mine
    assert view(s, 1).discard_count == 1 and view(s, 1).players[0].hand_count == 3


def test_2_4_tile_mix_and_2_5_card_list() -> None:
    from collections import Counter

    from engine_core.games.arcane_academy import data

    def kind(tile: str) -> str:
        actions = {a for part in data.PARTS[tile] for a, _ in part}
        if len(data.PARTS[tile][0]) == 5:
            return "chaos"
        for a in (data.COMPLETE, data.ADD_TILE, data.USE_ITEM):
            if a in actions:
                return a
        return "resource"

    mix = Counter(kind(t) for t in data.TILE_IDS)
    assert mix == {"resource": 24, "add_tile": 8, "complete": 8, "use_item": 5, "chaos": 3}
    slashed = [t for t in data.TILE_IDS if kind(t) == "complete" and len(data.PARTS[t][0]) == 2]
    assert slashed == ["T39", "T40"]
    designs = Counter(data.KIND[data.design(c)] for c in data.CARD_IDS)
    assert designs == {"spell": 30, "item": 30}
    assert data.CARD_IDS[:4] == ("S01a", "S01b", "S02a", "S02b")
    # Corners: fixed connectors whatever the rotation (§2.3).
    assert all(len(set(data.CONNECTORS[k])) == 1 for k in data.CORNER_IDS)


def test_4_2_a_swap_needs_a_card_of_your_own_hand() -> None:
    s = set_player(blank(), 0, hand=("S01a",))
    s = set_player(s, 1, hand=("S02a",))
    s = replace(s, deck=("S07a",))
    with pytest.raises(IllegalMove) as err:
        GAME.decide(s, 0, Rest(discard="S02a"), b"x")
    assert err.value.code == "not_in_hand"
    assert Rest(discard="S01a") in GAME.legal_moves(s, 0)


def test_3_1_the_first_player_is_drawn_from_the_seed() -> None:
    from collections import Counter

    firsts = Counter(
        fold(GAME, GAME.setup(4, None, setup_entropy(seed))).first_player for seed in range(200)
    )
    assert set(firsts) == {0, 1, 2, 3} and min(firsts.values()) >= 30


def test_bad_input_a_bool_or_float_for_a_number_is_a_typed_rejection() -> None:
    # Given (1,0) holds a fresh tile, so Cast(x=1, y=0) is legal
    from engine_core.errors import EngineError

    s = put(blank(), 0, "T05", 1, 0)
    assert Cast(x=1, y=0) in GAME.legal_moves(s, 0)
    # When a caller passes True for x (True == 1 in Python)
    # Then the engine rejects it with a typed error, never an internal one
    for bad in (Cast(x=True, y=0), Cast(x=1.0, y=0)):
        with pytest.raises(EngineError):
            GAME.decide(s, 0, bad, b"x")
    s = replace(set_player(s, 0, held=("T06",)), phase="place_tiles")
    for rotation in (False, 0.0):
        with pytest.raises(EngineError):
            GAME.decide(s, 0, PlaceTile(tile="T06", x=1, y=1, rotation=rotation), b"x")
