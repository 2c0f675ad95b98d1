"""Tokens: issued, verified, refused."""

from __future__ import annotations

import time

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from services.common.auth import (
    DEV_SECRET,
    AuthSettings,
    Tokens,
    Unauthenticated,
    bearer_token,
)

SETTINGS = AuthSettings(secret="s" * 64)


def test_a_token_round_trips_with_subject_and_role() -> None:
    tokens = Tokens(SETTINGS)
    p = tokens.verify(tokens.issue("guest:1"))
    assert (p.subject, p.role, p.is_service) == ("guest:1", "player", False)
    s = tokens.verify(tokens.issue("svc:mm", role="service"))
    assert s.is_service


@pytest.mark.parametrize(
    ("token", "reason"),
    [
        ("", "missing_token"),
        ("not.a.jwt", "invalid_token"),
        (Tokens(AuthSettings(secret="x" * 40)).issue("guest:1"), "invalid_token"),
        (Tokens(SETTINGS).issue("guest:1", ttl_s=-60), "token_expired"),
        (jwt.encode({"sub": "guest:1", "exp": time.time() + 60}, "s" * 64), "invalid_token"),
        (
            jwt.encode({"sub": "g", "iat": 1, "exp": 2**40, "iss": "tabletop"}, "s" * 64, "HS384"),
            "invalid_token",
        ),
    ],
    ids=["none", "garbage", "forged", "expired", "no-iat-no-iss", "other-alg"],
)
def test_bad_tokens_are_refused(token: str, reason: str) -> None:
    with pytest.raises(Unauthenticated) as e:
        Tokens(SETTINGS).verify(token)
    assert e.value.reason == reason


def test_a_none_algorithm_token_is_refused() -> None:
    token = jwt.encode({"sub": "guest:1", "iat": 1, "exp": 2**40, "iss": "tabletop"}, None, "none")
    with pytest.raises(Unauthenticated):
        Tokens(SETTINGS).verify(token)


def test_asymmetric_keys_sign_with_the_private_and_verify_with_the_public_key() -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    public = (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    signer = Tokens(AuthSettings(algorithm="ES256", private_key=private, public_key=public))
    verifier = Tokens(AuthSettings(algorithm="ES256", public_key=public))
    assert verifier.verify(signer.issue("guest:9")).subject == "guest:9"


def test_guests_get_distinct_ids_and_working_tokens() -> None:
    tokens = Tokens(SETTINGS)
    (a, ta, _), (b, tb, _) = tokens.guest("Ann"), tokens.guest()
    assert a != b and a.startswith("guest:") and b.startswith("guest:")
    assert tokens.verify(ta).subject == a and tokens.verify(tb).subject == b


def test_settings_from_the_environment_warn_about_the_dev_secret() -> None:
    with pytest.warns(UserWarning, match="TABLETOP_JWT_SECRET"):
        s = AuthSettings.from_env({})
    assert s.secret == DEV_SECRET and s.uses_dev_secret
    s = AuthSettings.from_env({"TABLETOP_JWT_SECRET": "k" * 40})
    assert s.secret == "k" * 40 and not s.uses_dev_secret


def test_bearer_metadata_is_parsed() -> None:
    assert bearer_token([("authorization", "Bearer abc")]) == "abc"
    assert bearer_token([("x-other", "1")]) == ""
    with pytest.raises(Unauthenticated):
        bearer_token([("authorization", "Basic abc")])


def test_a_verified_token_is_remembered_only_until_it_expires() -> None:
    tokens = Tokens(AuthSettings(secret="s" * 64, leeway_s=0))
    token = tokens.issue("guest:1", ttl_s=1)
    assert tokens.verify(token).subject == "guest:1"
    assert tokens.verify(token) is tokens.verify(token)  # from memory
    time.sleep(1.05 + (int(time.time()) + 1 - time.time()))
    with pytest.raises(Unauthenticated) as e:
        tokens.verify(token)
    assert e.value.reason == "token_expired"
