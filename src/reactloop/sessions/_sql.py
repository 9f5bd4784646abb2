"""What the SQL stores (SQLite, PostgreSQL) share, written once: the listing (``info``,
``list``), a read of attachment bytes by hash (``attachment_data``) and the CLI's run log
(``log_run``, ``runs``); the one-shot writes (``append``, ``replace``) come from
``_store.StoreBase``, which the memory store shares.

The statements are the same in both databases but for two things each store names: the prefix
of its tables (``""`` or ``"reactloop_"``) and its parameter mark (``?`` or ``%s``). Each store
implements two hooks — a query (:meth:`SQLStore._rows`) and a write in one transaction
(:meth:`SQLStore._execute`) — inside its own error translation, so both raise the same
:class:`~reactloop.SessionStoreError` for a store they cannot use.

Ids follow one rule (:func:`~reactloop.sessions._store.check_session_id`): a write with an id
no store accepts raises :class:`~reactloop.UserError` before touching the database, and a read
answers "no such session" (an empty history, ``None``), in every store alike.
"""

from __future__ import annotations

import builtins
import json
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar

from reactloop.errors import UserError
from reactloop.sessions import _codec
from reactloop.sessions._blobs import MAX_SESSION_BYTES
from reactloop.sessions._store import SessionInfo, StoreBase, check_session_id

__all__ = ["SQLStore", "valid_id"]


def valid_id(session_id: object) -> bool:
    """True when ``session_id`` could name a stored session (see ``check_session_id``)."""
    try:
        check_session_id(session_id)
    except UserError:
        return False
    return True


class SQLStore(StoreBase):
    """The base of the SQL stores (see the module docstring)."""

    _prefix: ClassVar[str]
    """The prefix of the store's table names."""
    _mark: ClassVar[str]
    """The store's parameter placeholder."""
    max_attachment_bytes: int = MAX_SESSION_BYTES
    """The most attachment bytes one session may hold (see ``sessions/_blobs.py``)."""

    # -- the hooks (and StoreBase.writer) ----------------------------------------------------
    def _rows(self, doing: str, sql: str, params: Sequence[Any]) -> builtins.list[Any]:
        """The rows ``sql`` returns (``doing``: the verb of an error message)."""
        raise NotImplementedError

    def _execute(self, doing: str, sql: str, params: Sequence[Any]) -> None:
        """Run ``sql`` in one transaction of its own."""
        raise NotImplementedError

    def _sql(self, statement: str) -> str:
        """``statement`` with ``{t}`` as the table prefix and ``{p}`` as parameter marks."""
        return statement.format(t=self._prefix, p=self._mark)

    # -- shared behaviour --------------------------------------------------------------------
    def info(self, session_id: str) -> SessionInfo | None:
        """One session's :class:`SessionInfo`, or ``None``."""
        if not valid_id(session_id):
            return None
        found = self._infos("WHERE s.id = {p}", (session_id,))
        return found[0] if found else None

    def list(self) -> builtins.list[SessionInfo]:
        return self._infos("", ())

    def _infos(self, where: str, params: tuple[str, ...]) -> builtins.list[SessionInfo]:
        rows = self._rows("read", self._sql(
            "SELECT s.id, s.created, s.updated, s.title,"
            " (SELECT count(*) FROM {t}messages m WHERE m.session_id = s.id)"
            f" FROM {{t}}sessions s {where} ORDER BY s.updated DESC, s.id"), params)
        return [SessionInfo(r[0], r[1], r[2], r[4], r[3]) for r in rows]

    def attachment_data(self, session_id: str, shas: Iterable[str]) -> dict[str, bytes]:
        """The bytes of the session's attachments with these sha256 hashes (those it holds),
        read alone: not the messages, nor the session's other attachments. Not part of the
        :class:`~reactloop.sessions.SessionStore` protocol."""
        wanted = sorted(set(shas))
        if not wanted or not valid_id(session_id):
            return {}
        marks = ", ".join([self._mark] * len(wanted))
        rows = self._rows("read", self._sql(
            "SELECT sha256, data FROM {t}attachments WHERE session_id = {p}")
            + f" AND sha256 IN ({marks})", (session_id, *wanted))
        return {r[0]: bytes(r[1]) for r in rows}

    # -- the CLI's run log (reactloop logs; not part of the SessionStore protocol) -----------
    def log_run(self, run_id: str, session_id: str | None, record: Mapping[str, Any]) -> None:
        """Store (or replace) the JSON-ready ``record`` of one run, next to its session.

        Raises:
            UserError: ``run_id`` or ``session_id`` breaks the rule of session ids.
        """
        check_session_id(run_id, what="run id")
        if session_id is not None:
            check_session_id(session_id)
        self._execute("write to", self._sql(
            "INSERT INTO {t}runs (id, session_id, created, data) VALUES ({p}, {p}, {p}, {p})"
            " ON CONFLICT (id) DO UPDATE SET session_id = excluded.session_id,"
            " created = excluded.created, data = excluded.data"),
            (run_id, session_id, time.time(), _codec.dumps(record)))

    def runs(self, limit: int | None = None) -> builtins.list[dict[str, Any]]:
        """Run records, newest first, each with its ``id``, ``session_id`` and ``created``."""
        cap = "" if limit is None else f" LIMIT {int(limit)}"
        rows = self._rows("read", self._sql(
            "SELECT id, session_id, created, data FROM {t}runs ORDER BY created DESC, id")
            + cap, ())
        return [{**json.loads(r[3]), "id": r[0], "session_id": r[1], "created": r[2]}
                for r in rows]
