"""Each registered game plays its golden match exactly as recorded.

After a deliberate rules change, ``make golden`` rewrites the files; review
the diff like any other change.
"""

import pytest

from tests.golden.transcript import cases, path_for, transcript


@pytest.mark.parametrize(("game", "players"), cases(), ids=lambda c: getattr(c, "name", c))
def test_golden_playthrough(game, players) -> None:
    path = path_for(game, players)
    assert path.exists(), f"no golden file for {game.name} with {players}: run make golden"
    expected = path.read_text()
    actual = transcript(game, players)
    if actual != expected:
        exp, act = expected.splitlines(), actual.splitlines()
        first = next(
            (i for i, (a, b) in enumerate(zip(exp, act, strict=False)) if a != b),
            min(len(exp), len(act)),
        )
        pytest.fail(
            f"{path.name} differs from line {first + 1}:\n"
            f"  recorded: {exp[first] if first < len(exp) else '<end>'}\n"
            f"  now:      {act[first] if first < len(act) else '<end>'}\n"
            "run `make golden` if the change is intended"
        )
