"""A search bot for every game: Information Set Monte Carlo Tree Search.

Single-observer ISMCTS (Cowling, Powley and Whitehouse, "Information Set Monte
Carlo Tree Search", IEEE TCIAIG 2012), over nothing but the engine contract:

* **It decides on a view.** ``choose_view(game, view, seat, rng)`` is given
  what the seat may see and nothing more; ``choose(game, state, seat, rng)``
  (the ``Bot`` interface) turns the state into that seat's view first, so the
  search never reads hidden information even when handed the full state.
* **A new determinisation per iteration**: ``game.sample_state(view, seat,
  rng)`` deals the hidden information at random, consistently with the view,
  and the iteration plays on that state.
* **Nodes are information sets**, keyed by the seat to move and that seat's
  view of the determinised state (as OpenSpiel's ``ISMCTSBot`` keys them by
  the player and their information state). Moves are selected with UCB1 over
  the moves legal in this determinisation, counting for each move how often
  it was *available* rather than how often its parent was visited (the
  subset-armed bandit of the paper), because the other seats' legal moves
  change with the determinisation.
* **Chance is the engine's**: every simulated move is decided with fresh
  entropy drawn from the bot's ``rng``, so dice and draws are resolved inside
  ``decide`` exactly as in a match.
* **Per-seat rewards** from the ``Outcome``: a seat scores the share of the
  other seats it finished ahead of (ties count half), so 1 for a win and 0 for
  a loss with two players, and a rank-based value in [0, 1] with more; each
  node is updated with the reward of the seat that moved there.
* **Rollouts** use a cheap policy: the game's greedy bot (``epsilon`` of the
  moves at random, for variety) or the random bot, to the end of the game or
  for at most ``rollout_moves`` moves. A rollout cut short is scored like an
  outcome from the standing the greedy bot estimates (``standing(state)``:
  points, glory, Prestige, OP so far); without one every seat scores 1/2.
  That heuristic lives with the game's greedy bot, not in the contract.

* **The greedy bot as prior**: its move is tried first at the root and
  expanded first below it (other untried moves are valued ``fpu`` there); the
  root move played is the most visited, and the greedy move is kept unless the
  other's mean is better by ``switch_z`` standard errors. With a small budget
  the bot plays like the greedy bot; it departs from it on evidence.

**Budget.** ``iterations`` bounds the iterations of one decision. The engine
has no clock, so a time budget is the caller's: pass ``time_s`` together with
a ``clock`` (a callable returning seconds, e.g. ``time.monotonic``) and the
search stops when either budget is spent. With an iteration budget only, the
bot is deterministic: the same view and the same ``rng`` stream give the same
move. With a time budget, how many iterations fit depends on the machine.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import msgspec

from engine_core.bots import Bot, RandomBot
from engine_core.decider import Game, fold
from engine_core.rng import Rng
from engine_core.types import Outcome, Seat

_encode = msgspec.msgpack.Encoder().encode


def seat_rewards(outcome: Outcome) -> tuple[float, ...]:
    """Per seat: the share of the other seats it finished ahead of, ties half."""
    return rank_rewards(tuple(-r for r in outcome.ranks))


def standing_rewards(values: tuple[float, ...], scale: float) -> tuple[float, ...]:
    """Per seat: the mean over the other seats of a logistic of the lead,
    ``1 / (1 + exp(-(mine - theirs) / scale))``: 1/2 when level, towards 1
    (0) with a lead (a deficit) of several ``scale``. Smoother than ranks, so
    a cut-short rollout still tells a small gain from none."""
    n = len(values)
    if n == 1:
        return (1.0,)
    out = []
    for i, mine in enumerate(values):
        total = 0.0
        for j, theirs in enumerate(values):
            if j != i:
                total += 1.0 / (1.0 + math.exp(max(-50.0, min(50.0, (theirs - mine) / scale))))
        out.append(total / (n - 1))
    return tuple(out)


def rank_rewards(keys: tuple[float, ...]) -> tuple[float, ...]:
    """Per seat: the share of the other seats whose key it beats (higher is
    better), ties half."""
    ranks = tuple(-k for k in keys)
    n = len(ranks)
    if n == 1:
        return (1.0,)
    out = []
    for r in ranks:
        ahead = sum(1.0 if r < o else 0.5 if r == o else 0.0 for o in ranks)
        out.append((ahead - 0.5) / (n - 1))  # the seat itself counted as a tie
    return tuple(out)


def _clearly_better(a: list[float], b: list[float], z: float) -> bool:
    """Whether move stats ``a`` beat ``b`` by ``z`` standard errors."""
    na, nb = a[0], b[0]
    ma, mb = a[1] / na, b[1] / nb
    va = max(a[3] / na - ma * ma, 0.0) / na
    vb = max(b[3] / nb - mb * mb, 0.0) / nb
    return ma - mb > z * math.sqrt(va + vb + 1e-4)


class _Node:
    """One information set: per move (in first-seen order) its visits, total
    reward and availability."""

    __slots__ = ("stats",)

    def __init__(self) -> None:
        self.stats: dict[Any, list[float]] = {}  # move -> [visits, reward, available, reward²]


class SearchStats(msgspec.Struct):
    """What the last decision cost (for benchmarks and logs)."""

    iterations: int = 0
    simulated_moves: int = 0
    nodes: int = 0


class SearchBot:
    """ISMCTS over the engine contract (see the module docstring)."""

    name = "search"

    def __init__(
        self,
        iterations: int = 200,
        *,
        time_s: float | None = None,
        clock: Callable[[], float] | None = None,
        exploration: float = 0.7,
        rollout: str = "greedy",
        epsilon: float = 0.1,
        rollout_moves: int | None = 50,
        fpu: float = 0.5,
        root_policy: bool = True,
        switch_z: float = 1.0,
    ) -> None:
        if iterations < 1:
            raise ValueError("iterations must be at least 1")
        if time_s is not None and clock is None:
            raise ValueError("a time budget needs a clock (the engine has none)")
        if rollout not in ("greedy", "random"):
            raise ValueError(f"rollout must be greedy or random, not {rollout!r}")
        self.iterations = iterations
        self.time_s = time_s
        self.clock = clock
        self.exploration = exploration
        self.rollout = rollout
        self.epsilon = epsilon
        self.rollout_moves = rollout_moves
        self.fpu = fpu
        self.root_policy = root_policy
        self.switch_z = switch_z
        self.last = SearchStats()
        self._random = RandomBot()
        self._preferred: Any = None

    # ---------------------------------------------------------------- the bot
    def choose(self, game: Game, state: Any, seat: Seat, rng: Rng) -> Any:
        """The ``Bot`` interface: decides on ``seat``'s view of ``state`` only."""
        return self.choose_view(game, game.view(state, seat), seat, rng)

    def choose_view(self, game: Game, view: Any, seat: Seat, rng: Rng) -> Any:
        """The best move for ``seat`` found by searching from its ``view``."""
        first = game.sample_state(view, seat, rng)
        moves = game.legal_moves(first, seat)
        if not moves:
            raise ValueError(f"seat {seat} has no legal move")
        self.last = SearchStats()
        if len(moves) == 1:
            return moves[0]
        policy = self._policy(game)
        self._preferred = None
        tree: dict[tuple[Seat, bytes], _Node] = {}
        deadline = None
        if self.time_s is not None and self.clock is not None:
            deadline = self.clock() + self.time_s
        simulated = 0
        done = 0
        for i in range(self.iterations):
            if deadline is not None and i > 0 and self.clock() >= deadline:  # type: ignore[misc]
                break
            state = first if i == 0 else game.sample_state(view, seat, rng)
            simulated += self._iterate(game, state, seat, tree, policy, rng)
            done += 1
        self.last = SearchStats(iterations=done, simulated_moves=simulated, nodes=len(tree))
        root = tree[(seat, _encode(game.view(first, seat)))].stats
        # The most visited move; on equal visits the rollout policy's own choice
        # (so a budget smaller than the moves to try plays like the policy),
        # then the better mean. And the policy's move stays unless the other is
        # better by ``switch_z`` standard errors of the difference of means:
        # the search departs from the policy on evidence, not on noise.
        best, best_key = moves[0], (-1.0, -1.0, -1.0)
        for m in moves:
            st = root.get(m)
            if st is None or st[0] == 0:
                continue
            key = (st[0], 1.0 if m == self._preferred else 0.0, st[1] / st[0])
            if key > best_key:
                best, best_key = m, key
        pref = root.get(self._preferred) if self._preferred is not None else None
        if (
            best != self._preferred
            and pref is not None
            and pref[0] > 0
            and not _clearly_better(root[best], pref, self.switch_z)
        ):
            best = self._preferred
        return best

    # ------------------------------------------------------------- internals
    def _policy(self, game: Game) -> Bot:
        if self.rollout == "random":
            return self._random
        from engine_core.bots import greedy_bots

        return greedy_bots().get(game.name, self._random)

    def _step(self, game: Game, state: Any, seat: Seat, move: Any, rng: Rng) -> Any:
        return fold(game, game.decide(state, seat, move, rng.bytes(16)), state)

    def _iterate(
        self,
        game: Game,
        state: Any,
        seat: Seat,
        tree: dict[tuple[Seat, bytes], _Node],
        policy: Bot,
        rng: Rng,
    ) -> int:
        path: list[tuple[list[float], Seat]] = []
        c = self.exploration
        moves_made = 0
        # Selection and expansion: down the tree until a move not tried yet.
        # At the root every move is tried once; below it the rollout policy's
        # move comes first and other untried moves are valued ``fpu`` (first
        # play urgency), so the tree widens only where the policy's line
        # looks poor.
        depth = 0
        fpu = self.fpu
        while game.outcome(state) is None:
            waiting = game.awaiting(state)
            if depth == 0:  # the decision searched for is this seat's, whoever else waits
                mover = seat
            else:
                mover = waiting[0] if len(waiting) == 1 else rng.choice(waiting)
            key = (mover, _encode(game.view(state, mover)))
            node = tree.get(key)
            if node is None:
                node = tree[key] = _Node()
            legal = game.legal_moves(state, mover)
            stats = node.stats
            untried = []
            for m in legal:
                st = stats.get(m)
                if st is None:
                    st = stats[m] = [0.0, 0.0, 0.0, 0.0]
                st[2] += 1.0
                if st[0] == 0.0:
                    untried.append(m)
            move = None
            if untried and depth == 0:  # the root tries every move, the policy's first
                preferred = policy.choose(game, state, mover, rng) if self.root_policy else None
                if self._preferred is None:
                    self._preferred = preferred
                if preferred is not None and stats[preferred][0] == 0.0:
                    move = preferred
                else:
                    move = untried[0] if len(untried) == 1 else rng.choice(untried)
            elif untried and len(legal) > 1:
                preferred = policy.choose(game, state, mover, rng)
                if stats[preferred][0] == 0.0:
                    move = preferred
            elif untried:
                move = legal[0]
            if move is None:
                best = -1.0
                for m in legal:
                    n, w, avail, _ = stats[m]
                    u = fpu if n == 0.0 else w / n + c * math.sqrt(math.log(avail) / n)
                    if u > best:
                        move, best = m, u
            st = stats[move]
            path.append((st, mover))
            fresh = st[0] == 0.0
            state = self._step(game, state, mover, move, rng)
            moves_made += 1
            depth += 1
            if fresh:
                break
        # Rollout.
        limit = self.rollout_moves
        rolled = 0
        eps = self.epsilon
        while game.outcome(state) is None:
            if limit is not None and rolled >= limit:
                break
            waiting = game.awaiting(state)
            mover = waiting[0] if len(waiting) == 1 else rng.choice(waiting)
            if eps > 0 and policy is not self._random and rng.below(1000) < eps * 1000:
                move = self._random.choose(game, state, mover, rng)
            else:
                move = policy.choose(game, state, mover, rng)
            state = self._step(game, state, mover, move, rng)
            rolled += 1
        outcome = game.outcome(state)
        if outcome is None:
            standing = getattr(policy, "standing", None)
            if standing is None:
                rewards: tuple[float, ...] = (0.5,) * game.seats(state)
            else:
                scale = getattr(policy, "standing_scale", 1.0)
                rewards = standing_rewards(standing(state), scale)
        else:
            rewards = seat_rewards(outcome)
        for st, mover in path:
            r = rewards[mover]
            st[0] += 1.0
            st[1] += r
            st[3] += r * r
        return moves_made + rolled
