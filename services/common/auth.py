"""Identity: signed tokens (JWT) for players and services.

A token's ``sub`` claim is the player id (``guest:...`` for guests, ``bot:...``
for bots); the ``role`` claim is ``"player"`` (default) or ``"service"`` (other
services, e.g. matchmaking creating matches). Tokens are HS256 with a shared
secret from ``TABLETOP_JWT_SECRET`` by default; asymmetric keys (RS256, ES256,
EdDSA) are configured with ``TABLETOP_JWT_ALGORITHM`` and
``TABLETOP_JWT_PUBLIC_KEY`` / ``TABLETOP_JWT_PRIVATE_KEY`` (PEM text, or
``@path`` to read a file). A service that only verifies needs only the public key.

gRPC callers send ``authorization: Bearer <token>`` metadata.
"""

from __future__ import annotations

import os
import secrets
import time
import warnings
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import jwt

from services.common.errors import FailedPrecondition, PermissionDenied, Unauthenticated

DEV_SECRET = "tabletop-dev-secret-change-me-0123456789"
"""Used when ``TABLETOP_JWT_SECRET`` is unset: fine on a laptop, never in production."""

ROLE_PLAYER = "player"
ROLE_SERVICE = "service"
ROLE_ORGANISER = "organiser"  # may create and run tournaments; plays as a player
_ROLES = (ROLE_PLAYER, ROLE_SERVICE, ROLE_ORGANISER)
GUEST_PREFIX = "guest:"
BOT_PREFIX = "bot:"
MAX_PLAYER_ID_CHARS = 200
"""Longest player id a match or a ticket accepts (the same rule everywhere)."""
PARTY_AUDIENCE = "tabletop:party"
"""The ``aud`` of a party token. A bearer check passes no audience, and PyJWT
refuses any token that has one: a party token never authenticates a call."""
_SYMMETRIC = {"HS256", "HS384", "HS512"}


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling: the token's subject and role."""

    subject: str
    role: str = ROLE_PLAYER
    claims: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def is_service(self) -> bool:
        return self.role == ROLE_SERVICE


def _key_text(value: str) -> str:
    if value.startswith("@"):
        with open(value[1:], encoding="utf-8") as f:
            return f.read()
    return value


@dataclass(frozen=True, slots=True)
class AuthSettings:
    """How tokens are signed and checked. ``from_env`` reads ``TABLETOP_JWT_*``."""

    algorithm: str = "HS256"
    secret: str = DEV_SECRET
    private_key: str = ""
    public_key: str = ""
    issuer: str = "tabletop"
    guest_ttl_s: int = 7 * 24 * 3600
    service_ttl_s: int = 3600
    leeway_s: int = 5
    refresh_grace_s: int = 30 * 24 * 3600
    """How long after expiry a token may still be exchanged for a fresh one."""

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> AuthSettings:
        env = os.environ if env is None else env
        algorithm = env.get("TABLETOP_JWT_ALGORITHM", "HS256")
        secret = env.get("TABLETOP_JWT_SECRET", "")
        if algorithm in _SYMMETRIC and not secret:
            warnings.warn(
                "TABLETOP_JWT_SECRET is not set: using the development secret; "
                "anyone can forge tokens. Set it outside local development.",
                stacklevel=2,
            )
            secret = DEV_SECRET
        return cls(
            algorithm=algorithm,
            secret=secret,
            private_key=_key_text(env.get("TABLETOP_JWT_PRIVATE_KEY", "")),
            public_key=_key_text(env.get("TABLETOP_JWT_PUBLIC_KEY", "")),
            issuer=env.get("TABLETOP_JWT_ISSUER", "tabletop"),
            guest_ttl_s=int(env.get("TABLETOP_GUEST_TTL_S", 7 * 24 * 3600)),
            refresh_grace_s=int(env.get("TABLETOP_JWT_REFRESH_GRACE_S", 30 * 24 * 3600)),
        )

    @property
    def uses_dev_secret(self) -> bool:
        return self.algorithm in _SYMMETRIC and self.secret == DEV_SECRET

    @property
    def can_sign(self) -> bool:
        """Whether tokens can be issued here (a symmetric secret, or a private key)."""
        return self.algorithm in _SYMMETRIC or bool(self.private_key)

    def _signing_key(self) -> str:
        if self.algorithm in _SYMMETRIC:
            return self.secret
        if not self.private_key:
            # a replica that only verifies (no private key): FAILED_PRECONDITION
            raise FailedPrecondition(
                "signing_unavailable",
                f"this server only verifies {self.algorithm} tokens and cannot issue any "
                "(TABLETOP_JWT_PRIVATE_KEY is not set here)",
            )
        return self.private_key

    def _verifying_key(self) -> str:
        if self.algorithm in _SYMMETRIC:
            return self.secret
        if not self.public_key:
            raise RuntimeError(f"{self.algorithm} tokens need TABLETOP_JWT_PUBLIC_KEY to verify")
        return self.public_key


class Tokens:
    """Issue and verify tokens with one ``AuthSettings``.

    Verified tokens are remembered (up to ``cache_size``, until they expire),
    so a client sending the same token with every move pays for the signature
    check once."""

    def __init__(self, settings: AuthSettings, *, cache_size: int = 10_000) -> None:
        self.settings = settings
        self.cache_size = cache_size
        self._verified: OrderedDict[str, tuple[Principal, float]] = OrderedDict()

    def issue(
        self,
        subject: str,
        *,
        role: str = ROLE_PLAYER,
        ttl_s: int | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> str:
        if not subject:
            raise ValueError("a token needs a subject")
        now = int(time.time())
        if ttl_s is None:
            ttl_s = (
                self.settings.service_ttl_s if role == ROLE_SERVICE else self.settings.guest_ttl_s
            )
        claims: dict[str, Any] = {
            **(extra or {}),
            "sub": subject,
            "role": role,
            "iss": self.settings.issuer,
            "iat": now,
            "exp": now + ttl_s,
        }
        return jwt.encode(claims, self.settings._signing_key(), algorithm=self.settings.algorithm)

    def verify(self, token: str) -> Principal:
        """The principal of a valid token; ``Unauthenticated`` otherwise."""
        if not token:
            raise Unauthenticated("missing_token", "no token")
        known = self._verified.get(token)
        if known is not None:
            principal, expires = known
            if time.time() < expires:
                self._verified.move_to_end(token)
                return principal
            del self._verified[token]
        principal = self._verify(token)
        if self.cache_size > 0:
            self._verified[token] = (principal, float(principal.claims["exp"]))
            while len(self._verified) > self.cache_size:
                self._verified.popitem(last=False)
        return principal

    def _verify(self, token: str) -> Principal:
        try:
            claims = jwt.decode(
                token,
                self.settings._verifying_key(),
                algorithms=[self.settings.algorithm],
                issuer=self.settings.issuer,
                leeway=self.settings.leeway_s,
                options={"require": ["sub", "exp", "iat"]},
            )
        except jwt.ExpiredSignatureError:
            raise Unauthenticated("token_expired", "the token has expired") from None
        except jwt.InvalidTokenError as e:
            raise Unauthenticated("invalid_token", f"invalid token: {e}") from None
        subject = claims.get("sub")
        role = claims.get("role", ROLE_PLAYER)
        if not isinstance(subject, str) or not subject or role not in _ROLES:
            raise Unauthenticated("invalid_token", "the token has a bad subject or role")
        return Principal(subject=subject, role=role, claims=claims)

    def party_token(self, member: str, leader: str, game: str, ttl_s: int = 300) -> tuple[str, int]:
        """``member``'s consent to be queued for ``game`` in ``leader``'s party:
        ``(token, expires_at_unix)``. Single use (the matchmaker remembers its
        ``jti``); never valid as a bearer token (it has an audience)."""
        now = int(time.time())
        claims = {
            "sub": member,
            "leader": leader,
            "game": game,
            "aud": PARTY_AUDIENCE,
            "jti": secrets.token_hex(12),
            "iss": self.settings.issuer,
            "iat": now,
            "exp": now + ttl_s,
        }
        token = jwt.encode(claims, self.settings._signing_key(), algorithm=self.settings.algorithm)
        return token, now + ttl_s

    def verify_party_token(self, token: str) -> Mapping[str, Any]:
        """The claims of a valid party token (``sub`` the member, ``leader``,
        ``game``, ``jti``); ``PermissionDenied("bad_party_token")`` otherwise."""
        try:
            claims = jwt.decode(
                token,
                self.settings._verifying_key(),
                algorithms=[self.settings.algorithm],
                issuer=self.settings.issuer,
                audience=PARTY_AUDIENCE,
                leeway=self.settings.leeway_s,
                options={"require": ["sub", "exp", "iat", "jti", "aud"]},
            )
        except jwt.ExpiredSignatureError:
            raise PermissionDenied("party_token_expired", "the party token has expired") from None
        except jwt.InvalidTokenError as e:
            raise PermissionDenied("bad_party_token", f"invalid party token: {e}") from None
        if not all(isinstance(claims.get(k), str) for k in ("sub", "leader", "game", "jti")):
            raise PermissionDenied("bad_party_token", "the party token lacks its claims")
        return claims

    def refresh(self, token: str) -> tuple[Principal, str, int]:
        """A fresh token for the subject and role of ``token``:
        ``(principal, token, expires_at_unix)``.

        ``token`` must carry a valid signature and issuer; it may have expired,
        but by no more than ``refresh_grace_s`` (``Unauthenticated`` with
        ``refresh_window_passed`` otherwise). Claims other than the timestamps
        (a guest's name) are carried over."""
        if not token:
            raise Unauthenticated("missing_token", "no token")
        try:
            claims = jwt.decode(
                token,
                self.settings._verifying_key(),
                algorithms=[self.settings.algorithm],
                issuer=self.settings.issuer,
                options={"require": ["sub", "exp", "iat"], "verify_exp": False},
            )
        except jwt.InvalidTokenError as e:
            raise Unauthenticated("invalid_token", f"invalid token: {e}") from None
        exp = claims.get("exp")
        if not isinstance(exp, int | float):
            raise Unauthenticated("invalid_token", "the token has a bad expiry")
        if time.time() > exp + self.settings.refresh_grace_s:
            raise Unauthenticated(
                "refresh_window_passed",
                f"the token expired more than {self.settings.refresh_grace_s} s ago: sign in again",
            )
        subject, role = claims.get("sub"), claims.get("role", ROLE_PLAYER)
        if not isinstance(subject, str) or not subject or role not in (ROLE_PLAYER, ROLE_SERVICE):
            raise Unauthenticated("invalid_token", "the token has a bad subject or role")
        extra = {k: v for k, v in claims.items() if k not in ("sub", "role", "iss", "iat", "exp")}
        fresh = self.issue(subject, role=role, extra=extra)
        principal = Principal(subject=subject, role=role, claims=claims)
        return principal, fresh, int(jwt.decode(fresh, options={"verify_signature": False})["exp"])

    def guest(self, name: str = "") -> tuple[str, str, int]:
        """A fresh guest: ``(player_id, token, expires_at_unix)``."""
        player_id = GUEST_PREFIX + secrets.token_hex(8)
        extra = {"name": name[:64]} if name else None
        token = self.issue(player_id, extra=extra)
        return player_id, token, int(time.time()) + self.settings.guest_ttl_s

    def from_metadata(self, metadata: Any) -> Principal:
        """The principal of gRPC invocation metadata (``authorization: Bearer ...``)."""
        return self.verify(bearer_token(metadata))


class ServiceToken:
    """A service token (``role: "service"``) for one caller, issued again
    before it expires. ``ServiceToken(tokens, "service:match")()`` is the token."""

    def __init__(self, tokens: Tokens, subject: str, ttl_s: int = 3600) -> None:
        self.tokens = tokens
        self.subject = subject
        self.ttl_s = ttl_s
        self._token = ""
        self._renew_at = 0.0

    def __call__(self) -> str:
        now = time.time()
        if now >= self._renew_at:
            self._token = self.tokens.issue(self.subject, role=ROLE_SERVICE, ttl_s=self.ttl_s)
            self._renew_at = now + self.ttl_s / 2
        return self._token

    def metadata(self) -> tuple[tuple[str, str], ...]:
        return bearer_metadata(self())


def bearer_token(metadata: Any) -> str:
    """The token of an ``authorization: Bearer <token>`` entry, or ``""``."""
    for key, value in metadata or ():
        if key.lower() == "authorization":
            if isinstance(value, bytes):
                value = value.decode("latin-1")
            scheme, _, token = value.partition(" ")
            if scheme.lower() != "bearer" or not token.strip():
                raise Unauthenticated("invalid_token", "authorization must be 'Bearer <token>'")
            return token.strip()
    return ""


def bearer_metadata(token: str) -> tuple[tuple[str, str], ...]:
    """Call metadata carrying ``token`` (for clients and tests)."""
    return (("authorization", f"Bearer {token}"),)


def valid_player_id(player_id: str) -> bool:
    """1..``MAX_PLAYER_ID_CHARS`` characters, none of them a control character."""
    return 0 < len(player_id) <= MAX_PLAYER_ID_CHARS and player_id.isprintable()


def is_bot(player_id: str) -> bool:
    return player_id.startswith(BOT_PREFIX)
