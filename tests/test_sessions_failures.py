"""Storage failures are clear errors and lose nothing: a full disk, text no encoder accepts,
damaged, foreign, newer or hand-edited stores — through the API and the CLI."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest
from click.testing import CliRunner

from reactloop import Agent, Message, SessionStoreError, ToolCall
from reactloop.context import check_pairs
from reactloop.context._units import INTERRUPTED
from reactloop.sessions import SQLiteStore, open_store
from reactloop.testing import ScriptedModel


def fetch(n: int) -> str:
    """Fetch some data.

    Args:
        n: how many kilobytes
    """
    return "x" * 1024 * n


def reactloop(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "reactloop", *args], input=stdin,
                          capture_output=True, text=True, timeout=120, check=False,
                          env={**os.environ, "COLUMNS": "200"})


def one_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("reactloop: "), stderr
    return lines[0]


def test_a_full_disk_is_a_clear_error_and_keeps_what_was_stored(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    store = SQLiteStore(path)
    model = ScriptedModel(["hello", ToolCall("fetch", {"n": 64}), "fine"])
    session = Agent(model=model, tools=[fetch]).session("full", store=store)
    session.send_sync("hi")
    before = store.get("full")
    conn = store._connection()  # SQLite's own size limit raises exactly what a full disk does
    conn.execute(f"PRAGMA max_page_count = {conn.execute('PRAGMA page_count').fetchone()[0]}")

    with pytest.raises(SessionStoreError, match="disk is full") as caught:
        session.send_sync("fetch 64 KiB")
    assert str(path) in str(caught.value) and "free some space" in str(caught.value)
    stored = SQLiteStore(path).get("full")
    assert stored[:len(before)] == before  # nothing stored was lost
    assert [m.role for m in stored[len(before):]] in (["user", "assistant"], ["user"], [])
    conn.execute("PRAGMA max_page_count = 1000000")  # space again: the session goes on
    assert session.send_sync("go on").output == "fine"
    stored = SQLiteStore(path).get("full")
    assert check_pairs(stored) == [] and stored[:len(before)] == before


def test_lone_surrogates_are_stored_losslessly(store_arg: str) -> None:
    path = store_arg
    name = os.fsdecode(b"report-\xff.txt")  # a file name that is not UTF-8: '\udcff'

    def read(file: str) -> str:
        """Read a file.

        Args:
            file: its name
        """
        return f"contents of {name}"

    model = ScriptedModel([ToolCall("read", {"file": name}), f"read {name} ✓"])
    session = Agent(model=model, tools=[read]).session("s", store=path)
    result = session.send_sync(f"read {name} please")
    stored = open_store(path).get("s")
    assert stored == list(result.messages) == session.messages
    assert stored[0].content == f"read {name} please"
    assert stored[1].tool_calls[0].arguments == {"file": name}
    assert stored[2].content == f"contents of {name}" and stored[3].content.endswith("✓")
    assert open_store(path).list()[0].title == "read report-?.txt please"


def _sql(path: Path, *statements: str) -> None:
    with closing(sqlite3.connect(path)) as conn, conn:  # closed: the WAL is checkpointed
        for statement in statements:
            conn.execute(statement)


def _damage(path: Path, how: str) -> None:
    if how == "random":
        path.write_bytes(os.urandom(8192))
        return
    if how == "foreign":
        _sql(path, "CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)",
             "INSERT INTO invoices VALUES (1, 99.5)")
        return
    with SQLiteStore(path) as store:
        for i in range(40):
            store.append(f"s{i}", [Message.user("hello " * 200)])
    shutil.rmtree(f"{path}-locks")
    if how == "truncated":
        with open(path, "r+b") as f:
            f.truncate(path.stat().st_size // 2)
    elif how == "newer":
        _sql(path, "PRAGMA user_version = 99")
    elif how == "no table":
        _sql(path, "DROP TABLE messages")


@pytest.mark.parametrize(("how", "says"), [
    ("random", "not a SQLite database"),
    ("truncated", "damaged"),
    ("foreign", "not a reactloop session store (it holds the tables invoices)"),
    ("newer", "newer reactloop (schema 99"),
    ("no table", "lacks reactloop's tables"),
])
def test_unusable_files_are_refused_and_left_untouched(tmp_path: Path, how: str,
                                                       says: str) -> None:
    path = tmp_path / "store.sqlite3"
    _damage(path, how)
    original = path.read_bytes()
    agent = Agent(model=ScriptedModel(["never"]))
    with pytest.raises(SessionStoreError) as caught:
        agent.session("s1", store=path).send_sync("hi")
    assert says in str(caught.value) and str(path) in str(caught.value)
    with pytest.raises(SessionStoreError, match=str(path)):
        SQLiteStore(path).append("s1", [Message.user("hi")])
    assert path.read_bytes() == original  # never written to
    assert not (tmp_path / "store.sqlite3-locks").exists()

    from reactloop.cli import main

    for command in (["sessions", "list"], ["sessions", "show", "s1"],
                    ["sessions", "delete", "s1"],
                    ["chat", "--model", "ollama:none", "--session", "s1"]):
        out = CliRunner().invoke(main, [*command, "--store", str(path)], input="hi\n/exit\n")
        assert out.exit_code == 1 and says in one_line(out.stderr)
    assert path.read_bytes() == original


@pytest.mark.parametrize(("data", "problem"), [
    ('{"role": "user", "content": "cut sh', "JSONDecodeError"),
    ('["a list"]', "TypeError"),
    ('{"role": "wizard", "content": "hi"}', "unknown message role 'wizard'"),
    ('{"role": "user", "content": {"a": 1}}', "content must be text"),
    ('{"role": "assistant", "tool_calls": [{"name": "x", "arguments": [1]}]}', "arguments"),
])
def test_hand_edited_messages_are_a_clear_error(store_arg: str, data: str,
                                                problem: str) -> None:
    path = store_arg
    store = open_store(path)
    store.append("edited", [Message.user("one"), Message.assistant("two")])
    store.append("fine", [Message.user("untouched")])
    if "://" in path:
        import psycopg

        with psycopg.connect(path) as pg:
            pg.execute("UPDATE reactloop_messages SET data = %s"
                       " WHERE session_id = 'edited' AND seq = 2", (data,))
    else:
        with closing(sqlite3.connect(path)) as conn, conn:
            conn.execute("UPDATE messages SET data = ? WHERE session_id = 'edited' AND seq = 2",
                         (data,))
    with pytest.raises(SessionStoreError) as caught:
        Agent(model=ScriptedModel([])).session("edited", store=path)
    text = str(caught.value)
    assert f"message 2 of session 'edited' in {path}" in text and problem in text
    assert "sessions delete" in text
    assert store.get("fine") == [Message.user("untouched")]  # the rest is readable

    from reactloop.cli import main

    runner = CliRunner()
    out = runner.invoke(main, ["sessions", "show", "edited", "--store", str(path)])
    assert out.exit_code == 1 and "message 2 of session 'edited'" in out.output
    assert "Traceback" not in out.output
    out = runner.invoke(main, ["sessions", "list", "--store", str(path)])
    assert out.exit_code == 0 and "edited" in out.output
    out = runner.invoke(main, ["sessions", "delete", "edited", "--store", str(path)])
    assert out.exit_code == 0
    assert [i.id for i in store.list()] == ["fine"]


def test_chat_reports_a_busy_session_in_one_line_and_goes_on(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    with SQLiteStore(path).writer("taken"):
        proc = reactloop("chat", "--model", "ollama:none", "--new-session", "taken", "--store",
                         str(path), stdin="hello?\n/exit\n")
    assert proc.returncode == 0
    assert f"session 'taken' is busy: another writer (pid {os.getpid()}" in one_line(
        proc.stderr)
    assert SQLiteStore(path).get("taken") == []


def test_a_store_error_mid_run_stops_writing_and_the_next_send_repairs(
        tmp_path: Path) -> None:
    class Failing(SQLiteStore):
        """Fails the writes after the first ``ok`` messages, as a dying disk would."""

        ok = 10**9

        def _write(self, session_id: str, messages: list[Message], *,  # type: ignore[override]
                   replace: bool) -> None:
            if self.ok <= 0:
                raise SessionStoreError("cannot write to session store: disk I/O error")
            self.ok -= len(messages)
            super()._write(session_id, messages, replace=replace)

    store = Failing(tmp_path / "s.sqlite3")
    model = ScriptedModel([ToolCall("fetch", {"n": 1}), "recovered"])
    session = Agent(model=model, tools=[fetch]).session("s", store=store)
    store.ok = 2  # the prompt and the first call are stored, its result is not
    with pytest.raises(SessionStoreError, match="disk I/O error"):
        session.send_sync("fetch twice")
    stored = SQLiteStore(store.path).get("s")
    assert [m.role for m in stored] == ["user", "assistant"]  # no gap, nothing after it
    store.ok = 10**9
    assert session.send_sync("again").output == "recovered"
    stored = SQLiteStore(store.path).get("s")
    assert stored[2].content == INTERRUPTED and check_pairs(stored) == []
