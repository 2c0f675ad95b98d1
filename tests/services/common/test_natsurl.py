"""TABLETOP_NATS_URL as a list of servers."""

from __future__ import annotations

import pytest

from services.common.natsurl import nats_servers


def test_one_url_is_a_list_of_one() -> None:
    assert nats_servers("nats://127.0.0.1:4222") == ["nats://127.0.0.1:4222"]


def test_a_comma_separated_list_keeps_its_order() -> None:
    value = "nats://a:4222, nats://b:4222 ,,c:4222"
    assert nats_servers(value) == ["nats://a:4222", "nats://b:4222", "nats://c:4222"]


@pytest.mark.parametrize("value", ["", " , ,"])
def test_a_list_of_nothing_is_refused(value: str) -> None:
    with pytest.raises(ValueError, match="TABLETOP_NATS_URL"):
        nats_servers(value)
