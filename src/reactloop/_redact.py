"""Keep API keys out of everything reactloop prints, returns, stores or logs.

Some proxies and servers echo the request's ``Authorization`` header in their error bodies,
so a key can come back inside an error message. reactloop redacts at its boundaries: the
adapters' translated errors, retry events, run results, the CLI's output and every log record
of the ``reactloop`` loggers. What is redacted:

* every registered secret (:func:`add_secret`): the adapters register the key they use, and
  the values of the providers' key variables (:data:`KEY_ENV_VARS`) are always included;
* credential headers (``Authorization: ...``, ``x-api-key: ...``, ``x-goog-api-key: ...``,
  also in their JSON or Python-dict spelling), ``Bearer <token>``, and ``key=`` query
  parameters;
* strings shaped like provider keys (``sk-...``, ``sk-ant-...``, Google's ``AIza...``).

This module is the bottom layer: it imports nothing from reactloop.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import threading
import traceback
from collections.abc import Iterable

__all__ = [
    "KEY_ENV_VARS",
    "MIN_SECRET_LENGTH",
    "PLACEHOLDER",
    "RedactingFilter",
    "add_secret",
    "get_logger",
    "install_log_filter",
    "redact",
    "redact_exception",
]

PLACEHOLDER = "[REDACTED]"
MIN_SECRET_LENGTH = 8
"""Shorter values are not registered: redacting "ollama" or "test" would mangle plain text."""

KEY_ENV_VARS: tuple[str, ...] = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "AZURE_OPENAI_API_KEY",
)
"""Environment variables whose values are redacted wherever they appear, registered or not
(read at each :func:`redact`, so a key set after import is covered too)."""

_secrets: set[str] = set()
_lock = threading.Lock()
_compiled: tuple[frozenset[str], re.Pattern[str] | None] = (frozenset(), None)

# a header name, its separator (": ", '": "', "': '", "=", also JSON-escaped: '\\": \\"'), then
# the value up to a quote, backslash, comma, brace or line end; the separator is kept so the
# text stays readable, and an escaped quote is never split (JSON text stays valid JSON)
_HEADER_VALUE = re.compile(
    r"""(?ix)
    (\b(?:proxy-)?authorization|\bx-api-key|\bx-goog-api-key|\bapi-key|\bapi_key)
    (\\?["']?\s*[:=]\s*\\?["']?)
    ([^"'\\\r\n,}]+)
    """
)
# a token has a digit or a symbol somewhere, which keeps prose ("bearer authentication") intact
_BEARER = re.compile(r"(?i)\b(bearer)\s+(?=[A-Za-z]*[0-9._~+/=-])[A-Za-z0-9._~+/=-]{8,}")
_KEY_QUERY = re.compile(r"(?i)([?&]key=)[^&\s\"']+")
# sk-... (OpenAI, Anthropic sk-ant-...), Google API keys; long enough not to hit words
_KEY_SHAPES = re.compile(r"\bsk-[A-Za-z0-9_-]{16,}|\bAIza[0-9A-Za-z_-]{30,}")


def add_secret(value: str | None) -> None:
    """Register a value that must never appear in reactloop's output.

    Values shorter than :data:`MIN_SECRET_LENGTH` characters (and None) are ignored.
    """
    if not isinstance(value, str):
        return
    value = value.strip()
    if len(value) < MIN_SECRET_LENGTH:
        return
    with _lock:
        _secrets.add(value)


def _current_secrets() -> frozenset[str]:
    env = (os.environ.get(name) for name in KEY_ENV_VARS)
    found = {v.strip() for v in env if v and len(v.strip()) >= MIN_SECRET_LENGTH}
    with _lock:
        found.update(_secrets)
    return frozenset(found)


def _secrets_pattern() -> re.Pattern[str] | None:
    global _compiled
    secrets = _current_secrets()
    known, pattern = _compiled
    if secrets != known:
        # longest first, so a key that contains another is replaced whole
        ordered = sorted(secrets, key=len, reverse=True)
        pattern = re.compile("|".join(map(re.escape, ordered))) if ordered else None
        _compiled = (secrets, pattern)
    return pattern


def redact(text: str) -> str:
    """``text`` with every secret, credential header value and key-shaped string replaced by
    ``[REDACTED]``."""
    if not text:
        return text
    pattern = _secrets_pattern()
    if pattern is not None:
        text = pattern.sub(PLACEHOLDER, text)
    text = _BEARER.sub(lambda m: f"{m.group(1)} {PLACEHOLDER}", text)
    text = _HEADER_VALUE.sub(_header_repl, text)
    text = _KEY_QUERY.sub(lambda m: m.group(1) + PLACEHOLDER, text)
    return _KEY_SHAPES.sub(PLACEHOLDER, text)


def _header_repl(m: re.Match[str]) -> str:
    value = m.group(3).strip()
    # already redacted ("Authorization: Bearer [REDACTED]"), or prose ("pass api_key=...")
    if value.endswith(PLACEHOLDER) or not value.strip("."):
        return m.group(0)
    return f"{m.group(1)}{m.group(2)}{PLACEHOLDER}"


def _chain(exc: BaseException) -> Iterable[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def redact_exception(exc: BaseException) -> BaseException:
    """Redact ``exc`` in place and return it: its message (``args`` and a ``message``
    attribute), and, when an exception it was raised from holds a secret, that chain is
    cut so a printed traceback cannot show it."""
    text = str(exc)
    clean = redact(text)
    if clean != text:
        exc.args = (clean,)
    message = getattr(exc, "message", None)
    if isinstance(message, str) and redact(message) != message:
        # a read-only property raises AttributeError: args already hold the clean text then
        with contextlib.suppress(AttributeError):
            exc.message = redact(message)  # type: ignore[attr-defined]
    if any(redact(str(e)) != str(e) for e in _chain(exc) if e is not exc):
        exc.__cause__ = None
        exc.__suppress_context__ = True
    return exc


class RedactingFilter(logging.Filter):
    """Redacts each record's message and exception text (installed on reactloop's loggers)."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a malformed record: logging reports it itself, later
            return True
        clean = redact(message)
        if clean != message:
            record.msg, record.args = clean, None
        if record.exc_info and not record.exc_text:
            # formatters reuse exc_text when it is set, so the traceback is redacted once here
            record.exc_text = "".join(traceback.format_exception(*record.exc_info)).rstrip("\n")
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True


_FILTER = RedactingFilter()


_KNOWN_LOGGERS = ("reactloop", "reactloop.cli", "reactloop.mcp", "reactloop.models")


def install_log_filter(*names: str) -> None:
    """Put the redacting filter on the named loggers (default: reactloop's known loggers).

    Idempotent. A logger's filters do not see the records of its child loggers, so every
    reactloop logger needs it; modules get theirs from :func:`get_logger`.
    """
    for name in names or _KNOWN_LOGGERS:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)


def get_logger(name: str) -> logging.Logger:
    """``logging.getLogger(name)`` with the redacting filter installed: how reactloop's
    modules get their logger."""
    install_log_filter(name)
    return logging.getLogger(name)


install_log_filter()
