"""Secrets redaction (placeholder API; the providers work fills in the registry of key values).

``redact(text)`` replaces every registered secret value in ``text`` with ``[REDACTED]``.
"""

from __future__ import annotations

__all__ = ["add_secret", "redact"]

_SECRETS: set[str] = set()


def add_secret(value: str) -> None:
    """Register a value that must never be shown (values under 8 characters are ignored)."""
    if isinstance(value, str) and len(value) >= 8:
        _SECRETS.add(value)


def redact(text: str) -> str:
    for secret in _SECRETS:
        if secret in text:
            text = text.replace(secret, "[REDACTED]")
    return text
