"""Sessions in PostgreSQL: ``agent.session(id, store="postgresql://user:pw@host/db")``.

The same guarantees as the SQLite store, for several processes and machines sharing one
database: every message is committed (one transaction per write) before the run goes on; a
session has one writer at a time; a killed writer loses its lock at once.

One writer per session: a *session-level advisory lock* on a key derived from the session id
(``pg_try_advisory_lock``), held by the connection the writer writes through. PostgreSQL ends
the lock with its connection, so a writer killed by any signal releases it as soon as the
server sees the socket close (at once on a living machine; within about a minute through TCP
keepalives when the writer's machine vanishes). Because the writer's writes go through the
same connection, a writer that lost its connection has lost its lock and can write nothing
more: its next write fails with a clear error — never a write without the lock.

Tables (``reactloop_sessions``, ``reactloop_messages``, ``reactloop_runs`` for the CLI's run
log, ``reactloop_migrations``) are created by numbered migrations on first use, under an
advisory lock so that concurrent first users wait for each other; a database migrated by a newer reactloop is refused. The tables go into
the first schema of the connection's ``search_path`` (choose one with
``?options=-csearch_path%3Dmyschema`` in the URL). Connections come from a pool
(``psycopg_pool``); a running ``send`` keeps one for its writer, and past the pool's size a
send opens a connection of its own rather than wait for another run to end. Every store
string with the same URL gives the same store, so a process has one pool per database. Passwords never appear in errors or ``repr``: the URL is shown
with ``***`` in their place.
"""

from __future__ import annotations

import atexit
import builtins
import hashlib
import importlib.util
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, suppress
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, unquote, urlsplit

from reactloop._redact import redact_url as redact
from reactloop.errors import SessionBusy, SessionStoreError, UserError
from reactloop.messages import Message
from reactloop.sessions import _blobs, _codec
from reactloop.sessions._sql import SQLStore, valid_id
from reactloop.sessions._store import check_session_id

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool

    Pool = ConnectionPool[psycopg.Connection[Any]]

__all__ = ["SCHEMES", "PostgresStore", "PostgresWriter", "redact"]

SCHEMES = ("postgresql", "postgres")

# Numbered migrations: entry n (from 1) brings the schema from version n-1 to n. Append only.
_MIGRATIONS: tuple[tuple[str, ...], ...] = (
    ("CREATE TABLE reactloop_sessions ("
     " id text PRIMARY KEY, created double precision NOT NULL,"
     " updated double precision NOT NULL, title text NOT NULL DEFAULT '')",
     "CREATE TABLE reactloop_messages ("
     " session_id text NOT NULL REFERENCES reactloop_sessions (id) ON DELETE CASCADE,"
     " seq integer NOT NULL, role text NOT NULL, data text NOT NULL,"
     " created double precision NOT NULL, PRIMARY KEY (session_id, seq))"),
    # 2: the run log of ``reactloop run``/``chat`` (``reactloop logs``)
    ("CREATE TABLE reactloop_runs ("
     " id text PRIMARY KEY, session_id text, created double precision NOT NULL,"
     " data text NOT NULL)",
     "CREATE INDEX reactloop_runs_by_created ON reactloop_runs (created)",
     "CREATE INDEX reactloop_runs_by_session ON reactloop_runs (session_id)"),
    # 3: attachment bytes, once per session and content hash (sessions/_blobs.py)
    ("CREATE TABLE reactloop_attachments ("
     " session_id text NOT NULL REFERENCES reactloop_sessions (id) ON DELETE CASCADE,"
     " sha256 text NOT NULL, media_type text NOT NULL, size bigint NOT NULL,"
     " data bytea NOT NULL, created double precision NOT NULL,"
     " PRIMARY KEY (session_id, sha256))",),
)

# what a PostgreSQL error means, by SQLSTATE prefix, and what to do about it
_REASONS = (
    ("08", "the database cannot be reached or the connection was lost: check that it runs and "
           "that the URL is right; what was stored before is kept"),
    ("57P", "the database server ended the connection (shut down or restarted, or an "
            "administrator ended it): the run stopped; what was stored before is kept, send "
            "again when it is back"),
    ("53", "the database server is out of disk space or memory: free some and try again; "
           "what was stored before is kept"),
    ("28", "the database refused the credentials: check the user and password in the URL"),
    ("3D", "the database does not exist: create it, or fix the URL"),
    ("42501", "the database user lacks a permission reactloop needs (creating its tables, or "
              "writing them): grant it, or use another user"),
    ("42P01", "reactloop's tables are missing (dropped by hand?): restore them, or use "
              "another database"),
)
# the server notices a vanished client (and frees its locks) within about a minute
_KEEPALIVES = ("tcp_keepalives_idle=30", "tcp_keepalives_interval=10", "tcp_keepalives_count=3")
_stores: dict[str, PostgresStore] = {}
_stores_lock = threading.Lock()


def _key(text: str) -> int:
    """A signed 64-bit advisory-lock key for ``text``."""
    digest = hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


_MIGRATION_KEY = _key("reactloop migrations")


def _secrets(url: str) -> list[str]:
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    found = [v for k, v in parse_qsl(parts.query) if k.lower() == "password"]
    if parts.password:
        found += [parts.password, unquote(parts.password)]
    return [s for s in found if s]


def shared_store(url: str) -> PostgresStore:
    """The process's one :class:`PostgresStore` for ``url`` (one pool per database)."""
    with _stores_lock:
        store = _stores.get(url)
        if store is None:
            store = _stores[url] = PostgresStore(url)
        return store


@atexit.register
def _close_shared() -> None:
    with _stores_lock:
        stores = list(_stores.values())
    for store in stores:
        with suppress(Exception):
            store.close()


class PostgresStore(SQLStore):
    """Sessions in a PostgreSQL database (see the module docstring; what it shares with the
    SQLite store is in ``_sql.SQLStore``).

    Args:
        url: ``postgresql://user:password@host:port/database`` (any libpq URL).
        min_size: connections the pool keeps open.
        max_size: the most connections the pool opens; each running ``send`` holds one (its
            writer), so size it for the sends a process runs at once, plus a few for reads.
        timeout: seconds to wait for a connection (to connect, or for a free one).
    """

    _prefix = "reactloop_"
    _mark = "%s"

    def __init__(self, url: str, *, min_size: int = 1, max_size: int = 20,
                 timeout: float = 30.0) -> None:
        if importlib.util.find_spec("psycopg") is None or \
                importlib.util.find_spec("psycopg_pool") is None:
            raise UserError("the PostgreSQL session store needs psycopg: "
                            "pip install 'reactloop[postgres]'")
        from psycopg.conninfo import conninfo_to_dict

        if urlsplit(url).scheme.lower() not in SCHEMES:
            raise UserError(f"{redact(url)} is not a PostgreSQL URL: use "
                            "postgresql://user:password@host:port/database")
        try:
            options = str(conninfo_to_dict(url).get("options") or "")
        except Exception as exc:
            raise UserError(f"{redact(url)} is not a valid PostgreSQL URL "
                            f"({_scrub(str(exc), url)})") from None
        if min_size < 0 or max_size < max(min_size, 1):
            raise UserError(f"the pool needs 0 <= min_size <= max_size and max_size >= 1, got "
                            f"{min_size} and {max_size}")
        self.url = url
        self.min_size, self.max_size, self.timeout = min_size, max_size, timeout
        self._pool: ConnectionPool[psycopg.Connection[Any]] | None = None
        self._lock = threading.Lock()
        self._kwargs: dict[str, Any] = {
            "autocommit": True, "connect_timeout": max(1, round(timeout)),
            "application_name": f"reactloop pid {os.getpid()} on {socket.gethostname()}"[:63],
            "options": " ".join([options, *(f"-c {s}" for s in _KEEPALIVES)]).strip()}

    # -- connections ---------------------------------------------------------------------------
    @contextmanager
    def _errors(self, doing: str) -> Iterator[None]:
        """Turn what psycopg raises into one SessionStoreError, without the password."""
        import psycopg
        from psycopg_pool import PoolTimeout

        try:
            yield
        except PoolTimeout as exc:
            raise SessionStoreError(
                f"cannot {doing} session store {redact(self.url)}: no connection within "
                f"{self.timeout:g} s (all {self.max_size} in use, or the database is "
                "unreachable): raise PostgresStore(max_size=...) or check the database"
            ) from exc
        except psycopg.Error as exc:
            state = exc.sqlstate or ("08" if isinstance(exc, psycopg.OperationalError) else "")
            reason = next((r for code, r in _REASONS if state.startswith(code)),
                          "see the database's log")
            text = _scrub(str(exc).strip().splitlines()[0] if str(exc).strip() else
                          type(exc).__name__, self.url)
            raise SessionStoreError(f"cannot {doing} session store {redact(self.url)} "
                                    f"({text}): {reason}") from None

    def _connect(self) -> ConnectionPool[psycopg.Connection[Any]]:
        with self._lock:
            if self._pool is None:
                import psycopg
                from psycopg_pool import ConnectionPool

                with self._errors("open"), psycopg.connect(self.url, **self._kwargs) as conn:
                    _migrate(conn, self.url)  # the real error at once, not a pool timeout
                pool: ConnectionPool[psycopg.Connection[Any]] = ConnectionPool(
                    self.url, kwargs=self._kwargs, min_size=self.min_size,
                    max_size=self.max_size, timeout=self.timeout,
                    check=ConnectionPool.check_connection, name="reactloop-sessions",
                    open=False)
                pool.open(wait=False)
                self._pool = pool
            return self._pool

    @contextmanager
    def _connection(self, doing: str) -> Iterator[psycopg.Connection[Any]]:
        pool = self._connect()
        with self._errors(doing), pool.connection() as conn:
            yield conn

    def _rows(self, doing: str, sql: str, params: Sequence[Any]) -> builtins.list[Any]:
        with self._connection(doing) as conn:
            return conn.execute(sql, params).fetchall()

    def _execute(self, doing: str, sql: str, params: Sequence[Any]) -> None:
        with self._connection(doing) as conn:  # autocommit: one statement, one transaction
            conn.execute(sql, params)

    def close(self) -> None:
        """Close the pool (a later use opens a new one)."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        # Close the pool from here: left to itself, a pool can be collected in one of its own
        # worker threads, which cannot join themselves.
        pool = getattr(self, "_pool", None)
        if pool is not None:
            with suppress(Exception):
                pool.close(timeout=1.0)

    # -- the protocol --------------------------------------------------------------------------
    def get(self, session_id: str) -> builtins.list[Message]:
        if not valid_id(session_id):
            return []
        with self._connection("read") as conn:
            return _get(conn, session_id, self.url)

    def writer(self, session_id: str) -> PostgresWriter:
        """Become the session's only writer, without waiting (see :class:`PostgresWriter`).

        Raises:
            SessionBusy: another writer — in any process on any machine — holds the session.
        """
        check_session_id(session_id)
        key = _key(f"reactloop session\0{session_id}")
        with self._errors("lock a session in"):
            conn, pool = self._writer_connection()
            try:
                locked = conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()
                holder = None if locked and locked[0] else _holder(conn, key)
            except BaseException:
                _give_back(conn, pool)
                raise
        if holder is not None:
            _give_back(conn, pool)
            raise SessionBusy(
                f"session {session_id!r} is busy: {holder} is running a message on it (store "
                f"{redact(self.url)}); wait for it to finish, or let send() wait with "
                "session.wait = SECONDS")
        return PostgresWriter(self, session_id, conn, key, pool, errors=self._errors)

    def _writer_connection(self) -> tuple[psycopg.Connection[Any], Pool | None]:
        """A pooled connection if one is free at once, else a connection of its own.

        A writer keeps its connection for a whole run, so waiting for the pool could wait for
        other runs (and would block the event loop meanwhile): past ``max_size`` running
        sends, each opens its own connection and closes it at the end.
        """
        import psycopg
        from psycopg_pool import PoolTimeout

        pool = self._connect()
        try:
            return pool.getconn(timeout=0.05), pool
        except PoolTimeout:
            return psycopg.connect(self.url, **self._kwargs), None

    def clear(self, session_id: str) -> None:
        with self.writer(session_id), self._connection("write to") as conn, \
                conn.transaction():
            conn.execute("DELETE FROM reactloop_messages WHERE session_id = %s", (session_id,))
            _blobs.delete_blobs(conn, _pg, session_id)
            conn.execute("UPDATE reactloop_sessions SET updated = %s, title = '' WHERE id = %s",
                         (time.time(), session_id))

    def delete(self, session_id: str) -> bool:
        with self.writer(session_id), self._connection("write to") as conn, \
                conn.transaction():
            conn.execute("DELETE FROM reactloop_runs WHERE session_id = %s", (session_id,))
            cursor = conn.execute("DELETE FROM reactloop_sessions WHERE id = %s", (session_id,))
            return cursor.rowcount > 0

    def __repr__(self) -> str:
        return f"PostgresStore({redact(self.url)!r})"


class PostgresWriter:
    """The one writer of a session in a :class:`PostgresStore` (see ``SessionWriter``).

    It holds a connection with the session's advisory lock until :meth:`close`, and writes
    through that connection only.
    """

    def __init__(self, store: PostgresStore, session_id: str, conn: psycopg.Connection[Any],
                 key: int, pool: Pool | None, *,
                 errors: Callable[[str], AbstractContextManager[None]]) -> None:
        self.session_id = session_id
        self._store = store
        self._errors = errors  # the store's error translation
        self._conn = conn
        self._key = key
        self._pool = pool  # where the connection goes back (None: its own, closed at the end)
        self._open = True

    def _check(self) -> None:
        if not self._open:
            raise UserError(f"the writer of session {self.session_id!r} is closed; take a new "
                            "one with store.writer(session_id)")

    def get(self) -> builtins.list[Message]:
        self._check()
        with self._errors("read"):
            return _get(self._conn, self.session_id, self._store.url)

    def append(self, messages: Sequence[Message]) -> None:
        self._write(messages, replace=False)

    def replace(self, messages: Sequence[Message]) -> None:
        self._write(messages, replace=True)

    def _write(self, messages: Sequence[Message], *, replace: bool) -> None:
        self._check()
        rows = [(m.role, _codec.encode(m)) for m in messages]  # before the transaction
        sid, now, title = self.session_id, time.time(), _codec.title(messages)
        with self._errors("write to"), self._conn.transaction():
            c = self._conn
            if replace:
                c.execute("DELETE FROM reactloop_messages WHERE session_id = %s", (sid,))
            c.execute("INSERT INTO reactloop_sessions (id, created, updated, title)"
                      " VALUES (%s, %s, %s, %s) ON CONFLICT (id) DO UPDATE SET"
                      " updated = excluded.updated, title = CASE"
                      " WHEN reactloop_sessions.title = '' THEN excluded.title"
                      " ELSE reactloop_sessions.title END", (sid, now, now, title))
            if rows:
                row = c.execute("SELECT coalesce(max(seq), 0) FROM reactloop_messages"
                                " WHERE session_id = %s", (sid,)).fetchone()
                last = row[0] if row else 0
                with c.cursor() as cursor:
                    cursor.executemany(
                        "INSERT INTO reactloop_messages (session_id, seq, role, data, created)"
                        " VALUES (%s, %s, %s, %s, %s)",
                        [(sid, last + i, role, data, now)
                         for i, (role, data) in enumerate(rows, start=1)])
            _blobs.write_blobs(c, _pg, sid, messages, replace=replace,
                               limit=self._store.max_attachment_bytes, now=now)

    def close(self) -> None:
        if not self._open:
            return
        self._open = False
        if self._pool is not None:
            try:
                self._conn.execute("SELECT pg_advisory_unlock(%s)", (self._key,))
            except Exception:  # the connection is gone, and its lock with it
                self._conn.close()
        _give_back(self._conn, self._pool)

    def __enter__(self) -> PostgresWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "open" if self._open else "closed"
        return f"PostgresWriter({self.session_id!r}, {state}, store={self._store!r})"


def _give_back(conn: psycopg.Connection[Any], pool: Pool | None) -> None:
    """Return a connection to the pool it came from, or close it."""
    if pool is not None and not pool.closed:
        pool.putconn(conn)  # a closed (broken) connection is dropped, not reused
    else:
        conn.close()


def _migrate(conn: psycopg.Connection[Any], url: str) -> None:
    """Apply the migrations this database lacks; refuse a schema newer than ours."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_KEY,))
        conn.execute("CREATE TABLE IF NOT EXISTS reactloop_migrations ("
                     " version integer PRIMARY KEY, applied double precision NOT NULL)")
        row = conn.execute("SELECT coalesce(max(version), 0) FROM reactloop_migrations"
                           ).fetchone()
        version = row[0] if row else 0
        if version > len(_MIGRATIONS):
            raise SessionStoreError(
                f"session store {redact(url)} was migrated by a newer reactloop (schema "
                f"{version}; this one knows up to {len(_MIGRATIONS)}): upgrade reactloop, or "
                "use another database")
        for number in range(version + 1, len(_MIGRATIONS) + 1):
            for statement in _MIGRATIONS[number - 1]:
                conn.execute(statement)
            conn.execute("INSERT INTO reactloop_migrations (version, applied) VALUES (%s, %s)",
                         (number, time.time()))


def _pg(statement: str) -> str:
    """``statement`` for PostgreSQL (see ``SQLStore._sql``)."""
    return statement.format(t="reactloop_", p="%s")


def _get(conn: psycopg.Connection[Any], session_id: str, url: str) -> builtins.list[Message]:
    with conn.transaction():  # messages and their bytes in one transaction
        rows = conn.execute("SELECT seq, data FROM reactloop_messages WHERE session_id = %s"
                            " ORDER BY seq", (session_id,)).fetchall()
        blobs = _blobs.read_blobs(conn, _pg, session_id) if rows else {}
    return _codec.decode_rows(rows, session_id, redact(url), blobs)


def _holder(conn: psycopg.Connection[Any], key: int) -> str:
    """Who holds the advisory lock ``key``, as far as this user may see."""
    row = conn.execute(
        "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
        " WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1"
        " AND l.classid::bigint = %s AND l.objid::bigint = %s",
        ((key >> 32) & 0xFFFFFFFF, key & 0xFFFFFFFF)).fetchone()
    name = row[0] if row else None
    if name and name.startswith("reactloop "):
        return f"another writer ({name.removeprefix('reactloop ')})"
    return "another writer"


def _scrub(text: str, url: str) -> str:
    for secret in _secrets(url):
        text = text.replace(secret, "***")
    return text
