"""The public catalogs: every game has one, built from its data tables, plain
JSON, and the same whatever matches exist (no state in it)."""

from __future__ import annotations

import json

from engine_core.games.arcane_academy import data as aa
from engine_core.games.assault_of_the_giants import data as ag
from engine_core.games.dice_forge import data as df
from engine_core.games.dwarves_duel import data as dd
from engine_core.registry import default_registry
from services.gateway.catalog import catalog


def test_every_game_has_a_json_catalog_and_unknown_ids_have_none() -> None:
    for game in default_registry():
        c = catalog(game.name)
        assert c is not None and c["game"] == game.name
        assert json.loads(json.dumps(c)) == c
    assert catalog("chess") is None


def test_the_catalogs_carry_the_tables_of_the_data_modules() -> None:
    dwarves = catalog("dwarves_duel")["cards"]
    assert set(dwarves) == set(dd.CARDS)
    assert dwarves["G09"]["name"] == "Dwarf King" and dwarves["E17"]["vp"] == 5
    assert all(card["effect"] for card in dwarves.values())
    forge = catalog("dice_forge")
    assert set(forge["faces"]) == set(df.FACES)
    assert forge["faces"]["G3|V2"]["options"] == {"gold": {"gold": 3}, "glory": {"glory": 2}}
    assert [p["cost"] for p in forge["sanctuary"]] == [p.cost for p in df.SANCTUARY]
    assert [s["id"] for s in forge["slots"]] == [s.id for s in df.SLOTS]
    assert set(forge["cards"]) == set(df.CARDS) and forge["caps"] == {
        "gold": 12,
        "sun": 6,
        "moon": 6,
    }
    academy = catalog("arcane_academy")
    assert set(academy["components"]) == set(aa.ACTIONS_TEXT)
    assert academy["components"]["T09"]["connectors"] == ["N,E", "E,S", "S,W", "N,W"]
    assert academy["cards"]["S15"] == {
        "name": "Cataclysm", "kind": "spell", "cost": 9, "pp": 7, "effect": "None."
    }  # fmt: skip
    giants = catalog("assault_of_the_giants")
    assert [r["name"] for r in giants["regions"]] == list(ag.REGIONS)
    assert [u["id"] for u in giants["units"]] == list(ag.UNIT_IDS)
    assert giants["regions"][ag.REGION_INDEX["Waterdeep"]]["small_folk"]
    for a, b in giants["edges"]:
        assert b in giants["regions"][a]["adjacent"] and a in giants["regions"][b]["adjacent"]
