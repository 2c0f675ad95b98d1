"""The engine contract: every game is a Decider.

A game is one object (registered in ``engine_core.registry``) with:

======================================  =========================================
``name, title, rules_version``          identity; ``name`` is the stable id
``min_players, max_players``            the player counts it supports
``Options, State, Move, Event, View``   its msgspec types (Move/Event are unions)
``setup(players, options, entropy)``    the events that start a match
``evolve(state, event)``                apply one event (``state=None`` first)
``decide(state, seat, move, entropy)``  validate a move, return its events
``legal_moves(state, seat)``            every move ``seat`` may make now
``awaiting(state)``                     the seats whose input the game waits for
``view(state, seat | None)``            what a seat (or a spectator) may see
``redact(event, seat | None)``          the same for one event (None = hide it)
``outcome(state)``                      ``Outcome`` once the game is over
``default_move(state, seat)``           the move made when a turn clock runs out
``max_moves(players)``                  an honest upper bound on moves per match
``secrets(state)``                      what is hidden, by owner (for the tests)
``seats(state)``                        how many seats the match has
``sample_state(view, seat, rng)``       a full state consistent with a seat's view
======================================  =========================================

Rules of the contract: ``evolve`` is pure and total and never rolls; every
random result is decided in ``setup``/``decide`` from the entropy passed in and
written into an event, so folding the events rebuilds the exact state.
``decide`` never mutates its input and raises only ``engine_core.errors``.
``sample_state`` (for search bots, which decide on a view) deals the hidden
information the view leaves open at random from ``rng``, so that
``view(sample_state(view(s, seat), seat, rng), seat) == view(s, seat)``.

``BaseGame`` implements the checks every game needs (game over, seat range,
move type, whose turn) once, and the defaults for public games.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any, ClassVar, Protocol, runtime_checkable

import msgspec

from engine_core.errors import GameOver, IllegalMove, MalformedMove, NotYourTurn, UnknownSeat
from engine_core.rng import Rng
from engine_core.types import Outcome, Seat


@runtime_checkable
class Game(Protocol):
    """The structural contract of a game (see the module docstring)."""

    name: str
    title: str
    rules_version: str
    min_players: int
    max_players: int
    Options: Any
    State: Any
    Move: Any
    Event: Any
    View: Any

    def setup(self, players: int, options: Any, entropy: bytes) -> tuple[Any, ...]: ...
    def evolve(self, state: Any | None, event: Any) -> Any: ...
    def decide(self, state: Any, seat: Seat, move: Any, entropy: bytes) -> tuple[Any, ...]: ...
    def legal_moves(self, state: Any, seat: Seat) -> tuple[Any, ...]: ...
    def awaiting(self, state: Any) -> tuple[Seat, ...]: ...
    def view(self, state: Any, seat: Seat | None) -> Any: ...
    def redact(self, event: Any, seat: Seat | None) -> Any | None: ...
    def outcome(self, state: Any) -> Outcome | None: ...
    def default_move(self, state: Any, seat: Seat) -> Any: ...
    def max_moves(self, players: int) -> int: ...
    def secrets(self, state: Any) -> Mapping[Seat | None, Collection[str]]: ...
    def seats(self, state: Any) -> int: ...
    def sample_state(self, view: Any, seat: Seat, rng: Rng) -> Any: ...


class BaseGame:
    """Shared machinery for games. Subclasses set the class attributes and
    implement ``setup``, ``evolve``, ``decide_move``, ``legal_moves``,
    ``awaiting``, ``outcome``, ``max_moves`` and ``seats``; games with hidden
    information also override ``view``, ``redact`` and ``secrets``.
    """

    name: ClassVar[str]
    title: ClassVar[str]
    rules_version: ClassVar[str]
    min_players: ClassVar[int]
    max_players: ClassVar[int]
    Options: ClassVar[Any]
    State: ClassVar[Any]
    Move: ClassVar[Any]
    Event: ClassVar[Any]
    View: ClassVar[Any]

    # ------------------------------------------------------------ the template
    def decide(self, state: Any, seat: Seat, move: Any, entropy: bytes) -> tuple[Any, ...]:
        """Common checks, then the game's own ``decide_move``."""
        if self.outcome(state) is not None:
            raise GameOver(message="the game is over")
        if not isinstance(seat, int) or not 0 <= seat < self.seats(state):
            raise UnknownSeat(message=f"seat {seat!r} is not in this match")
        if not self._is_move(move):
            raise MalformedMove(message=f"{type(move).__name__} is not a move of {self.name}")
        if seat not in self.awaiting(state):
            raise NotYourTurn(
                message=f"the game waits for seat(s) {list(self.awaiting(state))}, not {seat}"
            )
        return tuple(self.decide_move(state, seat, move, Rng(entropy)))

    def decide_move(self, state: Any, seat: Seat, move: Any, rng: Rng) -> Iterable[Any]:
        raise NotImplementedError

    # --------------------------------------------------------------- defaults
    def view(self, state: Any, seat: Seat | None) -> Any:
        """Public games: everybody sees the whole state."""
        return state

    def redact(self, event: Any, seat: Seat | None) -> Any | None:
        """Public games: every event is seen as it is."""
        return event

    def secrets(self, state: Any) -> Mapping[Seat | None, Collection[str]]:
        """Public games hide nothing."""
        return {}

    def sample_state(self, view: Any, seat: Seat, rng: Rng) -> Any:
        """A full state consistent with ``seat``'s view, the hidden parts dealt from
        ``rng``. Public games (``View is State``) return the view itself; games with
        hidden information override it."""
        if self.View is self.State:
            return view
        raise NotImplementedError(f"{self.name} has hidden information and no sample_state")

    def default_move(self, state: Any, seat: Seat) -> Any:
        """The first legal move; games override it with something sensible
        (pass, end the turn, the cheapest choice)."""
        moves = self.legal_moves(state, seat)
        if not moves:
            raise NotYourTurn(message=f"seat {seat} has nothing to do")
        return moves[0]

    # ---------------------------------------------------------------- helpers
    def require_legal(self, state: Any, seat: Seat, move: Any, code: str = "not_legal") -> None:
        """Reject ``move`` unless ``legal_moves`` offers it (for games whose
        move space is small enough to enumerate on every decision)."""
        if move not in self.legal_moves(state, seat):
            raise IllegalMove(code, f"{move!r} is not a legal move now")

    _move_tuple: tuple[type, ...] | None = None

    @classmethod
    def _move_classes(cls) -> tuple[type, ...]:
        found = cls.__dict__.get("_move_tuple")  # per class: a subclass may have other moves
        if found is None:
            found = union_members(cls.Move)
            cls._move_tuple = found
        return found

    _move_set: frozenset[type] | None = None

    @classmethod
    def _is_move(cls, move: Any) -> bool:
        """``isinstance(move, <a Move class>)``, trying the exact type in a set first: a
        failed ``isinstance`` against a Struct class (custom metaclass) is slow, and a
        union has many classes."""
        exact = cls.__dict__.get("_move_set")
        if exact is None:
            exact = frozenset(cls._move_classes())
            cls._move_set = exact
        return type(move) in exact or isinstance(move, cls._move_classes())

    # Codecs (cached per class): JSON for clients, msgpack for internal hops.
    @classmethod
    def codec(cls) -> Codec:
        c = cls.__dict__.get("_codec")
        if c is None:
            c = Codec(cls.Move, cls.Event, cls.State, cls.View, cls.Options)
            cls._codec = c
        return c


def union_members(tp: Any) -> tuple[type, ...]:
    """The classes of a union type (or the one class)."""
    args = getattr(tp, "__args__", None)
    return tuple(args) if args else (tp,)


class Codec:
    """Encoders and decoders of one game's types, built once."""

    def __init__(self, move: Any, event: Any, state: Any, view: Any, options: Any) -> None:
        self.json_encoder = msgspec.json.Encoder()
        self.msgpack_encoder = msgspec.msgpack.Encoder()
        self.move_json = msgspec.json.Decoder(move)
        self.event_json = msgspec.json.Decoder(event)
        self.options_json = msgspec.json.Decoder(options)
        self.view_json = msgspec.json.Decoder(view)
        self.state_msgpack = msgspec.msgpack.Decoder(state)
        self.event_msgpack = msgspec.msgpack.Decoder(event)
        self.move_msgpack = msgspec.msgpack.Decoder(move)

    def decode_move(self, data: bytes | str) -> Any:
        """A move from client JSON; ``MalformedMove`` with the reason if bad."""
        try:
            return self.move_json.decode(data)
        except (msgspec.DecodeError, msgspec.ValidationError) as e:
            raise MalformedMove(message=str(e)) from None

    def decode_options(self, data: bytes | str) -> Any:
        try:
            return self.options_json.decode(data or b"{}")
        except (msgspec.DecodeError, msgspec.ValidationError) as e:
            raise MalformedMove("malformed_options", str(e)) from None


# ------------------------------------------------------------------ folding
def fold(game: Game, events: Iterable[Any], state: Any | None = None) -> Any:
    """Apply ``events`` in order with ``game.evolve``."""
    for event in events:
        state = game.evolve(state, event)
    return state


def start(game: Game, players: int, options: Any, entropy: bytes) -> tuple[Any, tuple[Any, ...]]:
    """Set a match up: its first state and the events that made it."""
    if not game.min_players <= players <= game.max_players:
        raise IllegalMove(
            "player_count",
            f"{game.name} plays with {game.min_players}-{game.max_players} players, not {players}",
        )
    if options is None:
        options = game.Options()
    events = tuple(game.setup(players, options, entropy))
    return fold(game, events), events


def apply(
    game: Game, state: Any, seat: Seat, move: Any, entropy: bytes
) -> tuple[Any, tuple[Any, ...]]:
    """Decide a move and evolve: the new state and the events."""
    events = game.decide(state, seat, move, entropy)
    return fold(game, events, state), events
