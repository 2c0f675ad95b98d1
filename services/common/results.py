"""The stream ``RESULTS`` of ``MatchFinished`` facts (``results.<match id>``),
as every service that reads it makes it when it is not there yet: the match
service stores the facts, matchmaking rates them, the tournament service
scores its rounds by them. Its own module, so that a service that only
needs the stream imports nothing of another service's metrics.
"""

from __future__ import annotations

import contextlib

import nats
from nats.js import JetStreamContext, api
from nats.js.errors import NotFoundError

RESULTS_SUBJECTS = ["results.*"]  # as the match service creates it


async def ensure_results_stream(
    js: JetStreamContext, name: str = "RESULTS", replicas: int = 1
) -> None:
    """Create the stream if nobody has yet (the match service does the same,
    with the same subjects; an existing stream is left as it is)."""
    try:
        await js.stream_info(name)
    except NotFoundError:
        with contextlib.suppress(nats.js.errors.BadRequestError):  # lost a creation race
            await js.add_stream(
                name=name,
                subjects=RESULTS_SUBJECTS,
                storage=api.StorageType.FILE,
                num_replicas=replicas,
                duplicate_window=120.0,
            )
