"""docs/errors.md lists every reason code the code can send, with its status.

The reasons are collected from the source (``tests/docs/reason_codes.py``:
error classes, raise sites, the engine's diagnoses); the tables are parsed
from the document. A new reason raised anywhere and not documented fails
here, and so does a documented status that is not the one the code sends.
"""

from __future__ import annotations

import re

from tests.docs.reason_codes import ROOT, collect

DOC = ROOT / "docs" / "errors.md"
ROW = re.compile(r"^\|\s*`([a-z0-9_]+)`\s*\|([^|]*)\|")
STATUS = re.compile(r"\b[A-Z][A-Z_]{3,}\b")


def documented() -> dict[str, set[str]]:
    """reason -> statuses named in its row (every table of the document)."""
    rows: dict[str, set[str]] = {}
    for line in DOC.read_text().splitlines():
        m = ROW.match(line)
        if m:
            assert m.group(1) not in rows, f"{m.group(1)} is documented twice"
            rows[m.group(1)] = set(STATUS.findall(m.group(2)))
    return rows


def test_every_reason_in_the_code_is_in_the_table_with_its_status() -> None:
    found, _unresolved = collect()
    rows = documented()
    missing = {code: sorted(found.where[code])[:2] for code in found.where if code not in rows}
    assert not missing, f"reasons raised in the code but missing from docs/errors.md: {missing}"
    wrong = {
        code: (sorted(found.statuses[code]), sorted(rows[code]))
        for code in found.where
        if not found.statuses.get(code, set()) <= rows[code]
    }
    assert not wrong, f"(status in the code, status in docs/errors.md) differ: {wrong}"


def test_the_table_lists_no_reason_the_code_never_sends() -> None:
    found, _unresolved = collect()
    stale = sorted(set(documented()) - set(found.where))
    assert not stale, f"docs/errors.md documents reasons no code sends: {stale}"


def test_every_reason_is_resolved_from_the_source() -> None:
    """A reason computed at run time cannot be checked against the table.
    The only such sites pass on a reason collected elsewhere: the engine's
    ``require_legal`` its ``code`` parameter (the default and every caller's
    literal are collected), Arcane Academy the reason of its ``diagnose``
    (whose returns are collected). A new one must be made resolvable."""
    _found, unresolved = collect()
    sites = sorted(u.split(":")[0] + " " + u.split(" ", 1)[1] for u in unresolved)
    assert sites == [
        "engine_core/decider.py IllegalMove(code, f'{move!r} is not a legal move now')",
        "engine_core/games/arcane_academy/rules.py IllegalMove(code, message)",
    ], unresolved


def test_the_collector_finds_what_it_should() -> None:
    """The walker itself: known reasons from each kind of source."""
    found, _ = collect()
    assert found.statuses["stale_version"] == {"ABORTED"}  # fixed in a class
    assert found.statuses["missing_token"] == {"UNAUTHENTICATED"}  # a raise site
    assert found.statuses["not_your_turn"] == {"FAILED_PRECONDITION"}  # an engine class
    assert found.statuses["version_ahead"] == {"INVALID_ARGUMENT"}  # second argument
    assert found.statuses["cannot_afford"] == {"FAILED_PRECONDITION"}  # a diagnosis
    assert found.statuses["internal"] == {"INTERNAL"}  # status_of's own
    assert "bad_request" in found.where  # a class's default reason
