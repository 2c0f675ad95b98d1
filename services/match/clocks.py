"""Turn clocks: pure arithmetic over commits (no I/O, no wall clock).

Every commit that leaves seats awaited records their clocks (``Clocks``):
the deadline of each awaited seat and, for chess clocks, the time left on
each seat's clock at the commit's time. The next commit's clocks follow from
the previous commit's clocks and the two commits' timestamps only, so every
replica and every replay computes the same clocks.

* ``per_move``: each decision gets ``per_move_ms`` from the commit that
  starts it. A seat that stays awaited across another seat's move
  (simultaneous decisions, response windows) keeps its deadline.
* ``fischer``: each seat has a bank. While the seat is awaited its bank runs
  (after ``delay_ms`` free at the start of each decision); when its player
  moves, the time used is taken from the bank and ``increment_ms`` added
  (once per move, never for a timeout). All awaited seats' clocks run at
  once. A bank never goes below 0.
* A seat whose clock runs out gets the game's default move (a *timeout*);
  after ``max_timeouts`` in a row it is handed to a bot (its decisions are
  then due ``TAKEOVER_MS`` after they start) or forfeits. A move of the
  seat's player resets its timeouts and ends a takeover.
"""

from __future__ import annotations

import re

from engine_core.types import Outcome
from services.common.errors import InvalidArgument
from services.match.model import (
    ON_MAX_BOT,
    ON_MAX_FORFEIT,
    TC_FISCHER,
    TC_GAME_DEFAULT,
    TC_NONE,
    TC_PER_MOVE,
    Clocks,
    TimeControl,
)

SECOND = 1000
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE
DAY = 24 * HOUR

MAX_TIME_MS = 7 * DAY  # a clock longer than a week is a mistake, not a choice
MIN_DECISION_MS = 100  # below that no client can answer in time
MAX_TIMEOUTS = 100
TAKEOVER_MS = SECOND  # a handed-over seat's decisions are due this long after they start

REASON_FORFEIT = "forfeit"

# Each game's default control (``TimeControl(kind="game_default")``): the
# clock is the match service's business, not the rules', so the table is here.
# Dwarves Duel decisions (a card, a response window's pass) are short: a fixed
# time per decision. Dice Forge and Arcane Academy turns vary in length: chess
# clocks. Assault of the Giants turns are long: a long bank with a delay.
GAME_DEFAULTS: dict[str, TimeControl] = {
    "tic_tac_toe": TimeControl(kind=TC_PER_MOVE, per_move_ms=30 * SECOND, max_timeouts=2),
    "dwarves_duel": TimeControl(kind=TC_PER_MOVE, per_move_ms=20 * SECOND, max_timeouts=3),
    "dice_forge": TimeControl(
        kind=TC_FISCHER, initial_ms=5 * MINUTE, increment_ms=10 * SECOND, max_timeouts=3
    ),
    "arcane_academy": TimeControl(
        kind=TC_FISCHER, initial_ms=5 * MINUTE, increment_ms=10 * SECOND, max_timeouts=3
    ),
    "assault_of_the_giants": TimeControl(
        kind=TC_FISCHER,
        initial_ms=20 * MINUTE,
        increment_ms=30 * SECOND,
        delay_ms=5 * SECOND,
        max_timeouts=3,
    ),
}
FALLBACK_DEFAULT = TimeControl(kind=TC_PER_MOVE, per_move_ms=MINUTE, max_timeouts=3)


def bad(message: str, field: str) -> InvalidArgument:
    return InvalidArgument("bad_time_control", message, field=field)


# ================================================================= checking
def validate(tc: TimeControl, known_bot: object = None) -> TimeControl:
    """``tc`` if it is sound, else ``InvalidArgument("bad_time_control")``
    naming the field. ``known_bot(name) -> bool`` checks the bot's name."""
    kinds = (TC_NONE, TC_PER_MOVE, TC_FISCHER, TC_GAME_DEFAULT)
    if tc.kind not in kinds:
        raise bad(f"unknown time control kind {tc.kind!r}", "kind")
    for name in ("per_move_ms", "initial_ms", "increment_ms", "delay_ms"):
        value = getattr(tc, name)
        if value < 0:
            raise bad(f"{name} must not be negative (got {value})", name)
        if value > MAX_TIME_MS:
            raise bad(f"{name} must be at most {MAX_TIME_MS} ms (7 days), got {value}", name)
    allowed = {
        TC_NONE: set(),
        TC_GAME_DEFAULT: set(),
        TC_PER_MOVE: {"per_move_ms"},
        TC_FISCHER: {"initial_ms", "increment_ms", "delay_ms"},
    }[tc.kind]
    for name in ("per_move_ms", "initial_ms", "increment_ms", "delay_ms"):
        if getattr(tc, name) and name not in allowed:
            raise bad(f"{name} does not apply to a {tc.kind} time control", name)
    if tc.kind == TC_PER_MOVE and tc.per_move_ms < MIN_DECISION_MS:
        raise bad(f"per_move_ms must be at least {MIN_DECISION_MS} ms", "per_move_ms")
    if tc.kind == TC_FISCHER and tc.initial_ms < MIN_DECISION_MS:
        raise bad(f"initial_ms must be at least {MIN_DECISION_MS} ms", "initial_ms")
    if not 0 <= tc.max_timeouts <= MAX_TIMEOUTS:
        raise bad(f"max_timeouts must be 0..{MAX_TIMEOUTS}", "max_timeouts")
    if tc.on_max_timeouts not in (ON_MAX_BOT, ON_MAX_FORFEIT):
        raise bad(f"on_max_timeouts must be bot or forfeit, not {tc.on_max_timeouts!r}", "on")
    if tc.kind == TC_NONE and (tc.max_timeouts or tc.bot or tc.on_max_timeouts != ON_MAX_BOT):
        raise bad("a match without a clock has no timeouts", "max_timeouts")
    if tc.bot:
        if tc.on_max_timeouts != ON_MAX_BOT:
            raise bad("a bot is named but the seat forfeits", "bot")
        if callable(known_bot) and not known_bot(tc.bot):
            raise bad(f"unknown bot {tc.bot!r}", "bot")
    return tc


def resolve(tc: TimeControl | None, game: str) -> TimeControl | None:
    """The control a match of ``game`` runs with: ``game_default`` becomes the
    game's own (keeping the requested timeouts rule if one was given);
    ``none`` becomes ``None``."""
    if tc is None or tc.kind == TC_NONE:
        return None
    if tc.kind == TC_GAME_DEFAULT:
        base = GAME_DEFAULTS.get(game, FALLBACK_DEFAULT)
        if tc.max_timeouts or tc.bot or tc.on_max_timeouts != ON_MAX_BOT:
            return TimeControl(
                kind=base.kind,
                per_move_ms=base.per_move_ms,
                initial_ms=base.initial_ms,
                increment_ms=base.increment_ms,
                delay_ms=base.delay_ms,
                max_timeouts=tc.max_timeouts,
                on_max_timeouts=tc.on_max_timeouts,
                bot=tc.bot,
            )
        return base
    return tc


# ================================================================ text form
_DURATION = re.compile(r"^(?:(\d+)h)?(?:(\d+)m(?!s))?(?:(\d+(?:\.\d+)?)s)?(?:(\d+)ms)?$")


def parse_duration(text: str) -> int:
    """``"1h"``, ``"5m"``, ``"1m30s"``, ``"2.5s"``, ``"500ms"`` -> milliseconds."""
    m = _DURATION.match(text.strip())
    if not text.strip() or m is None or not any(m.groups()):
        raise bad(f"{text!r} is not a duration (like 30s, 5m, 1m30s, 500ms)", "spec")
    h, mi, s, ms = m.groups()
    return int(h or 0) * HOUR + int(mi or 0) * MINUTE + round(float(s or 0) * SECOND) + int(ms or 0)


def format_duration(ms: int) -> str:
    if ms == 0:
        return "0s"
    out = ""
    for unit, size in (("h", HOUR), ("m", MINUTE)):
        if ms >= size:
            out += f"{ms // size}{unit}"
            ms %= size
    if ms:
        out += f"{ms // SECOND}s" if ms % SECOND == 0 else f"{ms}ms"
    return out


def parse(spec: str) -> TimeControl:
    """The text form: ``none``, ``default``, ``30s`` (per move), ``5m+3s``
    (Fischer), then optional ``delay=2s``, ``timeouts=3``, ``then=bot``,
    ``then=bot:<name>`` or ``then=forfeit``, separated by spaces or commas."""
    words = [w for w in re.split(r"[\s,]+", spec.strip()) if w]
    if not words:
        raise bad("an empty time control", "spec")
    head, rest = words[0].lower(), words[1:]
    fields: dict[str, object] = {}
    if head == "none":
        fields["kind"] = TC_NONE
    elif head == "default":
        fields["kind"] = TC_GAME_DEFAULT
    elif "+" in head:
        initial, increment = head.split("+", 1)
        fields.update(
            kind=TC_FISCHER,
            initial_ms=parse_duration(initial),
            increment_ms=parse_duration(increment),
        )
    else:
        fields.update(kind=TC_PER_MOVE, per_move_ms=parse_duration(head.removesuffix("/move")))
    for word in rest:
        key, sep, value = word.partition("=")
        if not sep:
            raise bad(f"{word!r}: expected key=value (delay, timeouts, then)", "spec")
        if key == "delay":
            fields["delay_ms"] = parse_duration(value)
        elif key == "timeouts":
            if not value.isdigit():
                raise bad(f"timeouts={value!r} is not a number", "max_timeouts")
            fields["max_timeouts"] = int(value)
        elif key == "then":
            what, _, bot = value.partition(":")
            fields["on_max_timeouts"] = what
            if bot:
                fields["bot"] = bot
        else:
            raise bad(f"unknown time control setting {key!r}", "spec")
    return validate(TimeControl(**fields))  # type: ignore[arg-type]


def format_spec(tc: TimeControl | None) -> str:
    """The text form of ``tc`` (``parse(format_spec(tc)) == tc``)."""
    if tc is None or tc.kind == TC_NONE:
        return "none"
    if tc.kind == TC_GAME_DEFAULT:
        words = ["default"]
    elif tc.kind == TC_PER_MOVE:
        words = [format_duration(tc.per_move_ms)]
    else:
        words = [f"{format_duration(tc.initial_ms)}+{format_duration(tc.increment_ms)}"]
        if tc.delay_ms:
            words.append(f"delay={format_duration(tc.delay_ms)}")
    if tc.max_timeouts:
        words.append(f"timeouts={tc.max_timeouts}")
    if tc.on_max_timeouts != ON_MAX_BOT or tc.bot:
        words.append(f"then={tc.on_max_timeouts}" + (f":{tc.bot}" if tc.bot else ""))
    return " ".join(words)


# =============================================================== arithmetic
def start(
    tc: TimeControl | None, seats: int, awaiting: tuple[int, ...], time_ms: int
) -> Clocks | None:
    """The clocks of the creation commit."""
    if tc is None or not tc.running:
        return None
    fischer = tc.kind == TC_FISCHER
    bank = tc.initial_ms if fischer else 0
    return Clocks(
        deadlines=tuple(
            time_ms + (tc.delay_ms + bank if fischer else tc.per_move_ms) if s in awaiting else 0
            for s in range(seats)
        ),
        remaining=(bank,) * seats if fischer else (),
        timeouts=(0,) * seats,
        taken_over=(False,) * seats,
    )


def advance(
    tc: TimeControl | None,
    before: Clocks | None,
    before_ms: int,
    seat: int,
    awaiting: tuple[int, ...],
    time_ms: int,
    *,
    timeout: bool,
) -> Clocks | None:
    """The clocks after ``seat`` moved at ``time_ms`` (``timeout``: the server
    moved for it), leaving ``awaiting``; ``before`` were the clocks of the
    previous commit, made at ``before_ms``."""
    if tc is None or not tc.running or before is None:
        return None
    fischer = tc.kind == TC_FISCHER
    elapsed = max(0, time_ms - before_ms)
    seats = len(before.deadlines)
    deadlines, remaining = [], []
    timeouts, taken_over = list(before.timeouts), list(before.taken_over)
    if timeout:
        timeouts[seat] += 1
        if (
            tc.max_timeouts
            and timeouts[seat] >= tc.max_timeouts
            and tc.on_max_timeouts == ON_MAX_BOT
        ):
            taken_over[seat] = True
    else:
        timeouts[seat] = 0
        taken_over[seat] = False
    for s in range(seats):
        was = before.deadlines[s]
        bank = before.remaining[s] if fischer else 0
        if fischer and was:
            delay_left = max(0, was - before_ms - bank)
            bank = max(0, bank - max(0, elapsed - delay_left))
        if fischer and s == seat and not timeout:
            bank = min(MAX_TIME_MS, bank + tc.increment_ms)
        remaining.append(bank)
        if s not in awaiting:
            deadlines.append(0)
        elif was and s != seat:  # the same decision goes on
            deadlines.append(was)
        elif taken_over[s]:
            deadlines.append(time_ms + TAKEOVER_MS)
        else:
            deadlines.append(time_ms + (tc.delay_ms + bank if fischer else tc.per_move_ms))
    return Clocks(
        deadlines=tuple(deadlines),
        remaining=tuple(remaining) if fischer else (),
        timeouts=tuple(timeouts),
        taken_over=tuple(taken_over),
    )


def next_deadline(clocks: Clocks | None) -> int | None:
    """The earliest deadline (Unix ms), or ``None`` when nothing is due."""
    if clocks is None:
        return None
    due = [d for d in clocks.deadlines if d]
    return min(due) if due else None


def overdue(clocks: Clocks | None, now_ms: int) -> list[int]:
    """The seats whose deadline has passed at ``now_ms``, earliest first."""
    if clocks is None:
        return []
    due = [(d, s) for s, d in enumerate(clocks.deadlines) if d and d <= now_ms]
    return [s for _d, s in sorted(due)]


def in_time(clocks: Clocks | None, seat: int, time_ms: int) -> bool:
    """Whether a move of ``seat`` at ``time_ms`` beats its deadline."""
    if clocks is None or not clocks.deadlines[seat]:
        return True
    return time_ms <= clocks.deadlines[seat]


def forfeits(tc: TimeControl | None, clocks: Clocks | None, seat: int) -> bool:
    """Whether one more timeout of ``seat`` makes it forfeit."""
    if tc is None or clocks is None or tc.on_max_timeouts != ON_MAX_FORFEIT:
        return False
    return tc.max_timeouts > 0 and clocks.timeouts[seat] + 1 >= tc.max_timeouts


def forfeit_outcome(seats: int, forfeiting: int) -> Outcome:
    """The match-level outcome of a forfeit, the same in every game (the
    game's own outcome is never consulted: the game did not end): the
    forfeiting seat ranks last and scores 0; every other seat shares first
    place with score 1."""
    return Outcome(
        ranks=tuple(seats if s == forfeiting else 1 for s in range(seats)),
        scores=tuple(0.0 if s == forfeiting else 1.0 for s in range(seats)),
        reason=REASON_FORFEIT,
    )


def after_end(clocks: Clocks | None) -> Clocks | None:
    """The clocks of a commit that ends the match from outside (``EndMatch``):
    nothing is awaited any more; the rest as it was."""
    if clocks is None:
        return None
    return Clocks(
        deadlines=(0,) * len(clocks.deadlines),
        remaining=clocks.remaining,
        timeouts=clocks.timeouts,
        taken_over=clocks.taken_over,
    )


def after_forfeit(clocks: Clocks | None, seat: int) -> Clocks | None:
    """The clocks of a forfeit commit: nothing is awaited any more."""
    if clocks is None:
        return None
    timeouts = list(clocks.timeouts)
    timeouts[seat] += 1
    return Clocks(
        deadlines=(0,) * len(clocks.deadlines),
        remaining=clocks.remaining,
        timeouts=tuple(timeouts),
        taken_over=clocks.taken_over,
    )
