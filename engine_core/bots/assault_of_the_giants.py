"""A greedy Assault of the Giants bot: claim events, build up, march on the
nearest enemy (NPC giants first) and attack with everything adjacent.

It looks one decision ahead with simple scores; it never looks at hidden
information other than its own hand (it only uses ``legal_moves`` and the state
fields its seat may see)."""

from __future__ import annotations

from typing import Any

from msgspec.structs import replace

from engine_core.games.assault_of_the_giants import data as D
from engine_core.games.assault_of_the_giants import moves as M
from engine_core.games.assault_of_the_giants import rules as R
from engine_core.games.assault_of_the_giants.state import State
from engine_core.rng import Rng
from engine_core.types import Seat


def _target_distance(s: State, race: int, rr: list[int] | None = None) -> list[int]:
    """Steps from each region to the nearest region this race may attack."""
    if rr is None:
        rr, _ = R.board(s)
    inf = 99
    dist = [inf] * 22
    frontier = [g for g in range(22) if rr[g] not in (-1, race) and not R.forbidden(s, race, g)]
    for g in frontier:
        dist[g] = 0
    while frontier:
        nxt = []
        for g in frontier:
            for n in D.ADJ[g]:
                if dist[n] == inf:
                    dist[n] = dist[g] + 1
                    nxt.append(n)
        frontier = nxt
    return dist


def _side_dice(s: State, units: list[int] | tuple[int, ...]) -> int:
    return sum(R.unit_dice(s, u) for u in units)


def _attack_value(s: State, seat: Seat, g: int) -> float:
    race = R.race_of(s, seat)
    adj = D.ADJ_SET[g]
    mine = [u for u in R.on_board(s, race) if s.unit_loc[u] in adj and u not in s.used_units]
    theirs = R.giants_at(s, g)
    my_dice = min(_side_dice(s, mine), D.POOL_CAP)
    their_dice = min(_side_dice(s, theirs), D.POOL_CAP)
    their_fort = sum(R.unit_fort(s, u) for u in theirs)
    npc = s.npc[D.UNIT_RACE[theirs[0]]] if theirs else False
    return my_dice * 0.75 - their_dice * (0.3 if npc else 0.6) - their_fort * 0.15


class AssaultGreedy:
    name = "greedy"
    standing_scale = 4.0  # a lead of this much in standing is a clear one

    def standing(self, state: State) -> tuple[float, ...]:
        """Each seat's Ordning Points now, with the board's OV as a tie-break."""
        return tuple(state.op[p] + 0.01 * R.board_ov(state, p) for p in range(state.players))

    def choose(self, game: Any, state: State, seat: Seat, rng: Rng) -> Any:
        moves = game.legal_moves(state, seat)
        self._memo_of: State | None = state  # board and distances, once per decision
        self._memo: dict[Any, Any] = {}
        best = None
        best_score = float("-inf")
        for m in moves:
            sc = self.score(state, seat, m)
            if sc > best_score:
                best, best_score = m, sc
        return best if best is not None else moves[0]

    def _board(self, s: State) -> list[int]:
        if getattr(self, "_memo_of", None) is not s:
            self._memo_of, self._memo = s, {}
        rr = self._memo.get("board")
        if rr is None:
            rr = self._memo["board"] = R.board(s)[0]
        return rr

    def _dist(self, s: State, race: int) -> list[int]:
        rr = self._board(s)
        d = self._memo.get(("dist", race))
        if d is None:
            d = self._memo[("dist", race)] = _target_distance(s, race, rr)
        return d

    # ---------------------------------------------------------------- scores
    def score(self, s: State, seat: Seat, m: Any) -> float:
        race = R.race_of(s, seat)
        match m:
            case M.ClaimEvent(event=ev, payment=pay):
                return 100 + D.EVENT_OP[ev] + (1 if pay == "free" else 0)
            case M.PlayCommand(command=cmd):
                return self.command_score(s, seat, cmd)
            case M.Maneuver(unit=u, to=to):
                rr = self._board(s)
                if s.transit < 0 and rr[to] not in (-1, race):
                    return -5  # avoid tolls
                dist = self._dist(s, race)
                gain = dist[s.unit_loc[u]] - dist[to]
                if dist[s.unit_loc[u]] <= 1:
                    return -3  # already in reach: stay and fight
                return gain * 2 - (0.5 if s.transit >= 0 else 0)
            case M.MoveLyn():
                return -1
            case M.EndMove() | M.EndRecruit() | M.EndPlunder() | M.EndHeal():
                return 0
            case M.PayToll(card=card):
                return 1 if card == "food" else (-1 if card == "wound" else 0)
            case M.DeclareBattle(target=g):
                return 10 + _attack_value(s, seat, g)  # fight: the best target in reach
            case M.EndAttack():
                return 0
            case M.AddAttacker():
                return 5
            case M.StartBattle():
                return 1
            case M.Reroll(dice=dice):
                b = s.battle
                assert b is not None
                sd = b.att if b.step == "attacker_roll" else b.dfn
                bad = 0
                for i in dice:
                    h, bl, a = D.DIE_FACES[sd.dice[i]][sd.faces[i] - 1]
                    bad += 1 if h + bl + a == 0 else -3
                return bad
            case M.ConvertArcane(into=into, dice=d):
                return len(d) * (3 if into == "hits" else 2)
            case M.CastSpell(spell=sp, dice=d):
                kind = D.SPELL_KIND[sp]
                return (
                    {
                        "lightning_bolt": 4,
                        "stoneskin": 3,
                        "arcane_surge": len(d),
                        "fortune": -len(d),
                    }[kind]
                    if kind != "mend"
                    else -1
                )
            case M.PlayArmament(effect=e):
                return 1 if e == "hit" else 0.5
            case M.FinalizeRoll():
                return 0
            case M.AssignCasualty(unit=u):
                b = s.battle
                assert b is not None
                f = R.unit_fort(s, u)
                dies = s.unit_wounded[u] or f <= b.damage
                ov = D.UNITS[u].ov
                return (-ov * 2 if dies else -ov * 0.5) + min(f, b.damage)
            case M.CastMend():
                return 2
            case M.PassMend():
                return 0
            case M.Advance():
                return 2  # advance into the cleared region: the front moves on
            case M.EndAdvance():
                return 0
            case M.Recruit(kind=kind, remove=r):
                u = R.supply_unit(s, race, kind)
                assert u is not None
                return (D.UNITS[u].dice[0] * 3 + D.UNITS[u].ov * 0.5) - (10 if r >= 0 else 0)
            case M.StartTrade():
                return -1
            case M.EndTrade():
                return 0
            case M.RespondOffer(accept=acc):
                t = s.trade
                good = len(t.give) >= len(t.request)
                return 1 if acc == good else 0
            case M.ReturnCard(card=k):
                return 1 if k == "food" else 0
            case M.GiveCard() | M.RequestCard() | M.ConfirmTrade():
                return 0
            case M.LeaderAbility(lyn_to=g):
                return 2 if g < 0 else 1
            case M.LeaderReturn(remove=r):
                return 3 if r < 0 else 1
            case M.LeaderPass():
                return 0
            case M.DiscardSpell(spell=sp):
                return {"lightning_bolt": 0, "stoneskin": 1, "arcane_surge": 2, "fortune": 3,
                        "mend": 2}[D.SPELL_KIND[sp]]  # fmt: skip
            case M.Plunder():
                return 1
            case M.HealUnit(unit=u, food=f):
                return D.UNITS[u].ov * 0.3 - (0.5 if f else 0)
            case M.GsRecruit(region=g):
                rr = self._board(s)
                return 2 if rr[g] not in (-1, race) else -2
            case M.GsMove(slayer=u, to=g):
                rr = self._board(s)
                return 1 if rr[g] not in (-1, race) and s.transit < 0 else -1
            case M.GsAttack(slayers=sl):
                return 3 + len(sl)
            case M.EndRest():
                return 0
        return 0

    def command_score(self, s: State, seat: Seat, cmd: str) -> float:
        race = R.race_of(s, seat)
        row = s.rows[seat]
        if cmd == "attack":
            # Attack whenever a target is in reach: battles are what score OP and
            # empty the pools (weighing defenders heavily, the bot used to wait
            # for a sure win and the games ran to the round limit).
            vals = [_attack_value(s, seat, g) for g in R.attack_targets(s, seat)]
            return 30 + max(vals) if vals else -5
        if cmd == "recruit":
            g = R.recruit_region(s, race)
            removes = R.placement_removes(s, race, g)
            if removes != [-1]:
                return -4
            rp = R.command_strength(s, seat, cmd)
            cheap = min(
                (D.UNITS[u].ov for u in D.RACE_UNITS[race] if s.unit_loc[u] == D.SUPPLY),
                default=99,
            )
            return 6 + len(row) if cheap <= rp else -4
        if cmd == "move":
            dist = self._dist(s, race)
            far = sum(1 for u in R.on_board(s, race) if dist[s.unit_loc[u]] > 1)
            return 8 + far * 0.5 if far else -2  # march to the front
        if cmd == "heal":
            w = sum(1 for u in R.on_board(s, race) if s.unit_wounded[u])
            return 2 * w - 1
        if cmd == "plunder":
            return 1 + len(R.plunder_options(replace(s, budget=1), seat))
        if cmd == "rest":
            # Rest right after an Attack: the row is taken back and the next
            # Attack comes sooner.
            return 20 if "attack" in row and len(row) >= 2 else -3 + len(row)
        if cmd == "leader":
            return 1.5
        if cmd == "magic":
            return 0.5
        return -1  # trade
