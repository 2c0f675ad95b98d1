"""Every game's terminal renderer over the views of seeded playouts: it never
raises, names cards and faces instead of printing ids, and leaves empty move
fields out of the menu."""

from __future__ import annotations

import re

import msgspec
import pytest

from engine_core.bots import bot_for
from engine_core.decider import fold, start
from engine_core.registry import default_registry
from engine_core.testing import move_entropy, setup_entropy
from services.cli.render import changed, renderer_for

GAMES = default_registry().names()
# Ids a reader should never see bare (a name stands in their place).
BARE_IDS = {
    "dwarves_duel": re.compile(r"\b[GE]\d\d\b"),
    "dice_forge": re.compile(r"\b(?:[GSMV]\d(?:[+|][GSMV]\d)*|SHIELD_\w+|BOAR_\w+|MIRROR_CARD)\b"),
    "arcane_academy": re.compile(r"\b(?:[SI]\d\d[ab]|T\d\d)\b"),
    "assault_of_the_giants": re.compile(r"\b(?:res\d\d|sp\d\d)\b"),
    "tic_tac_toe": re.compile(r"$^"),
}
EMPTY_FIELD = re.compile(r'=""|=\[\]|=-1\b|: ""|\bNone\b|\(\)|\[\]|, ,')


def walk(game, players: int, seed: int, seats, steps: int = 400):
    """(renderer, view, legal moves, events) along a seeded greedy/random playout."""
    bot = bot_for("greedy", game)
    rng_seed = seed
    state, events = start(game, players, None, setup_entropy(rng_seed))
    from engine_core.rng import Rng

    rng = Rng(setup_entropy(seed + 1000))
    for k in range(steps):
        for seat in seats:
            yield (
                seat,
                game.view(state, seat),
                game.legal_moves(state, seat) if seat is not None else (),
                [e for e in (game.redact(ev, seat) for ev in events) if e is not None],
            )
        if game.outcome(state) is not None:
            return
        waiting = game.awaiting(state)
        mover = waiting[0] if len(waiting) == 1 else rng.choice(waiting)
        move = (
            bot.choose(game, state, mover, rng)
            if k % 3
            else rng.choice(game.legal_moves(state, mover))
        )
        events = game.decide(state, mover, move, move_entropy(seed, k))
        state = fold(game, events, state)


@pytest.mark.parametrize("name", GAMES)
def test_a_renderer_reads_every_view_move_and_event_of_a_playout(name: str) -> None:
    game = default_registry().get(name)
    players = game.min_players
    bare = BARE_IDS[name]
    lines_seen = 0
    codec = game.codec()
    previous = None
    for seat, view, moves, events in walk(game, players, seed=7, seats=(0, None)):
        r = renderer_for(game, me=seat)
        r.seat_names = {s: f"seat {s}" for s in range(players)}
        # Views travel as JSON: render what the client decodes.
        decoded = r.view(codec.json_encoder.encode(view))
        sections = r.sections(decoded)
        assert sections, "a view renders to at least one section"
        text = "\n".join(s.text for s in sections)
        assert not bare.search(text), f"bare id in the board:\n{text}"
        if previous is not None:
            changed(previous, sections)
        previous = sections
        for mv in moves:
            line = r.move_words(r.move(codec.json_encoder.encode(mv)), decoded)
            assert line and not EMPTY_FIELD.search(line), line
            assert not bare.search(line), line
            lines_seen += 1
        for ev in events:
            line = r.event_words(r.event(codec.json_encoder.encode(ev)), decoded)
            if line is not None:
                assert not bare.search(line), line
        r.standing(decoded)
        r.round(decoded)
    assert lines_seen > 0


def test_dwarves_cards_show_name_cost_points_and_effect() -> None:
    game = default_registry().get("dwarves_duel")
    r = renderer_for(game, me=0)
    assert r.card_full("G17") == "Victory over Nôd'onn (Victory, cost 4 alike, 5 HP: 5 VP)"
    assert r.card_full("E05") == "Sisaroth (Ally, cost one 5, 3 HP: 1 damage per 5 spent)"
    assert "cancel 1 damage" in r.card_full("G34")


def test_dice_forge_faces_and_cards_read_in_words() -> None:
    from services.cli.render.dice_forge import card_text, face_text

    assert face_text("G3|V2") == "3 gold or 2 glory"
    assert face_text("M2+V2") == "2 moon + 2 glory"
    assert card_text("MINOTAUR") == "Minotaur (8 glory: the others roll and lose what they roll)"


def test_a_generic_move_leaves_empty_fields_out() -> None:
    from engine_core.games.dwarves_duel.moves import PlayCard
    from services.cli.render.base import Renderer

    game = default_registry().get("dwarves_duel")
    line = Renderer(game).move_words(PlayCard(card="G12", payment=("d0", "d1")), None)
    assert line == "play card: card G12, payment d0, d1"
    assert msgspec.structs.asdict(PlayCard(card="G12"))["target"] == ""


def test_a_match_ended_from_outside_reads_as_such(capsys) -> None:
    from services.cli.main import MatchLog, ended_words
    from tabletop.common.v1 import common_pb2
    from tabletop.match.v1 import match_pb2

    assert ended_words("adjudicated:round_deadline") == "ended by the tournament: round deadline"
    assert ended_words("adjudicated:admin_call") == "ended by the server: admin call"
    assert ended_words("three_in_a_row") == "ended by: three_in_a_row"
    game = default_registry().get("tic_tac_toe")
    log = MatchLog(renderer_for(game), full=False, summary=False, quiet=False)
    log.commit(
        match_pb2.MatchCommit(
            version=4,
            status=match_pb2.MATCH_STATUS_FINISHED,
            outcome=common_pb2.Outcome(
                ranks=[2, 1], scores=[0, 1], reason="adjudicated:round_deadline"
            ),
            ended_by_service=True,
        )
    )
    assert log.lines == 1
    assert "ended by the tournament: round deadline" in capsys.readouterr().out
