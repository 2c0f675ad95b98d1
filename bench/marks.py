"""A service run with marks: ``python -m bench.marks <folder> <module> [args]``
runs ``python -m <module> [args]`` (``services.match`` or ``services.rules``)
after wrapping a few of its functions, so that each call notes the time it
crossed a hand-over of a move (``time.monotonic_ns``: the same clock in every
process of the machine). At exit the marks go to ``<folder>/<name>.<pid>.marks``,
one ``<ns> <mark>`` per line. Nothing of the services changes; only
``bench/critical_path.py`` starts them this way. A mark costs the process
about a microsecond.

The marks (``TARGETS``), at the entry of the call unless said otherwise:

* match service: ``req`` a move request decoded (``_play_move``, on
  ``PlayMatch`` and ``PlaySession``); ``submit>`` / ``submit<`` the write
  path's handling of a move (``Writes._submit``); ``decide>`` /
  ``decide<`` its rules call (``GrpcRules.decide``: the request built, the
  answer turned into a decision); ``rwrite`` a message handed to the
  rules stream; ``rread`` a message read from it (at the exit); ``append``
  a commit's append begun, ``appended`` its end; ``ack`` an answer on the
  JetStream ack inbox (the appends', and the index's and facts' writes);
  ``frame`` a frame built for a play or session stream (then handed to
  gRPC); ``create>`` / ``create<`` a match created; ``index>`` /
  ``index<`` a write of the lobby index;
* rules service: ``call>`` / ``call<`` one call of an ``ApplyMoves`` stream.
"""

from __future__ import annotations

import atexit
import functools
import importlib
import inspect
import os
import runpy
import sys
import time
from collections.abc import Callable
from typing import Any

ENTER, EXIT, BOTH = "enter", "exit", "both"

Target = tuple[str, str, str, str]
"""(module, attribute path, mark name, when: ``ENTER``, ``EXIT`` or ``BOTH``)."""

TARGETS: dict[str, list[Target]] = {
    "services.match": [
        ("services.match.servicer", "_play_move", "req", ENTER),
        ("services.match.writes", "Writes._submit", "submit", BOTH),
        ("services.match.rules_grpc", "GrpcRules.decide", "decide", BOTH),
        ("grpc.aio._call", "StreamStreamCall.write", "rwrite", ENTER),
        ("grpc.aio._call", "StreamStreamCall.read", "rread", EXIT),
        ("services.match.store", "JetStreamStore.append", "append", ENTER),
        ("services.match.store", "JetStreamStore.append", "appended", EXIT),
        ("services.match.store", "AckInbox.set_result", "ack", ENTER),
        ("services.match.servicer", "play_frame_pb", "frame", ENTER),
        ("services.match.servicer", "session_frame_pb", "frame", ENTER),
        ("services.match.writes", "Writes.create", "create", BOTH),
        ("services.match.index", "MatchIndex.record", "index", BOTH),
    ],
    "services.rules": [
        ("services.rules.servicer", "RulesServicer._one_call", "call", BOTH),
    ],
}

_marks: list[tuple[int, str]] = []


def _wrapped(f: Callable[..., Any], name: str, when: str) -> Callable[..., Any]:
    note = _marks.append
    clock = time.monotonic_ns
    enter = name + ">" if when == BOTH else name
    leave = name + "<" if when == BOTH else name
    if inspect.iscoroutinefunction(f):

        @functools.wraps(f)
        async def coroutine(*args: Any, **kwargs: Any) -> Any:
            if when != EXIT:
                note((clock(), enter))
            out = await f(*args, **kwargs)
            if when != ENTER:
                note((clock(), leave))
            return out

        return coroutine

    @functools.wraps(f)
    def function(*args: Any, **kwargs: Any) -> Any:
        if when != EXIT:
            note((clock(), enter))
        out = f(*args, **kwargs)
        if when != ENTER:
            note((clock(), leave))
        return out

    return function


def resolve(module: str, path: str) -> tuple[Any, str, Any]:
    """The object holding ``path``'s last name, that name and its value
    (``AttributeError`` / ``ImportError`` if the services changed)."""
    owner: Any = importlib.import_module(module)
    *parents, name = path.split(".")
    for part in parents:
        owner = getattr(owner, part)
    return owner, name, getattr(owner, name)


def install(service: str) -> None:
    """Wrap the targets of ``service`` (a key of ``TARGETS``)."""
    for module, path, name, when in TARGETS[service]:
        owner, attr, f = resolve(module, path)
        setattr(owner, attr, _wrapped(f, name, when))


def _save(folder: str, service: str) -> None:
    name = service.rsplit(".", 1)[-1]
    with open(os.path.join(folder, f"{name}.{os.getpid()}.marks"), "w") as out:
        out.writelines(f"{ns} {mark}\n" for ns, mark in _marks)


def main() -> None:
    folder, service, *args = sys.argv[1:]
    install(service)
    atexit.register(_save, folder, service)
    sys.argv = [service, *args]
    runpy.run_module(service, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
