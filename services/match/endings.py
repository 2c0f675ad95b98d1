"""Ending a match from outside: ``EndMatch``, for service tokens only.

A tournament whose round deadline caught a match unfinished decides its
result (``MatchAdjudicated`` in the tournament's stream); this makes the
match service agree: one final commit of kind ``ended`` carrying that
outcome (reason ``adjudicated:<reason>``), appended with the expected
stream sequence like the clock's forfeit commit (``timers._forfeit``). From
then on the match is finished everywhere: the projection, watchers and
replays (the commit says ``ended_by_service``), ``SubmitMove``
(``game_over``), the turn timer (unlisted), the ``MatchFinished`` fact
(whose reason tells the ratings consumer not to rate it).

The idempotency key is required and scoped to the match and the caller. The
ended commit is always the match's last, so a retry finds it there: the
same payload gets the first answer, another payload
``idempotency_key_reused``. Any other finished match is ``game_over``, with
nothing appended.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import structlog

from engine_core.types import Outcome
from services.common.auth import Principal
from services.common.errors import FailedPrecondition, InvalidArgument, PermissionDenied
from services.match import clocks, metrics
from services.match.base import MAX_KEY_LENGTH
from services.match.errors import BadRequest, IdempotencyKeyReused, StaleVersion
from services.match.model import (
    KIND_ENDED,
    MatchMeta,
    Projection,
    key_digest,
    request_digest,
    same_request,
)
from services.match.ports import AppendConflict
from services.match.store import FINISHED_HEADERS
from services.match.timers import Timeouts, final_commit

log = structlog.get_logger("tabletop.match.endings")

ADJUDICATED_PREFIX = "adjudicated:"
"""The outcome reason of a match ended by a service: ``adjudicated:<reason>``.
Ratings skip such matches (they were not played to the end)."""
END_REASON = re.compile(r"^[a-z0-9_]{1,40}$")
MAX_ABS_SCORE = 1e9
END_ATTEMPTS = 5


@dataclass(frozen=True, slots=True)
class EndResult:
    match_id: str
    version: int
    outcome: Outcome


def is_adjudicated(reason: str) -> bool:
    """Whether an outcome's reason says a service ended the match (no game
    was played to its end)."""
    return reason.startswith(ADJUDICATED_PREFIX)


def check_ranks(ranks: list[int], seats: int) -> tuple[int, ...]:
    """``ranks`` if they are competition ranks of ``seats`` seats (1 is first;
    tied seats share a rank and the next skips: 1, 1, 3), else
    ``InvalidArgument("bad_ranks")``."""
    if len(ranks) != seats:
        raise InvalidArgument(
            "bad_ranks",
            f"one rank per seat: {seats} expected, {len(ranks)} given",
            seats=str(seats),
        )
    for s, r in enumerate(ranks):
        # competition ranks: a seat's rank is 1 + the number of seats ahead of it
        if r != 1 + sum(1 for q in ranks if q < r):
            raise InvalidArgument(
                "bad_ranks",
                f"ranks {list(ranks)} are not competition ranks (seat {s}: {r}); "
                "1 is first, tied seats share a rank and the next rank skips (1, 1, 3)",
                seat=str(s),
            )
    return tuple(ranks)


def check_scores(scores: list[float], ranks: tuple[int, ...]) -> tuple[float, ...]:
    """The scores, or (none given) 1 for the seats ranked first and 0 for the
    others; ``InvalidArgument("bad_scores")`` for a wrong count or a score
    that is not finite or over ``MAX_ABS_SCORE``."""
    if not scores:
        return tuple(1.0 if r == 1 else 0.0 for r in ranks)
    if len(scores) != len(ranks):
        raise InvalidArgument(
            "bad_scores",
            f"one score per seat (or none): {len(ranks)} expected, {len(scores)} given",
        )
    for s, x in enumerate(scores):
        if not (math.isfinite(x) and abs(x) <= MAX_ABS_SCORE):
            raise InvalidArgument(
                "bad_scores", f"seat {s}'s score is not finite or over {MAX_ABS_SCORE:g}"
            )
    return tuple(float(x) for x in scores)


class Endings(Timeouts):
    async def end(
        self,
        principal: Principal,
        match_id: str,
        *,
        ranks: list[int],
        scores: list[float] | None = None,
        reason: str,
        idempotency_key: str,
        expected_version: int | None = None,
    ) -> EndResult:
        """End a running match with the given result (service tokens only)."""
        if not principal.is_service:
            raise PermissionDenied("service_only", "only services may end a match")
        if not END_REASON.match(reason):
            raise InvalidArgument(
                "bad_end_reason", "reason is a short code: 1..40 of a-z, 0-9 and _"
            )
        if not idempotency_key:
            raise BadRequest("EndMatch needs an idempotency key", "bad_key")
        if len(idempotency_key) > MAX_KEY_LENGTH:
            raise BadRequest("idempotency key too long", "bad_key")
        p = await self.load(match_id, fresh=True)
        seats = len(p.meta.players)
        ranks_t = check_ranks(list(ranks), seats)
        outcome = Outcome(
            ranks=ranks_t,
            scores=check_scores(list(scores or ()), ranks_t),
            reason=ADJUDICATED_PREFIX + reason,
        )
        digest = key_digest(match_id, principal.subject, idempotency_key)
        request = request_digest("end", outcome.ranks, outcome.scores, outcome.reason)
        for _attempt in range(END_ATTEMPTS):
            if p.outcome is not None:  # the head: nothing comes after a final commit
                return await self._ended_before(p, digest, request)
            if expected_version is not None and expected_version != p.version:
                raise StaleVersion(
                    f"the match is at version {p.version}, not {expected_version}", p.version
                )
            commit = final_commit(
                p,
                KIND_ENDED,
                outcome,
                clocks.after_end(p.clocks),
                player=principal.subject,
                key=digest,
                request=request,
            )
            try:
                seq, duplicate = await self._append(
                    match_id,
                    commit,
                    p.seq,
                    f"{match_id}:{digest}",
                    headers=FINISHED_HEADERS,
                    unknown={"idempotency_key": idempotency_key},
                )
            except AppendConflict:  # a move (or another end) came first: look again
                metrics.APPEND_CONFLICTS.inc()
                p = await self._catch_up(p)
                continue
            if duplicate:  # the same end landed meanwhile (a retry racing the first)
                p = await self._catch_up(p)
                continue
            await self._settle_final(p, commit, seq)
            await self._unlist(match_id)
            metrics.MATCHES_ENDED.inc()
            log.info(
                "match_ended_by_service",
                match=match_id,
                by=principal.subject,
                reason=outcome.reason,
                version=commit.version,
            )
            return EndResult(match_id, commit.version, outcome)
        raise StaleVersion(f"the match changed {END_ATTEMPTS} times while ending it", p.version)

    async def _ended_before(self, p: Projection, digest: str, request: str) -> EndResult:
        """A finished match: the first answer if its final commit is this
        key's end, else ``game_over`` (nothing appended)."""
        last = await self._store(self.store.commit_at(p.seq))
        if last.kind == KIND_ENDED and last.key == digest:
            if not same_request(last.request, request):
                raise IdempotencyKeyReused(
                    "this idempotency key already ended the match with another result"
                )
            metrics.IDEMPOTENT_REPLIES.inc()
            assert last.outcome is not None
            await self._finished(p.meta, last)  # the first answer may have died before the fact
            await self._unlist(p.meta.match_id)
            return EndResult(p.meta.match_id, last.version, last.outcome)
        assert p.outcome is not None
        raise _finished_already(p.meta, p)


def _finished_already(meta: MatchMeta, p: Projection) -> FailedPrecondition:
    assert p.outcome is not None
    return FailedPrecondition(
        "game_over",
        f"match {meta.match_id} is finished already ({p.outcome.reason}): nothing was changed",
        outcome_reason=p.outcome.reason,
        current_version=str(p.version),
    )
