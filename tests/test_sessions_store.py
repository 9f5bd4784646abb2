"""The SQLite session store on real files: the protocol, WAL, threads, the default path."""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path

import pytest

from reactloop import Message, SessionBusy, ToolCall, UserError
from reactloop.sessions import (
    SessionStore,
    SessionWriter,
    SQLiteStore,
    default_store_path,
    open_store,
)


def test_the_protocol(store_arg: str) -> None:
    store = open_store(store_arg)
    assert isinstance(store, SessionStore)
    assert store.get("nope") == [] and store.list() == []
    history = [
        Message.user("Compare Q1 and Q2"),
        Message.assistant("Let me look.", [ToolCall("compare", {"a": "Q1", "b": "Q2"}, "c1")]),
        Message.tool("c1", "compare", '{"diff": 3.5}'),
        Message.user("Use a tool.", kind="reminder"),
        Message.tool("c2", "x", "boom", is_error=True),
        Message.assistant("Q2 is 3.5% higher. ünïcødé ✓ \x00 nul"),
    ]
    store.append("a", history[:3])
    store.append("a", history[3:])
    store.append("b", [Message.user("other")])
    assert store.get("a") == history  # lossless, in order
    infos = {i.id: i for i in store.list()}
    assert infos["a"].messages == 6 and infos["a"].title == "Compare Q1 and Q2"
    assert infos["b"].messages == 1
    assert store.list()[0].id == "b"  # most recently updated first
    assert store.info("a") == infos["a"] and store.info("zzz") is None  # type: ignore[attr-defined]
    store.replace("a", history[-1:])
    assert store.get("a") == history[-1:]
    assert store.info("a").title == "Compare Q1 and Q2"  # type: ignore[attr-defined]
    store.clear("a")
    assert store.get("a") == [] and store.info("a") is not None  # type: ignore[attr-defined]
    assert store.delete("a") is True and store.delete("a") is False
    assert [i.id for i in store.list()] == ["b"]
    store.close()
    store.close()
    assert open_store(store_arg).get("b") == [Message.user("other")]  # reopened


def test_sqlite_creates_the_file_and_its_folder(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "folder" / "s.sqlite3"
    SQLiteStore(path).append("a", [Message.user("hi")])
    assert path.is_file() and SQLiteStore(path).get("a") == [Message.user("hi")]


def test_wal_mode_and_integrity(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    with SQLiteStore(path) as store:
        store.append("x", [Message.user("hi")])
        with sqlite3.connect(path) as raw:
            assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
            assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_a_failed_transaction_leaves_nothing_behind(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.sqlite3")
    store.append("x", [Message.user("kept")])

    class Unserializable:
        def __str__(self) -> str:
            raise RuntimeError("cannot serialize")

    bad = Message("user", "half", metadata={"obj": Unserializable()})
    with pytest.raises(RuntimeError):
        store.append("x", [Message.user("first of the batch"), bad])
    assert store.get("x") == [Message.user("kept")]
    store.append("x", [Message.user("next")])  # the store still works
    assert len(store.get("x")) == 2


def test_session_ids_are_checked(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.sqlite3")
    for bad in ("", "   ", "a\nb", "x" * 201):
        with pytest.raises(UserError, match="session id"):
            store.append(bad, [Message.user("hi")])


def test_threads_writing_to_different_sessions(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    shared = SQLiteStore(path)
    n = 100
    barrier = threading.Barrier(8)

    def write(sid: str, store: SQLiteStore) -> None:
        barrier.wait()
        for i in range(n):
            store.append(sid, [Message.user(f"{sid}:{i}")])

    threads = [threading.Thread(target=write, args=(f"shared-{i}", shared)) for i in range(4)]
    threads += [threading.Thread(target=write, args=(f"own-{i}", SQLiteStore(path)))
                for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    check = SQLiteStore(path)
    assert len(check.list()) == 8
    for info in check.list():
        assert [m.content for m in check.get(info.id)] == [f"{info.id}:{i}" for i in range(n)]


def test_default_store_lives_in_the_user_data_dir(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    import platformdirs

    monkeypatch.setattr(platformdirs, "user_data_dir",
                        lambda appname, appauthor=None: str(tmp_path / "data" / appname))
    assert default_store_path() == tmp_path / "data" / "reactloop" / "sessions.sqlite3"
    from reactloop import Agent
    from reactloop.testing import ScriptedModel

    session = Agent(model=ScriptedModel(["hello"])).session()
    session.send_sync("hi")
    assert (tmp_path / "data" / "reactloop" / "sessions.sqlite3").is_file()
    assert SQLiteStore().get(session.id) == session.messages


def test_one_writer_per_session(store_arg: str) -> None:
    one = open_store(store_arg)
    two = type(one)(store_arg)  # type: ignore[call-arg]  # its own connections
    with one.writer("a") as w:
        assert isinstance(w, SessionWriter) and w.session_id == "a"
        w.append([Message.user("first")])
        for store in (one, two):  # the same store object, another one on the same file
            with pytest.raises(SessionBusy, match=rf"session 'a' is busy: another writer \(pid "
                                                  rf"{os.getpid()} on "):
                store.writer("a")
            with pytest.raises(SessionBusy):
                store.append("a", [Message.user("sneaking in")])
        with two.writer("b") as other:  # other sessions are not affected
            other.append([Message.user("b's")])
        assert w.get() == two.get("a") == [Message.user("first")]
        w.replace([Message.user("replaced")])
    assert two.get("a") == [Message.user("replaced")]
    with pytest.raises(UserError, match="closed"):
        w.append([Message.user("after close")])
    w.close()  # closing twice is fine
    with two.writer("a") as again:  # free again
        again.append([Message.user("second")])
    assert [m.content for m in one.get("a")] == ["replaced", "second"]


def test_writers_in_threads_exclude_each_other(store_arg: str) -> None:
    store = open_store(store_arg)
    barrier, won, lost = threading.Barrier(8), [], []

    def take() -> None:
        barrier.wait()
        try:
            w = store.writer("x")
        except SessionBusy:
            lost.append(1)
            return
        won.append(w)

    threads = [threading.Thread(target=take) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(won) == 1 and len(lost) == 7
    won[0].close()
    store.writer("x").close()


def test_locks_live_next_to_the_file_and_go_with_their_session(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    store = SQLiteStore(path)
    store.get("x")
    store.list()
    assert not (tmp_path / "s.sqlite3-locks").exists()  # reading takes no lock
    store.append("x", [Message.user("hi")])
    assert len(list((tmp_path / "s.sqlite3-locks").iterdir())) == 1
    assert store.delete("x") is True
    assert list((tmp_path / "s.sqlite3-locks").iterdir()) == []
    store.append("x", [Message.user("again")])  # a new lock file for the new session
    assert store.get("x") == [Message.user("again")]
