"""Attachments in the SQL stores: each one's bytes once per session and content hash.

Messages are stored as JSON holding attachment *references* (``Attachment.ref()``); the bytes
go to the ``attachments`` table, keyed by ``(session_id, sha256)``, in the same transaction as
the messages that mention them — so a failed write stores neither. Writing the same picture
again (a history that repeats, a second turn about it) stores nothing new. A replaced history
(after compaction) drops the bytes no message mentions any more; deleting or clearing a session
drops them all.

A session holds at most :attr:`SQLStore.max_attachment_bytes` of attachments
(:data:`MAX_SESSION_BYTES` by default); a write that would pass it is refused whole.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from reactloop.errors import UserError
from reactloop.messages import Message, attachment_blobs

__all__ = ["MAX_SESSION_BYTES", "delete_blobs", "read_blobs", "write_blobs"]

MAX_SESSION_BYTES = 256 * 1024 * 1024
"""The most attachment bytes one session stores by default (256 MiB)."""

Sql = Callable[[str], str]
"""Formats a statement for one store: ``{t}`` the table prefix, ``{p}`` the parameter mark."""


def read_blobs(c: Any, sql: Sql, session_id: str) -> dict[str, bytes]:
    """The session's attachment bytes by sha256."""
    rows = c.execute(sql("SELECT sha256, data FROM {t}attachments WHERE session_id = {p}"),
                     (session_id,)).fetchall()
    return {r[0]: bytes(r[1]) for r in rows}


def delete_blobs(c: Any, sql: Sql, session_id: str) -> None:
    c.execute(sql("DELETE FROM {t}attachments WHERE session_id = {p}"), (session_id,))


def write_blobs(c: Any, sql: Sql, session_id: str, messages: Sequence[Message], *,
                replace: bool, limit: int, now: float) -> None:
    """Store the bytes of ``messages``' attachments the session lacks (inside the caller's
    transaction, after the session row exists); with ``replace``, drop those no message of the
    new history mentions."""
    blobs = attachment_blobs(messages)
    if not blobs and not replace:
        return
    have = {r[0] for r in c.execute(sql("SELECT sha256 FROM {t}attachments"
                                        " WHERE session_id = {p}"), (session_id,)).fetchall()}
    if replace:
        mentioned = {a.sha256 for m in messages for a in m.attachments}
        for sha in have - mentioned:
            c.execute(sql("DELETE FROM {t}attachments WHERE session_id = {p} AND sha256 = {p}"),
                      (session_id, sha))
        have &= mentioned
    new = [a for sha, a in blobs.items() if sha not in have]
    if not new:
        return
    (stored,) = c.execute(sql("SELECT coalesce(sum(size), 0) FROM {t}attachments"
                              " WHERE session_id = {p}"), (session_id,)).fetchone()
    added = sum(a.size for a in new)
    if stored + added > limit:
        raise UserError(
            f"session {session_id!r} would hold {_size(stored + added)} of attachments; a "
            f"session holds at most {_size(limit)}: start a new session, or raise the store's "
            "max_attachment_bytes. Nothing of this message was stored")
    for a in new:
        c.execute(sql("INSERT INTO {t}attachments (session_id, sha256, media_type, size, data,"
                      " created) VALUES ({p}, {p}, {p}, {p}, {p}, {p})"),
                  (session_id, a.sha256, a.media_type, a.size, a.data, now))


def _size(n: int) -> str:
    return f"{n / 1024 / 1024:.1f} MiB" if n >= 1024 * 1024 else f"{n:,} bytes"
