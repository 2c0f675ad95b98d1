"""Every Assignment effect and USE ability (§2.5), each through a real cast."""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from engine_core.errors import EngineError
from engine_core.games.arcane_academy import GAME
from engine_core.games.arcane_academy.data import CARD_IDS, PARTS, TILE_IDS
from engine_core.games.arcane_academy.events import EffectPending, ItemUsed
from engine_core.games.arcane_academy.moves import (
    Cast,
    CollectShards,
    CompleteAssignment,
    DeclineEffect,
    GainWill,
    RemoveToken,
    Rest,
    SkipPart,
    TakeTile,
    UseItem,
)
from engine_core.games.arcane_academy.rules import prestige
from engine_core.games.arcane_academy.view import secrets, view
from tests.games.arcane_academy.helpers import blank, exhaust, kinds, play, put, set_player, space


def casting_t33(will=9, shards=9, **player) -> object:
    """Seat 0 with T33 (Complete Assignment) on (1,1) linked to T01 on (2,1)."""
    s = set_player(blank(), 0, will=will, shards=shards, **player)
    s = put(put(s, 0, "T33", 1, 1), 0, "T01", 2, 1)
    return replace(s, market=("T05", "T06", None, None), bag=("T07",))


def complete(s, card: str):
    s = set_player(s, 0, hand=(card,))
    return play(s, 0, Cast(x=1, y=1), CompleteAssignment(card=card, part=0))


def test_tables_match_the_component_counts() -> None:
    assert len(TILE_IDS) == 48 and len(set(TILE_IDS)) == 48
    assert len(CARD_IDS) == 60 and len(set(CARD_IDS)) == 60
    assert PARTS["T22"] == ((("will", 2),), (("shard", 2),))
    assert PARTS["T19"] == ((("will", 1), ("shard", 1)),)
    assert len(PARTS["T46"][0]) == 5


@pytest.mark.parametrize(("card", "shards"), [("S01a", 1), ("S04a", 2), ("S08a", 3)])
def test_spells_that_collect_shards(card: str, shards: int) -> None:
    s, _ = complete(casting_t33(shards=0), card)
    assert s.players[0].shards == shards


@pytest.mark.parametrize("card", ["S02a", "S07a", "S11a", "S13a", "S14a", "S15a"])
def test_spells_without_effect(card: str) -> None:
    s, _ev = complete(casting_t33(), card)
    assert s.players[0].spells == (card,) and s.effect is None
    assert s.phase == "choose_linked"


def test_s03_mending_charm_removes_up_to_two_tokens() -> None:
    s = exhaust(exhaust(casting_t33(), 0, 3, 0), 0, 0, 0)
    s, _ev = complete(s, "S03a")
    assert s.effect is not None and s.effect.remaining == 2 and s.effect.optional
    s, _ = play(s, 0, RemoveToken(x=3, y=0))
    assert s.effect is not None and s.effect.remaining == 1
    s, _ = play(s, 0, DeclineEffect())  # "up to": may stop after one
    assert s.effect is None and space(s, 0, 0, 0).exhausted and not space(s, 0, 3, 0).exhausted
    s2, _ = complete(exhaust(exhaust(casting_t33(), 0, 3, 0), 0, 0, 0), "S03a")
    s2, _ = play(s2, 0, RemoveToken(x=3, y=0), RemoveToken(x=1, y=1))
    assert s2.effect is None and not space(s2, 0, 1, 1).exhausted


def test_s05_summon_scaffold_adds_a_tile_or_declines() -> None:
    s, _ = complete(casting_t33(), "S05a")
    assert s.effect is not None and s.effect.kind == "add_tile"
    assert set(GAME.legal_moves(s, 0)) == {TakeTile(slot=0), TakeTile(slot=1), DeclineEffect()}
    s1, _ = play(s, 0, TakeTile(slot=1))
    assert s1.players[0].held == ("T06",) and s1.effect is None
    s2, _ = play(s, 0, DeclineEffect())
    assert s2.players[0].held == ()


def test_s06_second_wind_removes_every_token() -> None:
    s = exhaust(exhaust(casting_t33(), 0, 3, 0), 0, 0, 0)
    s, _ = complete(s, "S06a")
    assert not any(sp.exhausted for sp in s.players[0].slate)


def test_s09_arcane_echo_uses_an_item_even_one_needing_a_choice() -> None:
    s = set_player(casting_t33(will=5), 0, items=("I07a",), tokens=(0,))
    s, _ = complete(s, "S09a")
    assert s.effect is not None and s.effect.kind == "use_item"
    s, ev = play(s, 0, UseItem(item="I07a"))
    assert ItemUsed(seat=0, item="I07a") in ev
    assert s.effect is not None and s.effect.kind == "add_tile" and s.effect.source == "I07a"
    s, _ = play(s, 0, TakeTile(slot=0))
    assert s.players[0].held == ("T05",)


def test_s09_without_a_usable_item_has_no_effect() -> None:
    s, ev = complete(casting_t33(), "S09a")
    assert s.effect is None and not any(isinstance(e, EffectPending) for e in ev)


def test_s10_time_dilation_grants_an_extra_turn() -> None:
    s, _ev = complete(casting_t33(), "S10a")
    assert s.extra_owed == 1


def test_s12_scholars_boon_adds_a_tile_then_a_shard() -> None:
    s, _ = complete(casting_t33(shards=0), "S12a")
    s1, ev = play(s, 0, TakeTile(slot=0))
    assert s1.players[0].shards == 1 and s1.players[0].held == ("T05",)
    assert kinds(ev)[:3] == ["TileTaken", "ShardsCollected", "EffectEnded"]
    s2, _ = play(s, 0, DeclineEffect())
    assert s2.players[0].shards == 1 and s2.players[0].held == ()
    # With an empty market the Shard comes at once.
    s3, _ = complete(replace(casting_t33(shards=0), market=(None,) * 4), "S12a")
    assert s3.effect is None and s3.players[0].shards == 1


def _using(item: str, **player):
    s = set_player(blank(), 0, items=(item,), tokens=(0,), **player)
    s = put(s, 0, "T41", 1, 1)
    s = put(s, 0, "T01", 2, 1)
    return play(replace(s, market=("T05", None, None, None)), 0, Cast(x=1, y=1))[0]


def test_i01_i02_resource_items() -> None:
    s, _ = play(_using("I01a", will=3), 0, UseItem(item="I01a", part=0))
    assert s.players[0].will == 4
    s, _ = play(_using("I02a", shards=3), 0, UseItem(item="I02a", part=0))
    assert s.players[0].shards == 4


def test_i05_i06_payments_must_be_made_in_full() -> None:
    s, _ = play(_using("I05a", will=3, shards=2), 0, UseItem(item="I05a", part=0))
    assert (s.players[0].will, s.players[0].shards) == (6, 0)
    s = _using("I05a", will=3, shards=1)
    assert UseItem(item="I05a", part=0) not in GAME.legal_moves(s, 0)
    with pytest.raises(EngineError):
        GAME.decide(s, 0, UseItem(item="I05a", part=0), b"x")
    s, _ = play(_using("I06a", will=2, shards=0), 0, UseItem(item="I06a", part=0))
    assert (s.players[0].will, s.players[0].shards) == (0, 3)
    assert UseItem(item="I06a", part=0) not in GAME.legal_moves(_using("I06a", will=1), 0)


def test_i07_sturdy_satchel_adds_a_tile() -> None:
    s, _ = play(_using("I07a"), 0, UseItem(item="I07a", part=0), TakeTile(slot=0))
    assert s.players[0].held == ("T05",)


@pytest.mark.parametrize("item", ["I08a", "I09a", "I10a", "I11a", "I12a", "I13a", "I14a", "I15a"])
def test_items_without_use_cannot_be_used(item: str) -> None:
    s = _using(item)
    assert not any(isinstance(m, UseItem) for m in GAME.legal_moves(s, 0))
    assert SkipPart(part=0) in GAME.legal_moves(s, 0)


def test_i12_collectors_cabinet_counts_other_items_each_copy() -> None:
    s = set_player(blank(), 0, items=("I12a", "I12b", "I14a"), tokens=(0, 0, 0))
    assert prestige(s.players[0]) == 1 + 2 + 1 + 2 + 4


def test_focusing_wand_copies_stack_and_cost_never_goes_below_zero() -> None:
    s = set_player(casting_t33(will=0), 0, items=("I08a", "I08b"), tokens=(0, 0))
    s, _ = complete(s, "S01a")  # costs 2 - 2 = 0
    assert s.players[0].spells == ("S01a",) and s.players[0].will == 0


def test_a_slash_part_offers_either_option_once() -> None:
    s, _ = play(put(blank(), 0, "T41", 2, 0), 0, Cast(x=3, y=0))
    moves = GAME.legal_moves(s, 0)
    assert GainWill(part=0) in moves and CollectShards(part=0) in moves


def test_hidden_information_in_views_and_secrets() -> None:
    s, _ = play(set_player(blank(), 0, hand=("S01a", "S02a")), 0, Rest())
    sec = secrets(s)
    assert set(sec[0]) >= {"S01a", "S02a"} and set(sec[None]) == set(s.bag + s.deck)
    for viewer in (1, None):
        v = view(s, viewer)
        assert v.players[0].hand is None and v.players[0].hand_count == 2
        assert v.bag_count == len(s.bag) and v.deck_count == len(s.deck)
    assert view(s, 0).players[0].hand == ("S01a", "S02a")
