"""The default session store: one SQLite file (WAL), many sessions.

Crash safety comes from SQLite itself: each write is one transaction, and in WAL mode a
process killed at any point (even mid-transaction) leaves the file consistent, with every
committed transaction kept. ``synchronous=NORMAL`` (the default here) keeps committed data
across process crashes; pass ``durable=True`` (``synchronous=FULL``) to keep it across power
loss too, at the cost of an fsync per message.

A file reactloop cannot use — damaged, not SQLite, another program's database, a newer
reactloop's schema, a full disk — raises :class:`~reactloop.SessionStoreError` naming the file
and the fix; such a file is never written to, so nothing stored in it is lost. The schema
grows by numbered migrations (``PRAGMA user_version``): a file made by an older reactloop is
upgraded when it is first opened, in one transaction.

Several processes and threads may write to different sessions in one file at once: writers
take the lock up front (``BEGIN IMMEDIATE``) and wait up to ``timeout`` seconds for each other.
One session has one writer at a time (:meth:`SQLiteStore.writer`): a lock file per session in
the folder ``<file>-locks`` next to the database, held with ``flock`` (see ``_filelock``).
"""

from __future__ import annotations

import builtins
import hashlib
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from reactloop.errors import SessionBusy, SessionStoreError, UserError
from reactloop.messages import Message
from reactloop.sessions import _blobs, _codec, _filelock
from reactloop.sessions._sql import SQLStore, valid_id
from reactloop.sessions._store import check_session_id

__all__ = ["SQLiteStore", "SQLiteWriter", "default_store_path"]

# Numbered migrations: entry n (from 1) brings the schema (``PRAGMA user_version``) from
# version n-1 to n. Append only: a file made by an older reactloop upgrades on first open.
_MIGRATIONS: tuple[tuple[str, ...], ...] = (
    ("CREATE TABLE IF NOT EXISTS sessions ("
     " id TEXT PRIMARY KEY, created REAL NOT NULL, updated REAL NOT NULL,"
     " title TEXT NOT NULL DEFAULT '')",
     "CREATE TABLE IF NOT EXISTS messages ("
     " session_id TEXT NOT NULL, seq INTEGER NOT NULL, role TEXT NOT NULL,"
     " data TEXT NOT NULL, created REAL NOT NULL, PRIMARY KEY (session_id, seq)) WITHOUT ROWID"),
    # 2: the run log of ``reactloop run``/``chat`` (``reactloop logs``); IF NOT EXISTS because
    # early CLI builds made this table on first use without raising the version
    ("CREATE TABLE IF NOT EXISTS runs (id TEXT PRIMARY KEY, session_id TEXT,"
     " created REAL NOT NULL, data TEXT NOT NULL)",
     "CREATE INDEX IF NOT EXISTS runs_by_created ON runs (created)",
     "CREATE INDEX IF NOT EXISTS runs_by_session ON runs (session_id)"),
    # 3: attachment bytes, once per session and content hash (sessions/_blobs.py); a rowid
    # table, as SQLite advises for rows this large
    ("CREATE TABLE IF NOT EXISTS attachments (session_id TEXT NOT NULL, sha256 TEXT NOT NULL,"
     " media_type TEXT NOT NULL, size INTEGER NOT NULL, data BLOB NOT NULL,"
     " created REAL NOT NULL, PRIMARY KEY (session_id, sha256))",),
)
_VERSION = len(_MIGRATIONS)

_NO_TABLES = ("the file lacks reactloop's tables or columns (edited by hand?); reactloop left "
              "it untouched: restore it, or pass another path")
# what SQLite's message means, and what the user can do about it
_REASONS = (
    ("disk is full", "the disk is full (or the file reached its size limit): free some space "
                     "and try again; what is stored is kept"),
    ("not a database", "the file is not a SQLite database, or it is damaged; reactloop left it "
                       "untouched: move it away, or pass another store path"),
    ("malformed", "the file is damaged (truncated or overwritten); reactloop left it "
                  "untouched: restore it from a backup, or move it away and pass another path"),
    ("unable to open", "the file cannot be opened (a folder? no permission?): pass the path of "
                       "a file you may write"),
    ("readonly", "the file is read-only: give write permission, or pass another path"),
    ("no such", _NO_TABLES),
    ("locked", "another process held the database lock for longer than the store's timeout: "
               "try again, or raise SQLiteStore(timeout=...)"),
    ("i/o error", "the disk reported an I/O error: check the disk and its free space"),
)


def default_store_path() -> Path:
    """``sessions.sqlite3`` in the user's data directory (via platformdirs)."""
    import platformdirs

    return Path(platformdirs.user_data_dir("reactloop", appauthor=False)) / "sessions.sqlite3"


def _enable_wal(conn: sqlite3.Connection, timeout: float) -> None:
    """Switch the file to WAL (once per file; it persists).

    SQLite answers "database is locked" at once, without waiting on the busy timeout, when
    several connections switch a new file at the same moment; we retry until ``timeout``."""
    deadline = time.monotonic() + timeout
    delay = 0.001
    while True:
        try:
            if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() + delay > deadline:
                raise
            time.sleep(delay)  # back off: another connection holds the lock for a moment
            delay = min(delay * 2, 0.1)


@contextmanager
def _begin(conn: sqlite3.Connection) -> Iterator[None]:
    """One write transaction; the write lock is taken up front so writers queue, not fail."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _check_schema(conn: sqlite3.Connection, path: Path) -> None:
    """Refuse, before writing anything, a file that is not (or not yet) a reactloop store."""
    conn.execute("BEGIN")  # one snapshot: another process may be creating the tables right now
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master"
                                             " WHERE type = 'table'")}
    finally:
        if conn.in_transaction:
            conn.execute("ROLLBACK")  # it only read
    if version > _VERSION:
        raise SessionStoreError(
            f"session store {path} was written by a newer reactloop (schema {version}; this "
            f"one knows up to {_VERSION}): upgrade reactloop, or pass another store path")
    if version == 0 and tables:
        raise SessionStoreError(
            f"{path} is not a reactloop session store (it holds the tables "
            f"{', '.join(sorted(tables))}); reactloop left it untouched: pass another store "
            "path")
    if version > 0 and not {"sessions", "messages"} <= tables:
        raise SessionStoreError(
            f"cannot open session store {path}: {_NO_TABLES}")


def _migrate(conn: sqlite3.Connection) -> None:
    """Apply the migrations the file lacks, in one transaction (all of them, or none)."""
    with _begin(conn):  # re-read under the write lock: another process may have migrated
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        for number in range(version + 1, _VERSION + 1):
            for statement in _MIGRATIONS[number - 1]:
                conn.execute(statement)
        if version < _VERSION:
            conn.execute(f"PRAGMA user_version = {_VERSION}")


class SQLiteStore(SQLStore):
    """Sessions in one SQLite file (see the module docstring; what it shares with the
    PostgreSQL store is in ``_sql.SQLStore``).

    Args:
        path: the database file (created with its folder); default
            :func:`default_store_path`.
        durable: fsync every transaction (survives power loss, not only process crashes).
        timeout: seconds a writer waits for another one before failing.
    """

    _prefix = ""
    _mark = "?"

    def __init__(self, path: str | os.PathLike[str] | None = None, *, durable: bool = False,
                 timeout: float = 30.0) -> None:
        self.path = Path(path).expanduser() if path is not None else default_store_path()
        self.durable = durable
        self.timeout = timeout
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.RLock()

    # -- connection ----------------------------------------------------------------------------
    @contextmanager
    def _errors(self, doing: str) -> Iterator[None]:
        """Turn what SQLite and the file system raise into one clear SessionStoreError."""
        try:
            yield
        except (sqlite3.Error, OSError) as exc:
            text = str(exc)
            reason = next((r for key, r in _REASONS if key in text.lower()), "check the file")
            raise SessionStoreError(f"cannot {doing} session store {self.path} ({text}): "
                                    f"{reason}") from exc

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            with self._errors("open"):
                self.path.parent.mkdir(parents=True, exist_ok=True)
                conn = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None,
                                       check_same_thread=False)
                try:
                    conn.execute(f"PRAGMA busy_timeout = {int(self.timeout * 1000)}")
                    _check_schema(conn, self.path)
                    _enable_wal(conn, self.timeout)
                    conn.execute(f"PRAGMA synchronous = {'FULL' if self.durable else 'NORMAL'}")
                    _migrate(conn)
                except BaseException:
                    conn.close()
                    raise
            self._conn = conn
        return self._conn

    @contextmanager
    def _transaction(self, doing: str) -> Iterator[sqlite3.Connection]:
        with self._lock:
            conn = self._connection()
            with self._errors(doing), _begin(conn):
                yield conn

    def _rows(self, doing: str, sql: str, params: Sequence[Any]) -> builtins.list[Any]:
        with self._lock:
            conn = self._connection()
            with self._errors(doing):
                return conn.execute(sql, params).fetchall()

    def _execute(self, doing: str, sql: str, params: Sequence[Any]) -> None:
        with self._transaction(doing) as c:
            c.execute(sql, params)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> SQLiteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the protocol --------------------------------------------------------------------------
    def get(self, session_id: str) -> builtins.list[Message]:
        if not valid_id(session_id):
            return []
        with self._transaction("read") as c:  # one snapshot of messages and their bytes
            rows = c.execute("SELECT seq, data FROM messages WHERE session_id = ?"
                             " ORDER BY seq", (session_id,)).fetchall()
            blobs = _blobs.read_blobs(c, self._sql, session_id) if rows else {}
        return _codec.decode_rows(rows, session_id, self.path, blobs)

    def writer(self, session_id: str) -> SQLiteWriter:
        """Become the session's only writer, without waiting (see :class:`SQLiteWriter`).

        Raises:
            SessionBusy: another writer — in this process or another — holds the session.
        """
        check_session_id(session_id)
        with self._lock:
            self._connection()  # a file we cannot use gets no lock folder next to it
        locks = Path(f"{self.path}-locks")
        path = locks / (hashlib.sha256(session_id.encode()).hexdigest()[:32] + ".lock")
        with self._errors("lock a session in"):
            locks.mkdir(exist_ok=True)
            fd = _filelock.try_lock(path)
        if fd is None:
            raise SessionBusy(
                f"session {session_id!r} is busy: {_filelock.holder(path)} is running a "
                f"message on it (store {self.path}); wait for it to finish, or let send() "
                "wait with session.wait = SECONDS")
        return SQLiteWriter(self, session_id, fd, path, self._write)

    def clear(self, session_id: str) -> None:
        with self.writer(session_id), self._transaction("write") as c:
            c.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
            _blobs.delete_blobs(c, self._sql, session_id)
            c.execute("UPDATE sessions SET updated = ?, title = '' WHERE id = ?",
                      (time.time(), session_id))

    def delete(self, session_id: str) -> bool:
        w = self.writer(session_id)
        try:
            with self._transaction("write") as c:
                c.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
                c.execute("DELETE FROM runs WHERE session_id = ?", (session_id,))  # its log
                _blobs.delete_blobs(c, self._sql, session_id)
                found = c.execute("DELETE FROM sessions WHERE id = ?",
                                  (session_id,)).rowcount > 0
        finally:
            w.close(remove=True)
        return found

    # -- internals -----------------------------------------------------------------------------
    def _write(self, session_id: str, messages: Sequence[Message], *, replace: bool) -> None:
        rows = [_codec.encode(m) for m in messages]  # before the transaction: nothing half-done
        with self._transaction("write to") as c:
            if replace:
                c.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
            now = time.time()
            c.execute("INSERT INTO sessions (id, created, updated, title) VALUES (?, ?, ?, '')"
                      " ON CONFLICT (id) DO UPDATE SET updated = excluded.updated",
                      (session_id, now, now))
            title = _codec.title(messages)
            if title:
                c.execute("UPDATE sessions SET title = ? WHERE id = ? AND title = ''",
                          (title, session_id))
            _blobs.write_blobs(c, self._sql, session_id, messages, replace=replace,
                               limit=self.max_attachment_bytes, now=now)
            (last,) = c.execute("SELECT coalesce(max(seq), 0) FROM messages"
                                " WHERE session_id = ?", (session_id,)).fetchone()
            c.executemany(
                "INSERT INTO messages (session_id, seq, role, data, created)"
                " VALUES (?, ?, ?, ?, ?)",
                [(session_id, last + i, m.role, row, now)
                 for i, (m, row) in enumerate(zip(messages, rows, strict=True), start=1)])

    def __repr__(self) -> str:
        return f"SQLiteStore({str(self.path)!r})"


class SQLiteWriter:
    """The one writer of a session in a :class:`SQLiteStore` (see ``SessionWriter``).

    It holds the session's lock file until :meth:`close`; if its process dies, the operating
    system releases the lock at once.
    """

    def __init__(self, store: SQLiteStore, session_id: str, fd: int, lock_path: Path,
                 write: Callable[..., None]) -> None:
        self.session_id = session_id
        self._store = store
        self._write = write  # the store's unlocked write: the lock is ours
        self._fd: int | None = fd
        self._lock_path = lock_path

    def _check(self) -> None:
        if self._fd is None:
            raise UserError(f"the writer of session {self.session_id!r} is closed; take a new "
                            "one with store.writer(session_id)")

    def get(self) -> builtins.list[Message]:
        self._check()
        return self._store.get(self.session_id)

    def append(self, messages: Sequence[Message]) -> None:
        self._check()
        self._write(self.session_id, messages, replace=False)

    def replace(self, messages: Sequence[Message]) -> None:
        self._check()
        self._write(self.session_id, messages, replace=True)

    def close(self, *, remove: bool = False) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            if remove:
                _filelock.remove(fd, self._lock_path)
            else:
                _filelock.release(fd)

    def __enter__(self) -> SQLiteWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:  # a writer dropped without close() must not hold the lock
        if self._fd is not None:
            with suppress(OSError):
                self.close()

    def __repr__(self) -> str:
        state = "open" if self._fd is not None else "closed"
        return f"SQLiteWriter({self.session_id!r}, {state}, store={self._store!r})"
