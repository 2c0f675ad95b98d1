"""The CLI's saved identity: one guest token per match service, kept between
commands in the user's config directory so ``matches``, ``play --resume`` and
``watch`` act for the same player.

The file is ``$XDG_CONFIG_HOME/tabletop/credentials.json`` (``~/.config/...``
when the variable is unset), mode 0600 in a 0700 directory, written whole
(a temporary file renamed over it). Entries are keyed by the match service's
address, since a token is only good on the stack that signed it.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import jwt

REFRESH_BEFORE_S = 24 * 3600
"""A saved token with less than this left is renewed before use."""


def config_dir(env: dict[str, str] | None = None) -> Path:
    env = dict(os.environ) if env is None else env
    base = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME") or Path.home()) / ".config")
    return Path(base) / "tabletop"


@dataclass(frozen=True)
class Identity:
    player_id: str
    token: str
    name: str = ""

    @property
    def expires_at(self) -> float:
        """The token's ``exp`` (read, not verified: the server verifies)."""
        try:
            claims = jwt.decode(self.token, options={"verify_signature": False})
        except jwt.InvalidTokenError:
            return 0.0
        exp = claims.get("exp")
        return float(exp) if isinstance(exp, int | float) else 0.0

    def needs_refresh(self, now: float | None = None) -> bool:
        now = time.time() if now is None else now
        return self.expires_at - now < REFRESH_BEFORE_S


class Credentials:
    """The saved identities, one per match service address."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or config_dir() / "credentials.json"

    def _load(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError):
            return {}  # unreadable or corrupt: as if signed out (rewritten on login)
        return data if isinstance(data, dict) else {}

    def get(self, address: str) -> Identity | None:
        entry = self._load().get(address)
        if not isinstance(entry, dict):
            return None
        try:
            return Identity(
                player_id=str(entry["player_id"]),
                token=str(entry["token"]),
                name=str(entry.get("name", "")),
            )
        except KeyError:
            return None

    def put(self, address: str, identity: Identity) -> None:
        data = self._load()
        data[address] = asdict(identity)
        self._write(data)

    def remove(self, address: str) -> Identity | None:
        data = self._load()
        found = self.get(address)
        if data.pop(address, None) is not None:
            self._write(data)
        return found

    def _write(self, data: dict[str, Any]) -> None:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".credentials-", dir=self.path.parent)
        try:
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(data, f, indent=2, sort_keys=True)
                f.write("\n")
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
