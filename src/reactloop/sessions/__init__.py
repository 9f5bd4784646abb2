"""Conversations and persistent sessions: ``agent.conversation()``, ``agent.session(id, store)``.

One class, :class:`Session` (``Conversation`` is the same class opened history-first), keeps a
conversation's history in a store: in memory by default, or in a :class:`SessionStore`. The
history of a stored session is written message by message as the run produces it
(write-ahead), so a crash loses at most the step in flight, and ``agent.session(id)`` in a new
process continues where it stopped. ``agent.session`` stores in a SQLite file in the user's
data directory unless given a path, a ``postgresql://`` URL (:class:`PostgresStore`) or
another store. A session has one writer at a time,
across processes (``store.writer(id)``; :class:`~reactloop.SessionBusy` otherwise).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from reactloop.sessions._memory import MemoryStore, MemoryWriter
from reactloop.sessions._session import AgentLike, Conversation, Session, open_store
from reactloop.sessions._store import SessionInfo, SessionStore, SessionWriter

if TYPE_CHECKING:
    from reactloop.sessions._postgres import PostgresStore, PostgresWriter
    from reactloop.sessions._sqlite import SQLiteStore, SQLiteWriter, default_store_path

__all__ = [
    "AgentLike",
    "Conversation",
    "MemoryStore",
    "MemoryWriter",
    "PostgresStore",
    "PostgresWriter",
    "SQLiteStore",
    "SQLiteWriter",
    "Session",
    "SessionInfo",
    "SessionStore",
    "SessionWriter",
    "default_store_path",
    "open_store",
]

# loaded on first use: `import reactloop` (which exports Conversation) loads no database driver
_LAZY = {"SQLiteStore": "_sqlite", "SQLiteWriter": "_sqlite", "default_store_path": "_sqlite",
         "PostgresStore": "_postgres", "PostgresWriter": "_postgres"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(f"reactloop.sessions.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'reactloop.sessions' has no attribute {name!r}")
