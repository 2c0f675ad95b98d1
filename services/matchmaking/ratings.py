"""Ratings: openskill per game, kept in Redis.

The model is openskill's Bradley-Terry (full pairing): every pair of rated
players in a match is one comparison, so shared placings are rated as ties
and a placing behind a tie is rated as a loss to both. (openskill 6's
Plackett-Luce rates the player just behind two tied winners the same as the
winners, which is wrong for shared placings; see the ratings tests.)

``Ratings.record(fact)`` rates one ``MatchFinished`` fact exactly once: the
ratings of its players and the marker ``mm:rated:<match_id>`` are written in
one optimistic transaction (WATCH on the marker and every rating touched), so a
fact delivered twice, or two consumers racing, change the ratings once.

Who is rated: every seat that is not a bot (``bots[s]`` or an id starting with
``bot:``) and not a guest (``guest:``), ranked among themselves by the match's
ranks, shared placings as ties. A match with fewer than two rated players
changes nothing (beating bots does not farm rating).
"""

from __future__ import annotations

from dataclasses import dataclass

import msgspec
import redis.asyncio as redis
from openskill.models import BradleyTerryFull
from redis.exceptions import WatchError

_MODEL = BradleyTerryFull()
DEFAULT_MU: float = _MODEL.mu
DEFAULT_SIGMA: float = _MODEL.sigma


class MatchFinished(msgspec.Struct, frozen=True):
    """The fact the match service publishes when a match ends (JSON)."""

    match_id: str
    game: str
    players: list[str]
    bots: list[bool]
    ranks: list[int]
    scores: list[float]
    reason: str
    finished_at: str


class InvalidFact(ValueError):
    """A MatchFinished fact that cannot be rated (lengths differ, no players...)."""


_decoder = msgspec.json.Decoder(MatchFinished)


def decode_fact(data: bytes) -> MatchFinished:
    try:
        fact = _decoder.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError) as e:
        raise InvalidFact(str(e)) from None
    n = len(fact.players)
    if not fact.match_id or not fact.game or n == 0:
        raise InvalidFact("match_id, game and players are required")
    if len(fact.ranks) != n or (fact.bots and len(fact.bots) != n):
        raise InvalidFact(f"{n} players but {len(fact.ranks)} ranks and {len(fact.bots)} bot flags")
    return fact


ADJUDICATED_PREFIX = "adjudicated:"
"""The outcome reason of a match a service ended from outside (the match
service's ``EndMatch``: ``adjudicated:<reason>``)."""


def is_rated_player(player: str) -> bool:
    return not player.startswith(("bot:", "guest:"))


@dataclass(frozen=True, slots=True)
class PlayerRating:
    player_id: str
    game: str
    mu: float = DEFAULT_MU
    sigma: float = DEFAULT_SIGMA
    matches: int = 0

    @property
    def ordinal(self) -> float:
        return self.mu - 3.0 * self.sigma


def rating_key(game: str, player: str) -> str:
    return f"mm:r:{game}:{player}"


def leaderboard_key(game: str) -> str:
    return f"mm:lb:{game}"


def marker_key(match_id: str) -> str:
    return f"mm:rated:{match_id}"


def _parse(game: str, player: str, h: dict) -> PlayerRating:
    if not h:
        return PlayerRating(player, game)
    get = {(k.decode() if isinstance(k, bytes) else k): v for k, v in h.items()}
    return PlayerRating(player, game, float(get["mu"]), float(get["sigma"]), int(get["matches"]))


def rated_seats(fact: MatchFinished) -> list[int]:
    """The seats a finished match rates: people with rated ids (no bots, no
    guests), each player once; fewer than two means nobody is rated. A
    match a service ended from outside (reason ``adjudicated:...``, e.g. a
    tournament's round deadline) rates nobody: it was not played to its end,
    and its ranks are a rule's, not the board's."""
    if fact.reason.startswith(ADJUDICATED_PREFIX):
        return []
    seats: list[int] = []
    seen: set[str] = set()
    for s, p in enumerate(fact.players):
        bot = fact.bots[s] if fact.bots else False
        if not bot and is_rated_player(p) and p not in seen:
            seats.append(s)
            seen.add(p)
    return seats if len(seats) >= 2 else []


class Ratings:
    def __init__(self, client: redis.Redis, marker_ttl_s: float = 30 * 86400.0) -> None:
        self.redis = client
        self.marker_ttl_s = marker_ttl_s

    async def get(self, game: str, player: str) -> PlayerRating:
        return _parse(game, player, await self.redis.hgetall(rating_key(game, player)))

    async def get_many(self, game: str, players: list[str]) -> list[PlayerRating]:
        async with self.redis.pipeline(transaction=False) as pipe:
            for p in players:
                pipe.hgetall(rating_key(game, p))
            rows = await pipe.execute()
        return [_parse(game, p, h) for p, h in zip(players, rows, strict=True)]

    async def leaderboard(self, game: str, limit: int) -> list[PlayerRating]:
        players = [
            p.decode() if isinstance(p, bytes) else p
            for p in await self.redis.zrevrange(leaderboard_key(game), 0, limit - 1)
        ]
        return await self.get_many(game, players) if players else []

    async def record(self, fact: MatchFinished) -> bool:
        """Rate a finished match; False if it was rated before (a duplicate).
        Only ``rated_seats(fact)`` are rated (none with fewer than two)."""
        seats = rated_seats(fact)
        marker = marker_key(fact.match_id)
        ttl = max(1, int(self.marker_ttl_s))
        if len(seats) < 2:
            return bool(await self.redis.set(marker, "1", nx=True, ex=ttl))
        players = [fact.players[s] for s in seats]
        keys = [rating_key(fact.game, p) for p in players]
        async with self.redis.pipeline(transaction=True) as pipe:
            while True:
                try:
                    await pipe.watch(marker, *keys)
                    if await pipe.exists(marker):
                        await pipe.reset()
                        return False
                    old = []
                    for p, k in zip(players, keys, strict=True):
                        old.append(_parse(fact.game, p, await pipe.hgetall(k)))
                    new = _MODEL.rate(
                        [[_MODEL.rating(mu=r.mu, sigma=r.sigma)] for r in old],
                        ranks=[fact.ranks[s] for s in seats],
                    )
                    pipe.multi()
                    for r, (team,) in zip(old, new, strict=True):
                        k = rating_key(fact.game, r.player_id)
                        pipe.hset(
                            k,
                            mapping={"mu": team.mu, "sigma": team.sigma, "matches": r.matches + 1},
                        )
                        pipe.zadd(
                            leaderboard_key(fact.game), {r.player_id: team.mu - 3 * team.sigma}
                        )
                    pipe.set(marker, "1", ex=ttl)
                    await pipe.execute()
                    return True
                except WatchError:
                    continue
