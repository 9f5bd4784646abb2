"""Logs and sessions through the real command: every run stored, ``logs``, ``-c``, id prefixes."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from _cli import reactloop


def _sessions(home: Path) -> list[dict[str, object]]:
    data: list[dict[str, object]] = json.loads(
        reactloop(home, "sessions", "list", "--json").stdout)
    return data


def test_every_run_is_logged_and_logs_lists_them(tmp_path: Path) -> None:
    assert reactloop(tmp_path, "logs").stdout.strip() == "no runs logged yet"
    reactloop(tmp_path, "run", "--agent", "cli_agents:completed", "What is 17 + 25?")
    reactloop(tmp_path, "run", "--agent", "cli_agents:tool_errors", "Add x and one")
    reactloop(tmp_path, "run", "--no-log", "--agent", "cli_agents:echo", "not stored")
    runs = json.loads(reactloop(tmp_path, "logs", "--json").stdout)
    assert [r["prompt"] for r in runs] == ["Add x and one", "What is 17 + 25?"]
    newest, oldest = runs
    assert (newest["ending"], newest["exit_code"], oldest["ending"]) == ("tool_errors", 6,
                                                                          "completed")
    assert oldest["model"] == "scripted" and oldest["input_tokens"] > 0
    assert oldest["output"] == "17 + 25 = 42" and len(oldest["id"]) == 12
    assert "trace" not in oldest  # the list is light; logs show has the trace
    table = reactloop(tmp_path, "logs").stdout
    assert oldest["id"] in table and "What is 17 + 25?" in table and "completed" in table
    one = json.loads(reactloop(tmp_path, "logs", "-n", "1", "--json").stdout)
    assert [r["id"] for r in one] == [newest["id"]]


def test_logs_show_renders_one_run_with_its_trace_by_prefix(tmp_path: Path) -> None:
    reactloop(tmp_path, "run", "--agent", "cli_agents:completed", "What is 17 + 25?")
    run_id = json.loads(reactloop(tmp_path, "logs", "--json").stdout)[0]["id"]
    shown = reactloop(tmp_path, "logs", "show", run_id[:6])
    assert shown.returncode == 0, shown.stderr
    out = shown.stdout
    assert f"run {run_id}" in out and "What is 17 + 25?" in out
    assert '→ add({"a": 17, "b": 25})' in out and "← 42" in out
    assert "17 + 25 = 42" in out and "answer · completed (exit 0)" in out
    record = json.loads(reactloop(tmp_path, "logs", "show", run_id, "--json").stdout)
    assert [t["type"] for t in record["trace"]].count("tool_call") == 1
    missing = reactloop(tmp_path, "logs", "show", "zzzz")
    assert missing.returncode == 1 and "no run 'zzzz'" in missing.stderr


def test_run_continue_and_session_prefix_continue_a_conversation(tmp_path: Path) -> None:
    first = reactloop(tmp_path, "run", "--agent", "cli_agents:echo", "hello")
    assert first.stdout == "turn 1: hello\n"
    again = reactloop(tmp_path, "run", "-c", "--agent", "cli_agents:echo", "and again")
    assert again.stdout == "turn 2: and again\n"
    sid = str(_sessions(tmp_path)[0]["id"])
    reactloop(tmp_path, "run", "--agent", "cli_agents:echo", "another conversation")
    by_prefix = reactloop(tmp_path, "run", "--session", sid[:8], "--agent", "cli_agents:echo",
                          "third")
    assert by_prefix.stdout == "turn 3: third\n", by_prefix.stderr
    runs = json.loads(reactloop(tmp_path, "logs", "--json").stdout)
    assert [r["session_id"] for r in runs].count(sid) == 3


def test_an_unknown_or_ambiguous_session_is_an_error_not_a_new_session(tmp_path: Path) -> None:
    reactloop(tmp_path, "run", "--agent", "cli_agents:echo", "hello")
    before = _sessions(tmp_path)
    unknown = reactloop(tmp_path, "run", "--session", "nope", "--agent", "cli_agents:echo", "x")
    assert unknown.returncode == 1 and "no session 'nope'" in unknown.stderr
    assert "reactloop sessions list" in unknown.stderr
    assert _sessions(tmp_path) == before
    chat = reactloop(tmp_path, "chat", "--session", "nope", "--agent", "cli_agents:echo",
                     stdin="hi\n")
    assert chat.returncode == 1 and "no session 'nope'" in chat.stderr
    nothing = reactloop(tmp_path / "empty", "run", "-c", "--agent", "cli_agents:echo", "x")
    assert nothing.returncode == 1 and "no session to continue" in nothing.stderr
    for name in ("ab1", "ab2"):
        reactloop(tmp_path, "chat", "--new-session", name, "--agent", "cli_agents:echo",
                  stdin="hi\n")
    ambiguous = reactloop(tmp_path, "run", "--session", "ab", "--agent", "cli_agents:echo", "x")
    assert ambiguous.returncode == 1 and "ambiguous" in ambiguous.stderr
    conflict = reactloop(tmp_path, "run", "--no-log", "-c", "--agent", "cli_agents:echo", "x")
    assert conflict.returncode == 2 and "drop --no-log" in conflict.stderr


def test_sessions_list_never_cuts_ids_and_show_takes_a_prefix(tmp_path: Path) -> None:
    reactloop(tmp_path, "run", "--agent", "cli_agents:echo", "a fairly long first message " * 4)
    sid = str(_sessions(tmp_path)[0]["id"])
    assert len(sid) == 32
    narrow = reactloop(tmp_path, "sessions", "list", COLUMNS="40").stdout
    assert sid in narrow.splitlines()[1]
    shown = reactloop(tmp_path, "sessions", "show", sid[:5])
    assert shown.returncode == 0 and f"session {sid}" in shown.stdout


def test_chat_turns_are_logged_and_chat_continue_resumes(tmp_path: Path) -> None:
    first = reactloop(tmp_path, "chat", "--agent", "cli_agents:echo",
                      stdin="first message\nsecond message\n")
    assert first.returncode == 0, first.stderr
    assert first.stdout == "turn 1: first message\nturn 2: second message\n"
    assert "reactloop chat ·" not in first.stderr  # piped: no banner, only the summaries
    resumed = reactloop(tmp_path, "chat", "-c", "--agent", "cli_agents:echo",
                        stdin="/session\nthird message\n")
    assert resumed.stdout == "turn 3: third message\n"
    assert "· 4 messages" in resumed.stderr  # /session: the continued session
    runs = json.loads(reactloop(tmp_path, "logs", "--json").stdout)
    assert [r["prompt"] for r in runs] == ["third message", "second message", "first message"]
    assert len({r["session_id"] for r in runs}) == 1
    unlogged = reactloop(tmp_path, "chat", "--no-log", "--agent", "cli_agents:echo",
                         stdin="private\n")
    assert unlogged.stdout == "turn 1: private\n"
    assert len(json.loads(reactloop(tmp_path, "logs", "--json").stdout)) == 3


def test_a_busy_session_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    from reactloop.sessions import SQLiteStore

    reactloop(tmp_path, "run", "--agent", "cli_agents:echo", "hello")
    sid = str(_sessions(tmp_path)[0]["id"])
    store = SQLiteStore(tmp_path / "data" / "reactloop" / "sessions.sqlite3")
    try:
        with store.writer(sid):  # another process is writing to this session
            proc = reactloop(tmp_path, "run", "-c", "--agent", "cli_agents:echo", "again")
    finally:
        store.close()
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.startswith("reactloop: ") and proc.stderr.count("\n") == 1, proc.stderr
    assert "busy" in proc.stderr.lower() or "writ" in proc.stderr.lower()


def _old_store(path: Path, *, early_cli_runs: bool) -> None:
    """A store as reactloop before the run log made it (schema 1), optionally with the
    ``runs`` table that early CLI builds added on first use without raising the version."""
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("CREATE TABLE sessions (id TEXT PRIMARY KEY, created REAL NOT NULL,"
                     " updated REAL NOT NULL, title TEXT NOT NULL DEFAULT '')")
        conn.execute("CREATE TABLE messages (session_id TEXT NOT NULL, seq INTEGER NOT NULL,"
                     " role TEXT NOT NULL, data TEXT NOT NULL, created REAL NOT NULL,"
                     " PRIMARY KEY (session_id, seq)) WITHOUT ROWID")
        conn.execute("INSERT INTO sessions VALUES ('old', 1.0, 1.0, 'kept')")
        conn.execute("""INSERT INTO messages VALUES ('old', 1, 'user',
                     '{"role": "user", "content": "kept"}', 1.0)""")
        if early_cli_runs:
            conn.execute("CREATE TABLE runs (id TEXT PRIMARY KEY, session_id TEXT,"
                         " created REAL NOT NULL, data TEXT NOT NULL)")
            conn.execute("""INSERT INTO runs VALUES ('early', 'old', 2.0, '{"prompt": "kept"}')""")
        conn.execute("PRAGMA user_version = 1")


@pytest.mark.parametrize("early_cli_runs", [False, True])
def test_a_store_made_by_older_reactloop_is_migrated_and_keeps_everything(
        tmp_path: Path, early_cli_runs: bool) -> None:
    store = tmp_path / "old.sqlite3"
    _old_store(store, early_cli_runs=early_cli_runs)
    assert json.loads(reactloop(tmp_path, "logs", "--json", "--store", str(store)).stdout) == (
        [{"prompt": "kept", "id": "early", "session_id": "old", "created": 2.0}]
        if early_cli_runs else [])
    proc = reactloop(tmp_path, "run", "--agent", "cli_agents:echo", "--session", "old",
                     "--store", str(store), "next")
    assert (proc.returncode, proc.stdout) == (0, "turn 2: next\n"), proc.stderr
    runs = json.loads(reactloop(tmp_path, "logs", "--json", "--store", str(store)).stdout)
    assert runs[0]["prompt"] == "next" and runs[0]["session_id"] == "old"
    assert len(runs) == 1 + early_cli_runs
    with closing(sqlite3.connect(store)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 3
        assert [r[0] for r in conn.execute("SELECT role FROM messages ORDER BY seq")] == [
            "user", "user", "assistant"]
    deleted = reactloop(tmp_path, "sessions", "delete", "old", "--store", str(store))
    assert deleted.returncode == 0, deleted.stderr
    assert json.loads(reactloop(tmp_path, "logs", "--json", "--store", str(store)).stdout) == []


def test_logs_show_shortens_a_long_answer_and_full_prints_it_whole(tmp_path: Path) -> None:
    """A long answer is shortened like tool results are; --full writes it whole, as plain
    text (rich's Markdown layout of megabytes took time quadratic in their length)."""
    lines = [f"line {i}: the long answer goes on [and] *on*" for i in range(20_000)]
    text = "\n".join(lines)
    run = reactloop(tmp_path, "run", "--agent", "cli_agents:echo", "-", stdin=text)
    assert run.returncode == 0, run.stderr
    short = reactloop(tmp_path, "logs", "show")
    assert short.returncode == 0, short.stderr
    more = len("turn 1: " + text) - 1999
    assert f"[{more} more characters; --full shows all]" in short.stdout
    assert lines[-1] not in short.stdout
    assert len(short.stdout) < 20_000  # two shortened panels (prompt, answer) and the header
    whole = reactloop(tmp_path, "logs", "show", "--full")
    assert whole.returncode == 0, whole.stderr
    assert f"turn 1: {text}\n" in whole.stdout  # every line, in order, unchanged
    assert "more characters" not in whole.stdout
