"""Secrets redaction: what ``reactloop._redact.redact`` hides, and what it leaves alone."""

from __future__ import annotations

import json
import logging
import secrets
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reactloop._redact import (
    PLACEHOLDER,
    add_secret,
    install_log_filter,
    redact,
    redact_exception,
)
from reactloop.errors import ModelHTTPError


def _key(prefix: str = "key") -> str:
    return f"{prefix}-{secrets.token_hex(12)}"  # unique, so registrations do not interfere


def test_registered_values_are_replaced_everywhere_in_the_text() -> None:
    key = _key()
    add_secret(key)
    text = f"server said: bad key {key} (again: {key})"
    assert redact(text) == f"server said: bad key {PLACEHOLDER} (again: {PLACEHOLDER})"


def test_short_values_are_not_registered() -> None:
    add_secret("ollama")
    add_secret("1234567")
    add_secret(None)
    assert redact("ollama and 1234567 stay") == "ollama and 1234567 stay"


@pytest.mark.parametrize("var", ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY",
                                 "GOOGLE_API_KEY"])
def test_key_variables_are_redacted_without_registration(monkeypatch: pytest.MonkeyPatch,
                                                         var: str) -> None:
    key = _key("plain")  # no recognisable shape: only the variable can give it away
    monkeypatch.setenv(var, key)
    assert key not in redact(f"echo: {key}")


@pytest.mark.parametrize(("text", "expected"), [
    ("Authorization: Bearer abcdef123456", f"Authorization: Bearer {PLACEHOLDER}"),
    ('{"authorization": "Bearer abcdef123456"}', f'{{"authorization": "Bearer {PLACEHOLDER}"}}'),
    ("{'Authorization': 'Basic dXNlcjpwYXNz'}", f"{{'Authorization': '{PLACEHOLDER}'}}"),
    ("x-api-key: whatever-it-is", f"x-api-key: {PLACEHOLDER}"),
    ('"x-goog-api-key": "abc"', f'"x-goog-api-key": "{PLACEHOLDER}"'),
    ("GET /v1beta/models?key=abc123&alt=sse", f"GET /v1beta/models?key={PLACEHOLDER}&alt=sse"),
    ("token sk-proj-AbCdEfGhIjKlMnOpQrSt was rejected", f"token {PLACEHOLDER} was rejected"),
    ("sk-ant-api03-AbCdEfGhIjKlMnOpQrSt", PLACEHOLDER),
    ("AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW", PLACEHOLDER),
])
def test_credential_shapes_are_redacted(text: str, expected: str) -> None:
    assert redact(text) == expected


@pytest.mark.parametrize("text", [
    "set the OPENAI_API_KEY environment variable or pass api_key=...",
    "Request had invalid authentication credentials.",
    "a bearer token and basic auth",
    "the task-abcdefghijklmnopqrstuvwx is done",
    "",
])
def test_prose_is_left_alone(text: str) -> None:
    assert redact(text) == text


@given(st.dictionaries(st.sampled_from(["Authorization", "x-api-key", "note", "api_key"]),
                       st.text(max_size=30), max_size=3),
       st.sampled_from(["Bearer tok-123456789", "secret-value-9876", "sk-" + "a" * 20]))
def test_redacted_json_stays_json_and_hides_the_credential(body: dict[str, str],
                                                           credential: str) -> None:
    # a server echoing the request's headers inside a JSON error body: the header spelling
    # arrives JSON-escaped (Authorization: \"Bearer ...\"), which must not break the JSON
    body["error"] = f'upstream said: {{"Authorization": "{credential}"}}'
    text = json.dumps(body)
    clean = redact(text)
    assert credential not in clean
    assert json.loads(clean).keys() == body.keys()


def test_redact_exception_cleans_message_and_cuts_a_leaking_chain() -> None:
    key = _key()
    add_secret(key)
    try:
        try:
            raise ValueError(f"raw body with {key}")
        except ValueError as inner:
            raise ModelHTTPError(401, f"bad key {key}") from inner
    except ModelHTTPError as exc:
        error = exc
    assert redact_exception(error) is error
    assert key not in str(error) and key not in error.message
    assert error.status_code == 401 and error.retryable is False
    assert error.__cause__ is None and error.__suppress_context__


def test_log_records_are_redacted(caplog: pytest.LogCaptureFixture) -> None:
    key = _key()
    add_secret(key)
    install_log_filter()  # idempotent; already installed at import
    caplog.set_level(logging.DEBUG, logger="reactloop")
    try:
        raise RuntimeError(f"failure quoting {key}")
    except RuntimeError:
        logging.getLogger("reactloop").exception("call failed with %s", key)
    logging.getLogger("reactloop.mcp").warning("server echoed Authorization: Bearer %s", key)
    assert len(caplog.records) == 2
    assert key not in caplog.text
    assert "call failed with [REDACTED]" in caplog.text
    assert "RuntimeError: failure quoting [REDACTED]" in caplog.text


def test_every_reactloop_logger_redacts() -> None:
    # a logger's filters do not see its children's records: each reactloop logger needs its own
    code = (
        "import importlib, logging, pkgutil, reactloop\n"
        "from reactloop._redact import RedactingFilter\n"
        "for info in pkgutil.walk_packages(reactloop.__path__, 'reactloop.'):\n"
        "    if info.name.endswith('__main__'):\n"
        "        continue\n"
        "    try:\n"
        "        importlib.import_module(info.name)\n"
        "    except ImportError:\n"
        "        pass  # an optional extra that is not installed\n"
        "names = [n for n, o in logging.Logger.manager.loggerDict.items()\n"
        "         if n.split('.')[0] == 'reactloop' and isinstance(o, logging.Logger)]\n"
        "assert 'reactloop' in names, names\n"
        "missing = [n for n in names if not any(isinstance(f, RedactingFilter)\n"
        "                                        for f in logging.getLogger(n).filters)]\n"
        "assert not missing, f'use reactloop._redact.get_logger for {missing}'\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=False, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
