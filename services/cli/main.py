"""The ``tabletop`` command line."""

from __future__ import annotations

import argparse
import sys

from engine_core.bots import bot_for
from engine_core.notation import move_text
from engine_core.registry import default_registry
from engine_core.testing import playout


def demo(args: argparse.Namespace) -> int:
    registry = default_registry()
    names = [args.game] if args.game else registry.names()
    for name in names:
        game = registry.get(name)
        players = args.players or game.min_players
        bot = bot_for(args.bot, game)
        print(f"== {game.title} ({name}), {players} players, seed {args.seed}, {bot.name} bots")
        result = playout(
            game,
            players,
            args.seed,
            bots=bot,
            on_step=lambda _b, step, _a: print(
                f"  {step.index + 1:4d}. seat {step.seat}: {move_text(step.move)}"
            ),
        )
        o = result.outcome
        assert o is not None
        print(f"  result: {o.reason}; ranks {list(o.ranks)}; scores {list(o.scores)}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tabletop", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("demo", help="bots play a game in the terminal")
    p.add_argument("game", nargs="?", help="game id (default: every game)")
    p.add_argument("--players", type=int)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--bot", default="greedy", choices=["random", "greedy"])
    p.set_defaults(func=demo)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
