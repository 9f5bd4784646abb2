"""Crash safety: a session killed with SIGKILL mid-run loses nothing it had written, the
store stays intact, and a fresh process resumes the conversation. Also: concurrent writers,
one writer per session. Every test runs on SQLite and on PostgreSQL (``store_arg``)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from reactloop.context import check_pairs
from reactloop.context._units import INTERRUPTED
from reactloop.messages import Message, message_from_dict
from reactloop.sessions import SQLiteStore, open_store

CHILD = str(Path(__file__).with_name("sessions_child.py"))

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs SIGKILL")


def spawn(*args: str, stdin: int | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, CHILD, *args], stdout=subprocess.PIPE,
                            stdin=stdin, text=True, bufsize=1)


def stored(store: str, session_id: str) -> list[Message]:
    """What a fresh store object reads (a new connection for SQLite)."""
    if "://" in store:
        return open_store(store).get(session_id)
    with closing(SQLiteStore(store)) as s:
        return s.get(session_id)


def intact(store: str) -> bool:
    """SQLite's own integrity check; PostgreSQL's messages numbered without gaps."""
    if "://" not in store:
        with closing(sqlite3.connect(store)) as conn:
            return str(conn.execute("PRAGMA integrity_check").fetchone()[0]) == "ok"
    import psycopg

    with psycopg.connect(store) as conn:
        return not conn.execute(
            "SELECT session_id FROM reactloop_messages GROUP BY session_id"
            " HAVING max(seq) <> count(*)").fetchall()


def kill_after(child: subprocess.Popen[str], lines: int, marker: str | None = None
               ) -> list[dict[str, object]]:
    """Read the child's committed messages until ``lines`` (or ``marker``), then SIGKILL it."""
    written: list[dict[str, object]] = []
    assert child.stdout is not None
    try:
        for line in child.stdout:
            if line.startswith("W "):
                written.append(json.loads(line[2:]))
            if (marker is not None and line.strip() == marker) or len(written) >= lines:
                break
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.kill()
        child.wait()
    assert child.returncode == -signal.SIGKILL
    return written


def resume(store: str, session_id: str) -> tuple[list[dict[str, object]], dict[str, object]]:
    out = subprocess.run([sys.executable, CHILD, "resume", store, session_id, "continue"],
                         capture_output=True, text=True, check=True, timeout=120).stdout
    before = next(json.loads(x[2:]) for x in out.splitlines() if x.startswith("B "))
    result = next(json.loads(x[2:]) for x in out.splitlines() if x.startswith("R "))
    return before, result


@pytest.mark.parametrize("lines", [1, 7, 60, 201])
def test_sigkill_mid_run_loses_nothing_written_and_resumes(store_arg: str, lines: int) -> None:
    store = store_arg
    written = kill_after(spawn("work", store, "crash"), lines)
    assert len(written) >= lines
    assert intact(store)
    kept = [m.to_dict() for m in stored(store, "crash")]
    assert kept[:len(written)] == written  # everything reported as written is there
    assert kept[0] == {"role": "user", "content": "do all the work"}

    before, result = resume(store, "crash")  # a fresh process continues the session
    assert before[:len(kept)] == kept
    history = [message_from_dict(d) for d in result["messages"]]  # type: ignore[union-attr]
    assert check_pairs(history) == []
    assert result["state"] == "completed" and result["output"] == "resumed fine"
    assert [m.content for m in history[-2:]] == ["continue", "resumed fine"]
    assert [m.to_dict() for m in stored(store, "crash")] == result["messages"]
    assert intact(store)


def test_sigkill_while_a_tool_runs_answers_the_call_as_interrupted(store_arg: str) -> None:
    store = store_arg
    written = kill_after(spawn("block", store, "blocked", "3"), 10**9, marker="BLOCKED")
    # user, then 3 steps of call + result, then the 4th call whose tool never returned
    assert len(written) == 1 + 3 * 2 + 1
    assert written[-1]["tool_calls"][0]["arguments"] == {"i": 3}  # type: ignore[index]
    assert intact(store)
    before, result = resume(store, "blocked")
    assert before[:len(written)] == written
    interrupted = before[len(written)]
    assert interrupted["role"] == "tool" and interrupted["is_error"] is True
    assert interrupted["content"] == INTERRUPTED
    assert result["state"] == "completed"
    # the repair was stored too, so the store is a well-formed history again
    assert check_pairs(stored(store, "blocked")) == []


def test_concurrent_writer_processes_on_one_store(store_arg: str) -> None:
    store = store_arg
    n, ids = 150, [f"writer-{i}" for i in range(4)]
    children = [spawn("writer", store, sid, str(n), stdin=subprocess.PIPE) for sid in ids]
    try:
        start_together(children)
        for c in children:
            assert c.stdout is not None and c.stdout.readline().strip() == "done"
            assert c.wait(timeout=120) == 0
    finally:
        for c in children:
            c.kill()
            c.wait()
    assert sorted(i.id for i in open_store(store).list()) == ids
    for sid in ids:
        assert [m.content for m in stored(store, sid)] == [f"{sid} message {i}" for i in range(n)]
    assert intact(store)


def start_together(children: list[subprocess.Popen[str]]) -> None:
    for c in children:  # every child is ready…
        assert c.stdout is not None and c.stdout.readline().strip() == "ready"
    for c in children:  # …then all start at once
        assert c.stdin is not None
        c.stdin.write("go\n")
        c.stdin.flush()


def test_processes_sending_to_one_session_take_turns(store_arg: str) -> None:
    store, k = store_arg, 6
    names = [f"p{i}" for i in range(4)]
    children = [spawn("turn", store, "shared", name, str(k), stdin=subprocess.PIPE)
                for name in names]
    try:
        start_together(children)
        for c, name in zip(children, names, strict=True):
            assert c.stdout is not None
            assert json.loads(c.stdout.readline()[2:]) == {"state": "completed",
                                                           "output": f"{name} done"}
            assert c.wait(timeout=120) == 0
    finally:
        for c in children:
            c.kill()
            c.wait()
    history = stored(store, "shared")
    assert check_pairs(history) == [] and INTERRUPTED not in [m.content for m in history]
    turns = [i for i, m in enumerate(history) if m.role == "user"]
    assert len(turns) == len(names) and len(history) == len(names) * (2 * k + 2)
    seen = []
    for start in turns:  # each turn is one process's, whole and in order
        turn = history[start:start + 2 * k + 2]
        name = turn[0].content.removeprefix("from ")
        seen.append(name)
        calls = [m.tool_calls[0].arguments for m in turn[1:-1:2]]
        assert calls == [{"tag": name, "i": i} for i in range(k)]
        assert [m.content for m in turn[2:-1:2]] == [f"{name} result {i}" for i in range(k)]
        assert turn[-1].content == f"{name} done"
    assert sorted(seen) == names


def test_a_live_writer_is_never_repaired_and_a_killed_one_frees_the_session(
        store_arg: str) -> None:
    from reactloop import Agent, SessionBusy
    from reactloop.testing import ScriptedModel

    store = store_arg
    child = spawn("block", store, "live", "2")
    assert child.stdout is not None
    try:
        for line in child.stdout:  # the child is inside its third tool call, holding the lock
            if line.strip() == "BLOCKED":
                break
        before = stored(store, "live")
        raw = Path(store).read_bytes() if "://" not in store else b""
        assert before[-1].tool_calls  # the call in flight has no result yet
        session = Agent(model=ScriptedModel(["after"])).session("live", store=store)
        assert session.messages == before  # shown as stored, not "interrupted"
        with pytest.raises(SessionBusy, match=rf"pid {child.pid} on "):
            session.send_sync("may I?")
        for attempt in (lambda s: s.append("live", []), lambda s: s.delete("live"),
                        lambda s: s.clear("live"), lambda s: s.replace("live", [])):
            with pytest.raises(SessionBusy):
                attempt(open_store(store))
        assert stored(store, "live") == before
        assert raw == (Path(store).read_bytes() if "://" not in store else b"")
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    finally:
        child.kill()
        child.wait()
    session.wait = 60  # the dead writer's lock is gone with it: no lease to run out
    assert session.send_sync("may I?").output == "after"
    history = stored(store, "live")
    assert history[:len(before)] == before
    assert history[len(before)].content == INTERRUPTED and check_pairs(history) == []


def test_waiting_for_user_resumes_in_another_process(store_arg: str) -> None:
    from reactloop import Agent, ModelRequest, RunState, ToolCall
    from reactloop.testing import FunctionModel

    store = store_arg
    out = subprocess.run([sys.executable, CHILD, "ask", store, "trip"],
                         capture_output=True, text=True, check=True, timeout=120).stdout
    asked = json.loads(out.splitlines()[-1][2:])
    assert asked == {"state": "waiting_for_user", "output": "Which city?"}

    def answer(request: ModelRequest) -> ToolCall:
        *_, call, question, reply = request.messages
        assert call.tool_calls[0].name == "ask_question"
        assert (question.role, question.content) == ("tool", "Which city?")
        assert (reply.role, reply.content) == ("user", "Paris")
        return ToolCall("task_completion", {"result": "Flight to Paris booked."})

    session = Agent(model=FunctionModel(answer), loop_control=True).session("trip", store=store)
    assert session.waiting_for == "Which city?"
    result = session.send_sync("Paris")
    assert result.state is RunState.COMPLETED and result.output == "Flight to Paris booked."
    assert session.waiting_for is None
    assert len(stored(store, "trip")) == len(result.messages) == 6
