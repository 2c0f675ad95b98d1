"""Golden playthroughs: a readable transcript of one seeded match per game and
player count (moves in text form, events as JSON, final views, the outcome).
Any change to the rules shows up as a diff of these files.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from engine_core.decider import Game
from engine_core.notation import move_text
from engine_core.registry import default_registry
from engine_core.testing import playout

HERE = Path(__file__).parent
SEED = 1
# Player counts per game that get a golden file (default: every count).
COUNTS: dict[str, tuple[int, ...]] = {"assault_of_the_giants": (3, 6)}

_json = msgspec.json.Encoder()


def cases() -> list[tuple[Game, int]]:
    out = []
    for game in default_registry():
        for n in COUNTS.get(game.name, range(game.min_players, game.max_players + 1)):
            out.append((game, n))
    return out


def path_for(game: Game, players: int) -> Path:
    return HERE / game.name / f"{players}p-seed{SEED}.txt"


def transcript(game: Game, players: int) -> str:
    result = playout(game, players, SEED)
    lines = [
        f"# {game.title} ({game.name}) rules {game.rules_version}, {players} players, "
        f"seed {SEED}, random bots",
        "## setup",
    ]
    lines += [f"  {_json.encode(e).decode()}" for e in result.setup_events]
    for step in result.steps:
        lines.append(f"## {step.index + 1}. seat {step.seat}: {move_text(step.move)}")
        lines += [f"  {_json.encode(e).decode()}" for e in step.events]
    lines.append(f"## outcome {_json.encode(result.outcome).decode()}")
    for viewer in [*range(players), None]:
        who = "spectator" if viewer is None else f"seat {viewer}"
        lines.append(f"## final view, {who}")
        lines.append(f"  {_json.encode(game.view(result.state, viewer)).decode()}")
    return "\n".join(lines) + "\n"


def regenerate() -> list[Path]:
    written = []
    for game, n in cases():
        path = path_for(game, n)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(transcript(game, n))
        written.append(path)
    return written
