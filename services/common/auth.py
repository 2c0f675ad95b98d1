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

from services.common.errors import Unauthenticated

DEV_SECRET = "tabletop-dev-secret-change-me-0123456789"
"""Used when ``TABLETOP_JWT_SECRET`` is unset: fine on a laptop, never in production."""

ROLE_PLAYER = "player"
ROLE_SERVICE = "service"
ROLE_ORGANISER = "organiser"  # may create and run tournaments; plays as a player
_ROLES = (ROLE_PLAYER, ROLE_SERVICE, ROLE_ORGANISER)
GUEST_PREFIX = "guest:"
BOT_PREFIX = "bot:"
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
        )

    @property
    def uses_dev_secret(self) -> bool:
        return self.algorithm in _SYMMETRIC and self.secret == DEV_SECRET

    def _signing_key(self) -> str:
        if self.algorithm in _SYMMETRIC:
            return self.secret
        if not self.private_key:
            raise RuntimeError(f"{self.algorithm} tokens need TABLETOP_JWT_PRIVATE_KEY to sign")
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

    def guest(self, name: str = "") -> tuple[str, str, int]:
        """A fresh guest: ``(player_id, token, expires_at_unix)``."""
        player_id = GUEST_PREFIX + secrets.token_hex(8)
        extra = {"name": name[:64]} if name else None
        token = self.issue(player_id, extra=extra)
        return player_id, token, int(time.time()) + self.settings.guest_ttl_s

    def from_metadata(self, metadata: Any) -> Principal:
        """The principal of gRPC invocation metadata (``authorization: Bearer ...``)."""
        return self.verify(bearer_token(metadata))


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


def is_bot(player_id: str) -> bool:
    return player_id.startswith(BOT_PREFIX)
