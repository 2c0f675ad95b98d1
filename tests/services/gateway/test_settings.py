"""The gateway's settings from the environment."""

from __future__ import annotations

from services.gateway.settings import GatewaySettings

SECRET = {"TABLETOP_JWT_SECRET": "test-secret-for-the-gateway-0123456789abcdef"}


def test_trusted_proxies_are_a_comma_separated_list_defaulting_to_loopback() -> None:
    assert GatewaySettings.from_env(SECRET).trusted_proxies == ("127.0.0.1",)
    settings = GatewaySettings.from_env(
        {**SECRET, "TABLETOP_GATEWAY_TRUSTED_PROXIES": " 10.0.0.0/8, 192.168.1.4 ,"}
    )
    assert settings.trusted_proxies == ("10.0.0.0/8", "192.168.1.4")
