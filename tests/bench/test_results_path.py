"""``make bench`` writes a new results file per run, never over an earlier one."""

from __future__ import annotations

from pathlib import Path

from bench.__main__ import results_path


def test_a_second_run_of_the_day_gets_a_file_of_its_own(tmp_path: Path) -> None:
    first = results_path(tmp_path, "2026-12-02")
    assert first.name == "2026-12-02.json"
    first.write_text("{}")
    second = results_path(tmp_path, "2026-12-02")
    assert second.name == "2026-12-02-2.json"
    second.write_text("{}")
    assert results_path(tmp_path, "2026-12-02").name == "2026-12-02-3.json"
    assert results_path(tmp_path, "2026-12-03").name == "2026-12-03.json"
