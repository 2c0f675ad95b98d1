"""The tournament event store: the match service's JetStream store, reused
with the tournament events' codec on stream ``TOURNAMENTS``, subjects
``tournament.<id>`` (same expected-last-subject-sequence appends, same reads).
"""

from __future__ import annotations

import nats.errors
from nats.js import JetStreamContext

from services.match.store import JetStreamStore, StoreUnavailable, StreamConfig, ensure_stream
from services.tournaments.model import decode_event, encode_event

__all__ = ["StoreUnavailable", "TournamentStore", "ensure_tournament_stream"]


async def ensure_tournament_stream(
    js: JetStreamContext, name: str = "TOURNAMENTS", replicas: int = 1
) -> None:
    await ensure_stream(js, name, "tournament", replicas, 120.0)


class TournamentStore(JetStreamStore):
    encode = staticmethod(encode_event)
    decode = staticmethod(decode_event)

    def __init__(self, js: JetStreamContext, name: str = "TOURNAMENTS", timeout_s: float = 5.0):
        super().__init__(js, StreamConfig(name=name, subject_prefix="tournament"), timeout_s)

    async def ids(self) -> list[str]:
        """Every tournament id in the stream (its subjects)."""
        try:
            info = await self.js.stream_info(
                self.config.name, subjects_filter=f"{self.config.subject_prefix}.*"
            )
        except nats.errors.Error as e:
            raise StoreUnavailable(f"JetStream did not answer: {e!r}") from None
        prefix = len(self.config.subject_prefix) + 1
        return sorted(s[prefix:] for s in (info.state.subjects or {}))
