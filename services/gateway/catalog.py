"""The public component tables of each game, for browser pages: names, costs,
points and effects of cards, die faces, Temple pools, tiles and their
connectors, regions and their adjacency, units.

Everything here comes from ``engine_core/games/<game>/data.py`` (plus short
effect texts written for players); nothing of any match's state is in it, so
a catalog is the same for every caller and can be cached by anyone.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from engine_core.games.arcane_academy import data as aa
from engine_core.games.assault_of_the_giants import data as ag
from engine_core.games.dice_forge import data as df
from engine_core.games.dwarves_duel import data as dd

# --------------------------------------------------------------- Dwarves
DWARVES_EFFECTS = {
    "ALLY_V1": "Ally: 1 damage for each spent die showing 1.",
    "ALLY_V2": "Ally: 1 damage for each spent die showing 2.",
    "ALLY_V3": "Ally: 1 damage for each spent die showing 3.",
    "ALLY_V4": "Ally: 1 damage for each spent die showing 4.",
    "ALLY_V5": "Ally: 1 damage for each spent die showing 5.",
    "ALLY_DUAL_LOW": "Ally: 1 damage for each spent die showing 2 or 3.",
    "ALLY_DUAL_HIGH": "Ally: 1 damage for each spent die showing 4 or 5.",
    "ALLY_ANY": "Ally: 1 damage for each spent die showing 1 to 5.",
    "ALLY_KING": "Once per turn: turn one unused die (1-5) into a wild axe.",
    "VP_1": "Victory: 1 point while in your display.",
    "VP_2": "Victory: 2 points while in your display.",
    "VP_3": "Victory: 3 points while in your display.",
    "VP_4": "Victory: 4 points while in your display.",
    "VP_5": "Victory: 5 points while in your display.",
    "SUP_DICE": "Support: roll one more die each dice phase.",
    "SUP_DRAW": "Support: you may draw one more card each draw phase.",
    "SUP_REROLL": "Support: re-roll one die once each dice phase.",
    "EV_REMOVE": "Event: discard any card from the opponent's display.",
    "EV_WILDFACE": "Event: turn one of your unused dice (1-5) into a wild axe.",
    "EV_TAKEWILD": "Event: take a Wild Card (from the middle, else from the opponent).",
    "EV_DRAW2": "Event: draw two cards.",
    "EV_RECOVER": "Event: take a card of your discard pile back into your hand.",
    "TOF_EXTRADICE": "Twist of Fate: two more dice at your next dice phase.",
    "TOF_STRIKE": "Twist of Fate: deal 1 damage to a card or the draw pile.",
    "TOF_ARMOR": "Twist of Fate: cancel 1 damage about to be dealt to you.",
}


def dwarves_duel() -> dict[str, Any]:
    return {
        "game": "dwarves_duel",
        "cards": {
            c.id: {
                "name": c.name,
                "side": c.side,
                "slot": c.slot,
                "key": c.key,
                "type": c.type,
                "cost": c.cost,
                "amount": c.amount,
                "hp": c.hp,
                "vp": c.vp,
                "triggers": list(c.triggers),
                "effect": DWARVES_EFFECTS[c.key],
            }
            for c in dd.CARDS.values()
        },
        "dice": list(dd.DICE),
        "faces": list(dd.FACES),
        "wild_face": dd.WILD_FACE,
        "wild_cards": dd.WILD_CARDS,
        "hand_size": dd.HAND_SIZE,
        "deck_size": dd.DECK_SIZE,
    }


# ------------------------------------------------------------ Dice Forge
DICE_FORGE_EFFECTS = {
    "HAMMER": "Gold you gain may go onto the Hammer track: 10 glory at 15, 15 more at 30.",
    "CHEST": "Your reserve holds 4 more gold, 3 more sun and 3 more moon.",
    "HIND": "Reinforcement: roll one of your dice and gain its face.",
    "BEAR": "3 glory each time you oust a hero or are ousted.",
    "SATYRS": "The others roll both dice; gain two of the faces they rolled.",
    "BOAR_RED": "Forge the red Boar face onto another player's die.",
    "BOAR_YELLOW": "Forge the yellow Boar face onto another player's die.",
    "BOAR_GREEN": "Forge the green Boar face onto another player's die.",
    "BOAR_BLUE": "Forge the blue Boar face onto another player's die.",
    "FERRYMAN": "12 glory.",
    "CERBERUS": "A token: once, after a blessing, gain your rolled faces again.",
    "HELMET": "Forge the triple (x3) face now.",
    "CANCER": "Two divine blessings, one after the other.",
    "SENTINEL": "Two divine blessings; each sun or moon shard may become 2 glory.",
    "HYDRA": "26 glory.",
    "TYPHON": "1 glory per face in your forge discard.",
    "SPHINX": "Choose a die: four minor blessings with it.",
    "CYCLOPS": "Choose a die: four minor blessings; each gold may become 1 glory.",
    "GORGON": "14 glory.",
    "TRITON": "A token: once, gain 6 gold, 2 sun or 2 moon.",
    "MIRROR_CARD": "Forge the Mirror face now.",
    "OWL": "Reinforcement: gain 1 gold, 1 sun or 1 moon.",
    "SHIP_CARD": "Forge the Celestial Ship face now.",
    "MINOTAUR": "The others roll both dice and lose what their faces would give.",
    "SHIELD_CARD": "Forge one of the Shield faces now.",
    "ELDER": "Reinforcement: pay 3 gold for 4 glory.",
    "WILD_SPIRITS": "Gain 3 gold and 3 moon.",
}


def _vec(v: df.Vec) -> dict[str, int]:
    return {name: v[i] for i, name in enumerate(df.RESOURCES) if v[i]}


def _face(f: df.Face) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": f.kind}
    if f.kind == df.SIMPLE:
        out["gains"] = _vec(f.gains)
    elif f.kind == df.CHOICE:
        out["options"] = {name: _vec(v) for name, v in f.options}
    elif f.kind == df.SHIELD:
        out["watched"] = df.RESOURCES[f.watched]
        out["fallback"] = _vec(f.fallback)
    elif f.kind == df.BOAR:
        out["colour"] = f.colour
    if f.id in df.COST:
        out["cost"] = df.COST[f.id]
    return out


def dice_forge() -> dict[str, Any]:
    return {
        "game": "dice_forge",
        "resources": list(df.RESOURCES),
        "dice": list(df.DIE_NAMES),
        "faces": {f.id: _face(f) for f in df.FACE_LIST},
        "sanctuary": [{"id": p.id, "cost": p.cost, "faces": list(p.faces)} for p in df.SANCTUARY],
        "gardens": [{"id": p.id, "faces": list(p.faces)} for p in df.GARDENS],
        "cards": {
            c.id: {
                "name": c.name,
                "glory": c.glory,
                "pile": c.pile,
                "effect": DICE_FORGE_EFFECTS[c.id],
            }
            for c in df.CARD_LIST
        },
        "slots": [
            {
                "id": s.id,
                "island": s.island,
                "sun": s.sun,
                "moon": s.moon,
                "base": s.base,
                "alternate": s.alternate,
            }
            for s in df.SLOTS
        ],
        "islands": 7,
        "caps": _vec(df.BASE_CAPS),
        "chest_caps": _vec(df.CHEST_CAPS),
        "rounds": {str(k): v for k, v in df.ROUNDS.items()},
        "hammer_track": df.HAMMER_TRACK,
    }


# -------------------------------------------------------- Arcane Academy
def _parts(parts: tuple[aa.Part, ...]) -> list[list[dict[str, Any]]]:
    return [[{"action": a, "amount": n} for a, n in part] for part in parts]


def arcane_academy() -> dict[str, Any]:
    components = {}
    for cid, text in aa.ACTIONS_TEXT.items():
        components[cid] = {
            "kind": "corner" if cid in aa.CORNER_IDS else "tile",
            "actions": text,
            "parts": _parts(aa.PARTS[cid]),
            "connectors": [aa.mask_text(m) for m in aa.CONNECTORS[cid]],
        }
    cards = {}
    for d, name, cost, pp, effect in aa.SPELLS:
        cards[d] = {"name": name, "kind": "spell", "cost": cost, "pp": pp, "effect": effect}
    for d, name, cost, pp, kind, effect in aa.ITEMS:
        cards[d] = {
            "name": name,
            "kind": "item",
            "cost": cost,
            "pp": pp,
            "use": kind,
            "effect": effect,
        }
    return {
        "game": "arcane_academy",
        "cols": aa.COLS,
        "rows": aa.ROWS,
        "components": components,
        "corner_space": {k: list(aa.XY[v]) for k, v in aa.CORNER_SPACE.items()},
        "cards": cards,
        "will_cap": aa.WILL_CAP,
        "hand_size": aa.HAND_SIZE,
        "market_slots": aa.MARKET_SLOTS,
        "public_slots": aa.PUBLIC_SLOTS,
        "pencils_down_at": aa.PENCILS_DOWN_AT,
    }


# -------------------------------------------------- Assault of the Giants
def assault_of_the_giants() -> dict[str, Any]:
    outpost_of = {region: race for race, region in ag.OUTPOST.items()}
    start_of = {region: race for race, region in ag.START_REGION.items()}
    return {
        "game": "assault_of_the_giants",
        "races": [
            {
                "id": r,
                "ordning": ag.ORDNING[r],
                "leader": ag.LEADER_NAME[r],
                "stack_limit": ag.STACK_LIMIT[r],
                "rune": ag.RUNE_OF_RACE[r],
                "printed": ag.PRINTED[r],
            }
            for r in ag.RACES
        ],
        "regions": [
            {
                "name": name,
                "small_folk": ag.IS_SMALL_FOLK[i],
                "start_of": start_of.get(name, ""),
                "outpost_of": outpost_of.get(name, ""),
                "adjacent": list(ag.ADJ[i]),
            }
            for i, name in enumerate(ag.REGIONS)
        ],
        "edges": [list(e) for e in ag.EDGES],
        "units": [
            {
                "id": uid,
                "race": u.race,
                "kind": u.kind,
                "ov": u.ov,
                "fort": list(u.fort),
                "dice": list(u.dice),
            }
            for uid, u in zip(ag.UNIT_IDS, ag.UNITS, strict=True)
        ],
        "commands": list(ag.COMMANDS),
        "resources": dict(ag.RESOURCE_KIND),
        "resource_kinds": list(ag.RESOURCE_KINDS),
        "spells": dict(ag.SPELL_KIND),
        "spell_kinds": list(ag.SPELL_KINDS),
        "events": {e: {"name": ag.EVENT_NAME[e], "op": ag.EVENT_OP[e]} for e in ag.EVENT_NAME},
        "die_faces": {
            k: [{"hits": h, "blocks": b, "arcane": a} for h, b, a in faces]
            for k, faces in ag.DIE_FACES.items()
        },
        "pool_cap": ag.POOL_CAP,
        "hand_limit": ag.HAND_LIMIT,
    }


BUILDERS: dict[str, Callable[[], dict[str, Any]]] = {
    "tic_tac_toe": lambda: {"game": "tic_tac_toe"},
    "dwarves_duel": dwarves_duel,
    "dice_forge": dice_forge,
    "arcane_academy": arcane_academy,
    "assault_of_the_giants": assault_of_the_giants,
}


@cache
def catalog(game: str) -> dict[str, Any] | None:
    """The catalog of ``game`` (tic-tac-toe has no components: ``{"game": ...}``),
    ``None`` for an id that names no game with a catalog."""
    build = BUILDERS.get(game)
    return build() if build else None
