"""``python -m tests.faults.crashing_match``: the match service (settings from
the environment), except that the process kills itself with SIGKILL at the
commit that finishes a match, before the ``MatchFinished`` fact and the
index's mark go out. For the tests of the relay that must still get the fact
out. ``TABLETOP_TEST_CRASH_AT`` says when:

* ``commit`` (the default): right after appending it, before anything is
  told about it: no answer either;
* ``fact``: when its bookkeeping starts, after the answer was handed to gRPC
  (it may or may not reach the client before the process dies).
"""

from __future__ import annotations

import os
import signal
import sys

from services.match import writes


def _die_now(self, meta, commit) -> None:  # type: ignore[no-untyped-def]
    os.kill(os.getpid(), signal.SIGKILL)


async def _die(self, meta, commit) -> None:  # type: ignore[no-untyped-def]
    _die_now(self, meta, commit)


if os.environ.get("TABLETOP_TEST_CRASH_AT", "commit") == "commit":
    # a move's bookkeeping is started before its answer (and runs after it)
    writes.Writes._finish_soon = _die_now  # type: ignore[method-assign]
writes.Writes._finished = _die  # type: ignore[method-assign]

if __name__ == "__main__":
    from services.match.__main__ import main

    sys.exit(main([]))
