"""One set of secret-name rules for the whole project: the command environment, the values
``reactloop serve`` and the logs redact, and one home for URL masking (reactloop._redact)."""

from __future__ import annotations

import logging
import secrets

import pytest

from reactloop._redact import (
    SAFE_ENV_NAMES,
    environ_secret_values,
    is_secret_name,
    redact,
    redact_url,
    strip_secrets,
)

ORDINARY = {  # values that look like nothing in particular: only the names give them away
    "DB_PASSWORD": "correcthorse{}",
    "GITHUB_PAT": "plainvalue{}",
    "SERVICE_TOKEN": "blue-river-{}",
}


@pytest.fixture
def environ(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    values = {k: v.format(secrets.randbelow(10**6)) for k, v in ORDINARY.items()}
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    return values


def test_values_of_variables_named_like_secrets_are_redacted(environ: dict[str, str]) -> None:
    text = "settings: " + ", ".join(f"{k}={v}" for k, v in environ.items())
    clean = redact(text)
    assert not any(v in clean for v in environ.values())
    assert clean.count("[REDACTED]") == 3


def test_a_variable_set_later_is_redacted_too(monkeypatch: pytest.MonkeyPatch) -> None:
    value = f"later{secrets.token_hex(4)}"
    assert redact(f"x {value}") == f"x {value}"
    monkeypatch.setenv("LATE_API_TOKEN", value)
    assert redact(f"x {value}") == "x [REDACTED]"
    monkeypatch.delenv("LATE_API_TOKEN")
    assert redact(f"x {value}") == f"x {value}"


def test_log_records_hide_them(environ: dict[str, str],
                               caplog: pytest.LogCaptureFixture) -> None:
    from reactloop._redact import get_logger

    with caplog.at_level(logging.INFO, logger="reactloop.test_names"):
        get_logger("reactloop.test_names").info("connecting with %s", environ["DB_PASSWORD"])
    assert environ["DB_PASSWORD"] not in caplog.text and "[REDACTED]" in caplog.text


def test_the_server_and_the_command_filter_use_the_same_rules(
        environ: dict[str, str]) -> None:
    from reactloop.serve._security import secret_values
    from reactloop.tools import workspace

    env = {**environ, "PATH": "/usr/bin:/bin", "PWD": "/home/someone/project"}
    assert set(environ.values()) <= set(secret_values(env))
    assert "/home/someone/project" not in secret_values(env)  # PWD: on the allow-list
    assert set(strip_secrets(env)) == {"PATH", "PWD"}
    assert workspace.is_secret_name is is_secret_name  # one home, re-exported
    assert workspace.strip_secrets is strip_secrets
    assert workspace.SAFE_ENV_NAMES is SAFE_ENV_NAMES


def test_short_values_and_allowed_names_are_not_redacted() -> None:
    assert environ_secret_values({"MY_TOKEN": "short", "OLDPWD": "/home/someone/x",
                                  "PATH": "/usr/local/bin"}) == frozenset()
    assert all(not is_secret_name(n) for n in ("PWD", "XDG_SESSION_TYPE", "PATH"))


def test_connection_urls_are_masked_in_one_place() -> None:
    from reactloop.cli._ids import store_label
    from reactloop.sessions import _postgres

    url = "postgresql://app:s3cret@db.internal:5432/agents?sslmode=require&password=p2"
    assert redact_url(url) == ("postgresql://app:***@db.internal:5432/agents"
                               "?sslmode=require&password=***")
    assert _postgres.redact is redact_url

    class Store:
        pass

    store = Store()
    store.url = url  # type: ignore[attr-defined]
    assert store_label(store) == redact_url(url)
