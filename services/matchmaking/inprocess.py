"""An in-process ``MatchCreator`` over the engine, for tests of pairing and
the pairing figure of ``bench/matchmaking.py``.

It really sets each match up with ``engine_core`` (so a bad game, player count
or options fails as it would in the match service), keeps the matches in a
dict and honours idempotency keys. The service itself always talks to
``MatchService`` (``match_client``).
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass, field
from typing import Any

from engine_core.decider import start
from engine_core.registry import Registry, default_registry
from services.matchmaking.ports import CreatedMatch, MatchCreationFailed


@dataclass
class InProcessMatchCreator:
    registry: Registry = field(default_factory=default_registry)
    matches: dict[str, tuple[str, list[str], Any]] = field(default_factory=dict)
    by_key: dict[str, CreatedMatch] = field(default_factory=dict)
    clocks: dict[str, str] = field(default_factory=dict)  # match id -> time control asked

    async def create_match(
        self,
        game: str,
        players: list[str],
        options_json: str,
        *,
        key: str = "",
        time_control: str = "",
    ) -> CreatedMatch:
        if key and key in self.by_key:
            return self.by_key[key]
        try:
            g = self.registry.get(game)
            options = g.codec().decode_options(options_json) if options_json else None
            state, _ = start(g, len(players), options, os.urandom(32))
        except Exception as e:
            raise MatchCreationFailed(str(e)) from e
        match_id = uuid.uuid4().hex
        self.matches[match_id] = (game, list(players), state)
        self.clocks[match_id] = time_control
        created = CreatedMatch(match_id, {p: s for s, p in enumerate(players)})
        if key:
            self.by_key[key] = created
        return created
