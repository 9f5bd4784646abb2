"""How a message is stored: one JSON text per message, shared by every store."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from reactloop.errors import SessionStoreError, UserError
from reactloop.messages import Message, message_from_dict

__all__ = ["decode", "decode_rows", "dumps", "encode", "title"]

_TITLE_CHARS = 80
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


def encode(message: Message) -> str:
    """The message as JSON text that any UTF-8 database accepts, losslessly (see
    :func:`dumps`)."""
    return dumps(message.to_dict())


def dumps(data: Any) -> str:
    """JSON-ready ``data`` as JSON text that any UTF-8 database accepts, losslessly.

    JSON escapes control characters (NUL included, which PostgreSQL's text refuses). Text is
    kept readable (``ensure_ascii=False``) unless it holds a lone surrogate (a file name that is
    not UTF-8, say), which no UTF-8 encoder accepts: then everything non-ASCII is written as
    ``\\u`` escapes, which decode to the very same string.
    """
    text = json.dumps(data, ensure_ascii=False, default=str)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(data, ensure_ascii=True, default=str)
    return text


def decode_rows(rows: Sequence[tuple[int, str]], session_id: str, store: object,
                blobs: Mapping[str, bytes] | None = None) -> list[Message]:
    """The messages stored as ``(seq, text)`` rows of ``session_id`` in ``store`` (named in
    the error when one cannot be read), their attachments' bytes from ``blobs``."""
    out = []
    for seq, text in rows:
        try:
            out.append(decode(text, blobs))
        except SessionStoreError as exc:
            raise SessionStoreError(f"message {seq} of session {session_id!r} in {store} {exc}"
                                    ) from exc.__cause__
    return out


def decode(text: str, blobs: Mapping[str, bytes] | None = None) -> Message:
    """The message stored as ``text``, or a :class:`SessionStoreError` saying why not."""
    try:
        message = message_from_dict(json.loads(text), blobs)
        _check(message)
        return message
    except (ValueError, TypeError, KeyError, AttributeError, UserError) as exc:
        raise SessionStoreError(
            f"cannot be read ({type(exc).__name__}: {exc}): it was edited or damaged. "
            "Fix or delete that message, or delete the session (reactloop sessions delete ID "
            "--store STORE); reactloop changed nothing") from exc


def _check(m: Message) -> None:
    """The types a hand-edited row could get wrong without ``message_from_dict`` noticing."""
    if not isinstance(m.content, str) or not isinstance(m.metadata, dict):
        raise TypeError("content must be text and metadata an object")
    for call in m.tool_calls:
        if not isinstance(call.name, str) or not isinstance(call.arguments, dict):
            raise TypeError("a tool call needs a name (text) and arguments (an object)")


def title(messages: Sequence[Message]) -> str:
    """The first user prompt, on one line, shortened; storable in any text column: control
    characters (NUL, which PostgreSQL refuses, included) become U+FFFD, lone surrogates ``?``.
    The prompt itself is kept whole in the message."""
    for m in messages:
        if m.role == "user" and m.metadata.get("kind") is None and m.content.strip():
            text = _CONTROL.sub("\ufffd", " ".join(m.content.split()))
            text = text if len(text) <= _TITLE_CHARS else text[:_TITLE_CHARS - 1] + "…"
            return text.encode("utf-8", "replace").decode("utf-8")
    return ""
