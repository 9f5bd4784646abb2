"""Persistent sessions: ``agent.session(session_id=None, store=None)``.

The history of a session is written message by message as the run produces it (write-ahead),
so a crash loses at most the step in flight, and ``agent.session(id)`` in a new process
continues where it stopped. The default store is a SQLite file in the user's data directory;
any object implementing :class:`SessionStore` can replace it.
"""

from reactloop.sessions._session import Session, open_store
from reactloop.sessions._sqlite import SQLiteStore, SQLiteWriter, default_store_path
from reactloop.sessions._store import SessionInfo, SessionStore, SessionWriter

__all__ = [
    "SQLiteStore",
    "SQLiteWriter",
    "Session",
    "SessionInfo",
    "SessionStore",
    "SessionWriter",
    "default_store_path",
    "open_store",
]
