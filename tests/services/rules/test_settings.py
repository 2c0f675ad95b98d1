import pytest

from services.rules.settings import RulesSettings


def test_settings_from_the_environment_with_overrides():
    env = {
        "TABLETOP_RULES_PORT": "0",
        "TABLETOP_RULES_WORKERS": "3",
        "TABLETOP_RULES_GRACE_SECONDS": "1.5",
    }
    s = RulesSettings.from_env(env, host="127.0.0.1")
    assert (s.port, s.workers, s.grace_seconds, s.host) == (0, 3, 1.5, "127.0.0.1")
    assert s.effective_workers() == 3
    assert RulesSettings.from_env({}).effective_workers() >= 1
    config = s.server_config(reuse_port=True)
    assert (config.port, config.reuse_port, config.grace_seconds) == (0, True, 1.5)


def test_a_bad_value_names_the_variable():
    with pytest.raises(ValueError, match="TABLETOP_RULES_PORT='http'"):
        RulesSettings.from_env({"TABLETOP_RULES_PORT": "http"})
