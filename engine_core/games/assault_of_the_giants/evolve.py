"""``evolve``: apply one event to the state. Records facts only."""

from __future__ import annotations

from typing import assert_never

from msgspec.structs import replace

from engine_core.games.assault_of_the_giants import data as D
from engine_core.games.assault_of_the_giants.events import (
    ArcaneConverted,
    AssaultEvent,
    AttackerJoined,
    BattleDeclared,
    BattleEnded,
    BattleStep,
    BonusAdded,
    CardsGiven,
    CasualtyTaken,
    CommandPlayed,
    DeckShuffled,
    DiceRerolled,
    DiceRolled,
    DraftRevealed,
    EventClaimed,
    GameEnded,
    GameStarted,
    LynMoved,
    OfferAnswered,
    OpAwarded,
    PhaseEntered,
    PileCardTaken,
    RegionPlundered,
    ResourcesDiscarded,
    ResourcesDrawn,
    RestStage,
    RollFinalized,
    RowReturned,
    SpellCast,
    SpellsDiscarded,
    SpellsDrawn,
    StageBegan,
    TollDue,
    TollPaid,
    TradeChanged,
    TradeCompleted,
    TradeOffered,
    TurnBegan,
    TurnEnded,
    UnitHealed,
    UnitMoved,
    UnitPlaced,
    UnitRemoved,
    UnitWounded,
)
from engine_core.games.assault_of_the_giants.state import Battle, Side, State, Trade
from engine_core.types import Outcome


def _set(t: tuple, i: int, v) -> tuple:
    return (*t[:i], v, *t[i + 1 :])


def _without(t: tuple[str, ...], cards: tuple[str, ...]) -> tuple[str, ...]:
    drop = set(cards)
    return tuple(c for c in t if c not in drop)


def _move_cards(s: State, frm: int, to: int, cards: tuple[str, ...]) -> State:
    res = s.resources
    res = _set(res, frm, _without(res[frm], cards))
    res = _set(res, to, res[to] + cards)
    return replace(s, resources=res)


def _side(b: Battle, side: str) -> Side:
    return b.att if side == "attacker" else b.dfn


def _with_side(b: Battle, side: str, sd: Side) -> Battle:
    return replace(b, att=sd) if side == "attacker" else replace(b, dfn=sd)


def _add_at(t: tuple[int, ...], positions: tuple[int, ...]) -> tuple[int, ...]:
    out = list(t)
    for p in positions:
        out[p] += 1
    return tuple(out)


def _zero_at(t: tuple[int, ...], positions: tuple[int, ...]) -> tuple[int, ...]:
    out = list(t)
    for p in positions:
        out[p] = 0
    return tuple(out)


def evolve(state: State | None, event: AssaultEvent) -> State:
    if type(event) is GameStarted:  # not isinstance: a miss on a Struct class is slow
        return _start(event)
    s = state
    assert s is not None
    match event:  # the most frequent events first: a match tries its cases in order
        case UnitMoved(unit=u, to_region=g, cost=cost, transit=tr):
            return replace(
                s, unit_loc=_set(s.unit_loc, u, g), budget=s.budget - cost,
                transit=u if tr else -1,
            )  # fmt: skip
        case TurnEnded():
            return replace(s, phase="between", command="", battle=None, trade=Trade())
        case TurnBegan(seat=seat, round=rnd):
            return replace(
                s, active=seat, round=rnd, phase="turn", command="", budget=0, used_units=(),
                used_regions=(), transit=-1, toll_unit=-1, toll_region=-1, gs_stage=0,
                trade=Trade(), battle=None,
            )  # fmt: skip
        case CommandPlayed(seat=seat, command=cmd, strength=n, phase=phase):
            return replace(
                s, rows=_set(s.rows, seat, (*s.rows[seat], cmd)), command=cmd, budget=n,
                phase=phase,
            )  # fmt: skip
        case DeckShuffled(deck=deck, cards=cards, from_discard=fd):
            if deck == "resource":
                return replace(s, res_deck=cards, res_discard=() if fd else s.res_discard)
            if deck == "spell":
                return replace(s, spell_deck=cards, spell_discard=() if fd else s.spell_discard)
            return replace(s, uni_deck=cards)
        case UnitPlaced(unit=u, region=g, wounded=w, cost=cost):
            return replace(
                s,
                unit_loc=_set(s.unit_loc, u, g),
                unit_wounded=_set(s.unit_wounded, u, w),
                budget=s.budget - cost,
            )
        case ResourcesDrawn(seat=seat, cards=cards):
            return replace(
                s,
                res_deck=s.res_deck[len(cards) :],
                resources=_set(s.resources, seat, s.resources[seat] + cards),
            )
        case SpellsDrawn(seat=seat, count=n):
            drawn = s.spell_deck[:n]
            return replace(
                s, spell_deck=s.spell_deck[n:], spells=_set(s.spells, seat, s.spells[seat] + drawn)
            )
        case DraftRevealed(card=card):
            return replace(s, uni_deck=s.uni_deck[1:], draft=(*s.draft, card))
        case EventClaimed(seat=seat, event=ev, paid=paid):
            race = s.seat_race[seat]
            special = s.special_done
            draft = s.draft
            if ev.startswith("U"):
                draft = tuple(c for c in draft if c != ev)
            else:
                special = _set(special, race, special[race] + 1)
            return replace(
                s,
                resources=_set(s.resources, seat, _without(s.resources[seat], paid)),
                res_discard=s.res_discard + paid,
                special_done=special,
                draft=draft,
                claimed=_set(s.claimed, seat, (*s.claimed[seat], ev)),
                phase="command",
            )
        case OpAwarded(seat=seat, amount=amount, from_a=fa, from_b=fb):
            return replace(
                s, op=_set(s.op, seat, s.op[seat] + amount), pool_a=s.pool_a - fa,
                pool_b=s.pool_b - fb,
            )  # fmt: skip
        case StageBegan(stage=stage, final_round=fr):
            if stage == "final_ordning":
                return replace(s, final_ordning=True)
            return replace(s, endgame=True, final_round=fr)
        case PhaseEntered(phase=phase):
            return replace(s, phase=phase)
        case LynMoved(to_region=g, cost=cost):
            return replace(s, lyn=g, budget=s.budget - cost)
        case TollDue(unit=u, region=g):
            return replace(s, toll_unit=u, toll_region=g, phase="toll")
        case TollPaid(seat=seat, region=g, card=card, to_seat=to, transit=tr):
            s2 = replace(
                s, toll_unit=-1, toll_region=-1, phase="move", transit=tr,
                used_regions=(*s.used_regions, g),
            )  # fmt: skip
            if not card:
                return s2
            if to < 0:
                res = _set(s2.resources, seat, _without(s2.resources[seat], (card,)))
                return replace(s2, resources=res, res_discard=(*s2.res_discard, card))
            return _move_cards(s2, seat, to, (card,))
        case UnitWounded(unit=u):
            return replace(s, unit_wounded=_set(s.unit_wounded, u, True))
        case UnitHealed(unit=u, cost=cost):
            return replace(s, unit_wounded=_set(s.unit_wounded, u, False), budget=s.budget - cost)
        case UnitRemoved(unit=u, to=to):
            return replace(
                s, unit_loc=_set(s.unit_loc, u, to), unit_wounded=_set(s.unit_wounded, u, False)
            )
        case ResourcesDiscarded(seat=seat, cards=cards):
            return replace(
                s,
                resources=_set(s.resources, seat, _without(s.resources[seat], cards)),
                res_discard=s.res_discard + cards,
            )
        case PileCardTaken(seat=seat, card=card):
            return replace(
                s,
                res_discard=tuple(c for c in s.res_discard if c != card),
                resources=_set(s.resources, seat, (*s.resources[seat], card)),
            )
        case CardsGiven(from_seat=frm, to_seat=to, cards=cards):
            return _move_cards(s, frm, to, cards)
        case TradeChanged(trade=trade):
            return replace(s, trade=trade)
        case TradeOffered(give=give, request=request):
            return replace(
                s, trade=replace(s.trade, mode="offer_answer", give=give, request=request)
            )
        case OfferAnswered(accepted=acc):
            return replace(s, trade=Trade(offer_used=True) if not acc else s.trade)
        case TradeCompleted():
            return replace(s, trade=Trade(offer_used=s.trade.offer_used))
        case SpellsDiscarded(seat=seat, cards=cards):
            return replace(
                s,
                spells=_set(s.spells, seat, _without(s.spells[seat], cards)),
                spell_discard=s.spell_discard + cards,
            )
        case SpellCast(seat=seat, card=card):
            return replace(
                s,
                spells=_set(s.spells, seat, _without(s.spells[seat], (card,))),
                spell_discard=(*s.spell_discard, card),
            )
        case BattleDeclared(
            seat=seat, target=g, kind=kind, defender_race=dr, defender=d, controller=c,
            defenders=dfn,
        ):  # fmt: skip
            b = Battle(
                target=g, kind=kind, attacker=seat, defender_race=dr, defender=d, controller=c,
                step="muster", defenders=dfn,
            )  # fmt: skip
            return replace(s, battle=b, phase="battle", used_regions=(*s.used_regions, g))
        case AttackerJoined(unit=u, cost=cost):
            b = s.battle
            assert b is not None
            return replace(
                s,
                battle=replace(b, attackers=(*b.attackers, u)),
                used_units=(*s.used_units, u),
                budget=s.budget - cost,
            )
        case DiceRolled(side=side, dice=dice, faces=faces, step=step):
            b = s.battle
            assert b is not None
            z = (0,) * len(dice)
            sd = Side(dice=dice, faces=faces, to_block=z, to_hits=z, to_hit=z)
            return replace(s, battle=replace(_with_side(b, side, sd), step=step))
        case DiceRerolled(side=side, positions=pos, faces=faces, source=src):
            b = s.battle
            assert b is not None
            sd = _side(b, side)
            nf = list(sd.faces)
            for p, f in zip(pos, faces, strict=True):
                nf[p] = f
            sd = replace(
                sd, faces=tuple(nf), to_block=_zero_at(sd.to_block, pos),
                to_hits=_zero_at(sd.to_hits, pos), to_hit=_zero_at(sd.to_hit, pos),
                used=(*sd.used, src),
            )  # fmt: skip
            return replace(s, battle=_with_side(b, side, sd))
        case ArcaneConverted(side=side, positions=pos, into=into, source=src):
            b = s.battle
            assert b is not None
            sd = _side(b, side)
            if into == "block":
                sd = replace(sd, to_block=_add_at(sd.to_block, pos))
            elif into == "hits":
                sd = replace(sd, to_hits=_add_at(sd.to_hits, pos))
            else:
                sd = replace(sd, to_hit=_add_at(sd.to_hit, pos))
            sd = replace(sd, used=(*sd.used, src))
            return replace(s, battle=_with_side(b, side, sd))
        case BonusAdded(side=side, hits=h, blocks=bl, source=src):
            b = s.battle
            assert b is not None
            sd = _side(b, side)
            sd = replace(
                sd, bonus_hits=sd.bonus_hits + h, bonus_blocks=sd.bonus_blocks + bl,
                used=(*sd.used, src),
            )  # fmt: skip
            return replace(s, battle=_with_side(b, side, sd))
        case RollFinalized(side=side, hits=h, blocks=bl):
            b = s.battle
            assert b is not None
            sd = replace(_side(b, side), hits=h, blocks=bl)
            return replace(s, battle=_with_side(b, side, sd))
        case BattleStep(step=step, damage=dmg):
            b = s.battle
            assert b is not None
            return replace(s, battle=replace(b, step=step, damage=dmg))
        case CasualtyTaken(unit=u, absorbed=a, defeated=dead, to=to):
            b = s.battle
            assert b is not None
            b = replace(b, damage=b.damage - a)
            if dead:
                return replace(
                    s, battle=replace(b, defeated=(*b.defeated, u)), unit_loc=_set(s.unit_loc, u, to),
                    unit_wounded=_set(s.unit_wounded, u, False),
                )  # fmt: skip
            return replace(s, battle=b, unit_wounded=_set(s.unit_wounded, u, True))
        case BattleEnded(cost=cost):
            return replace(s, battle=None, budget=s.budget - cost, phase=s.command)
        case RegionPlundered(region=g):
            return replace(s, used_regions=(*s.used_regions, g), budget=s.budget - 1)
        case RestStage(stage=stage):
            return replace(s, gs_stage=stage)
        case RowReturned(seat=seat):
            return replace(s, rows=_set(s.rows, seat, ()))
        case GameEnded(ranks=ranks, scores=scores, reason=reason):
            return replace(
                s, phase="over", outcome=Outcome(ranks=ranks, scores=scores, reason=reason)
            )
        case GameStarted():
            raise AssertionError("unreachable")
        case _:
            assert_never(event)


def _start(e: GameStarted) -> State:
    n = e.players
    seat_race = tuple(D.RACE_INDEX[r] for r in e.seat_races)
    race_seat = tuple(seat_race.index(r) if r in seat_race else -1 for r in range(6))
    npc = tuple(D.RACES[r] in e.npc_races for r in range(6))
    loc = tuple(D.OUT if u.kind in ("hekaton", "vonindod") else D.SUPPLY for u in D.UNITS)
    return State(
        players=n,
        seat_race=seat_race,
        race_seat=race_seat,
        npc=npc,
        start_seat=e.start_seat,
        active=e.start_seat,
        phase="setup",
        unit_loc=loc,
        unit_wounded=(False,) * D.N_UNITS,
        lyn=D.REGION_INDEX["Evermoors"],
        rows=((),) * n,
        resources=((),) * n,
        spells=((),) * n,
        claimed=((),) * n,
        op=(0,) * n,
        pool_a=e.pool_a,
        pool_b=e.pool_b,
    )
