"""The reads: one match as the caller may see it, and a player's matches."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from services.common.auth import Principal
from services.match.model import Projection
from services.match.projections import Projections


@dataclass(frozen=True, slots=True)
class MatchView:
    projection: Projection
    your_seat: int | None
    view: str
    legal_moves: tuple[str, ...] = ()


class Reads(Projections):
    async def get(
        self, principal: Principal, match_id: str, *, include_view: bool = True
    ) -> MatchView:
        """``include_view=False``: ``view`` is empty (no view asked of the rules)."""
        p = await self.load(match_id, fresh=True)
        seat = self.viewer_seat(principal, p.meta)
        view = await self._rules(self.rules.view(p.state, seat)) if include_view else ""
        legal: tuple[str, ...] = ()
        if seat is not None and p.outcome is None and seat in p.awaiting:
            legal = await self._rules(self.rules.legal_moves(p.state, seat))
        return MatchView(projection=p, your_seat=seat, view=view, legal_moves=legal)

    async def list_matches(self, player: str, status: str | None) -> list[Any]:
        # the player's matches that finished here lately are marked first
        await self.finished_of(player)
        return await self.index.matches_of(player, status)
