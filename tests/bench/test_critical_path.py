"""The critical path's marks (bench/marks.py) hook functions the services
still have, and bench/critical_path.py cuts a move's path where the marks say."""

from __future__ import annotations

from bench import critical_path, marks


def test_every_mark_hooks_a_function_the_services_have() -> None:
    for targets in marks.TARGETS.values():
        for module, path, _name, _when in targets:
            _owner, _attr, f = marks.resolve(module, path)
            assert callable(f), (module, path)


def _synthetic() -> tuple[critical_path.Marks, critical_path.Marks]:
    """Two moves of a game, a creation, then a third move (times in µs)."""
    match: dict[str, list[int]] = {}
    rules: dict[str, list[int]] = {}

    def at(marks: dict[str, list[int]], name: str, us: int) -> None:
        marks.setdefault(name, []).append(us * 1000)

    for start in (0, 2000, 10_000):
        at(match, "req", start)
        at(match, "submit>", start + 10)
        at(match, "decide>", start + 40)
        at(match, "rwrite", start + 100)
        at(rules, "call>", start + 200)
        at(rules, "call<", start + 300)
        at(match, "rread", start + 400)
        at(match, "decide<", start + 420)
        at(match, "append", start + 450)
        at(match, "ack", start + 650)
        at(match, "appended", start + 655)
        at(match, "submit<", start + 670)
        at(match, "frame", start + 700)
        at(match, "frame", start + 760)
    at(match, "create>", 5000)
    at(match, "index>", 5300)
    at(match, "index<", 5500)
    at(match, "create<", 6000)
    at(match, "frame", 6100)  # the created frame
    return match, rules


def test_the_parts_of_a_move_are_cut_at_its_marks() -> None:
    figures = critical_path.analyse(*_synthetic())
    expected = {
        "match_in": 100.0,
        "rules": 300.0,
        "rules_call": 100.0,
        "match_decide": 50.0,
        "jetstream": 200.0,
        "match_out": 110.0,
    }
    for part, us in expected.items():
        assert figures[part] == {"n": 3, "p50_us": us, "p90_us": us}, part
    # The client's part only between the two moves with no creation between
    # them: from the second frame of the first move to the second's request.
    assert figures["client"] == {"n": 1, "p50_us": 1240.0, "p90_us": 1240.0}
    assert figures["cycle"]["p50_us"] == 2000.0
    assert figures["create"] == {"n": 1, "p50_us": 1000.0, "p90_us": 1000.0}
    assert figures["create_index"] == {"n": 1, "p50_us": 200.0, "p90_us": 200.0}


def test_the_parts_are_cut_again_at_their_steps() -> None:
    figures = critical_path.analyse(*_synthetic())
    expected = {
        "in_queue": 10.0,
        "in_checks": 30.0,
        "in_send": 60.0,
        "rules_out": 100.0,
        "rules_back": 100.0,
        "decide_wake": 20.0,
        "decide_commit": 30.0,
        "out_wake": 5.0,
        "out_apply": 15.0,
        "out_follow": 30.0,
        "out_second": 60.0,
    }
    assert [step for step, _, _ in critical_path.STEPS] == list(expected)
    for step, us in expected.items():
        assert figures[step] == {"n": 3, "p50_us": us, "p90_us": us}, step
    # the steps of each part add up to it
    for part, steps in (
        ("match_in", ("in_queue", "in_checks", "in_send")),
        ("rules", ("rules_out", "rules_call", "rules_back")),
        ("match_decide", ("decide_wake", "decide_commit")),
        ("match_out", ("out_wake", "out_apply", "out_follow", "out_second")),
    ):
        assert sum(figures[s]["p50_us"] for s in steps) == figures[part]["p50_us"], part


def test_a_move_with_a_step_out_of_order_has_parts_and_no_steps() -> None:
    match, rules = _synthetic()
    # the second move's write path returned after its first frame (it
    # waited on something else meanwhile): its steps are not cut
    match["submit<"][1] = (2000 + 720) * 1000
    figures = critical_path.analyse(match, rules)
    assert figures["match_out"]["n"] == 3
    for step in ("in_queue", "decide_wake", "out_follow"):
        assert figures[step]["n"] == 2, step
    assert figures["rules_out"]["n"] == 3  # the rules service's own marks are whole


def test_a_move_a_creation_interrupts_counts_for_nothing() -> None:
    match, rules = _synthetic()
    match["create>"] = [2500 * 1000]  # during the second move
    match["create<"] = [2600 * 1000]
    figures = critical_path.analyse(match, rules)
    assert figures["match_in"]["n"] == 2
    assert figures["client"]["n"] == 0  # the first and third moves are not in a row


def test_the_client_part_is_only_between_two_moves_in_a_row() -> None:
    match, rules = _synthetic()
    for name in ("create>", "create<", "index>", "index<"):
        del match[name]
    del match["ack"][1]  # the second move's path is not whole: it counts for nothing
    figures = critical_path.analyse(match, rules)
    assert figures["match_in"]["n"] == 2
    assert figures["client"]["n"] == 0  # the third move does not follow the first


def test_a_run_of_the_stack_marks_every_part_of_its_moves() -> None:
    figures = critical_path.run(seconds=1.0, path="play")
    steps = [step for step, _, _ in critical_path.STEPS]
    for part in (*critical_path.PARTS, "rules_call", "cycle", "create", "create_index", *steps):
        assert figures[part]["n"] >= 5, (part, figures[part])
        assert figures[part]["p50_us"] > 0, (part, figures[part])
    # the rules service's handling of a call lies within the hop to it
    assert figures["rules_call"]["p50_us"] < figures["rules"]["p50_us"]
    assert figures["create_index"]["p50_us"] < figures["create"]["p50_us"]
    assert figures["moves_per_s"] > 0


def test_marks_from_before_the_measured_run_are_left_out(tmp_path) -> None:
    (tmp_path / "match.1.marks").write_text("100 req\n200 rwrite\n300 req\n")
    (tmp_path / "rules.2.marks").write_text("150 call>\n250 call>\n")
    match, rules = critical_path.read_marks(tmp_path, since_ns=200)
    assert match == {"rwrite": [200], "req": [300]}
    assert rules == {"call>": [250]}
    match, rules = critical_path.read_marks(tmp_path)
    assert match["req"] == [100, 300]
