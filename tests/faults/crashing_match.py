"""``python -m tests.faults.crashing_match``: the match service (settings from
the environment), except that the process kills itself with SIGKILL right
after appending the commit that finishes a match, before anything is told
about it: no ``MatchFinished`` fact, no index update, no answer. For the test
of the relay that must still get the fact out."""

from __future__ import annotations

import os
import signal
import sys

from services.match import writes


async def _die(self, meta, commit) -> None:  # type: ignore[no-untyped-def]
    os.kill(os.getpid(), signal.SIGKILL)


writes.Writes._finished = _die  # type: ignore[method-assign]

if __name__ == "__main__":
    from services.match.__main__ import main

    sys.exit(main([]))
