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
    FailedPrecondition,
    PermissionDenied,
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


def _es256_pems() -> tuple[str, str]:
    key = ec.generate_private_key(ec.SECP256R1())
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    public = (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    return private, public


def test_the_scheme_is_case_insensitive() -> None:
    for scheme in ("Bearer", "bearer", "BEARER"):
        assert bearer_token([("authorization", f"{scheme} abc")]) == "abc"


def test_exp_has_a_leeway_of_five_seconds() -> None:
    tokens = Tokens(SETTINGS)
    assert SETTINGS.leeway_s == 5
    now = int(time.time())
    claims = {"sub": "guest:1", "iss": "tabletop", "iat": now - 60}
    recent = jwt.encode({**claims, "exp": now - 2}, SETTINGS.secret, algorithm="HS256")
    assert tokens.verify(recent).subject == "guest:1"
    old = jwt.encode({**claims, "exp": now - 30}, SETTINGS.secret, algorithm="HS256")
    with pytest.raises(Unauthenticated) as e:
        tokens.verify(old)
    assert e.value.reason == "token_expired"


def test_a_verify_only_replica_cannot_sign() -> None:
    _private, public = _es256_pems()
    verifier = Tokens(AuthSettings(algorithm="ES256", public_key=public))
    with pytest.raises(FailedPrecondition) as e:
        verifier.guest()
    assert e.value.reason == "signing_unavailable"


def test_party_tokens_are_not_bearer_tokens_and_bearer_tokens_are_not_party_tokens() -> None:
    tokens = Tokens(SETTINGS)
    party, _ = tokens.party_token("mate", "lead", "tic_tac_toe")
    claims = tokens.verify_party_token(party)
    assert (claims["sub"], claims["leader"], claims["game"]) == ("mate", "lead", "tic_tac_toe")
    with pytest.raises(Unauthenticated):
        tokens.verify(party)
    with pytest.raises(PermissionDenied):
        tokens.verify_party_token(tokens.issue("mate"))


def test_every_service_reads_the_same_token_settings() -> None:
    from services.bots.settings import BotSettings
    from services.match.settings import MatchSettings
    from services.matchmaking.settings import MatchmakingSettings

    private, public = _es256_pems()
    env = {
        "TABLETOP_JWT_ALGORITHM": "ES256",
        "TABLETOP_JWT_PUBLIC_KEY": public,
        "TABLETOP_JWT_PRIVATE_KEY": private,
        "TABLETOP_JWT_ISSUER": "us",
    }
    match = MatchSettings.from_env(env).auth
    assert MatchmakingSettings.from_env(env).auth() == match
    assert BotSettings.from_env(env).auth() == match
    token = Tokens(BotSettings.from_env(env).auth()).issue("bot:x")
    assert Tokens(MatchmakingSettings.from_env(env).auth()).verify(token).subject == "bot:x"
