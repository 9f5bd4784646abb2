"""Crash safety: a session killed with SIGKILL mid-run loses nothing it had written, the
store stays intact, and a fresh process resumes the conversation. Also: concurrent writers."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from reactloop.context import check_pairs
from reactloop.context._units import INTERRUPTED
from reactloop.messages import message_from_dict
from reactloop.sessions import SQLiteStore

CHILD = str(Path(__file__).with_name("sessions_child.py"))

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs SIGKILL")


def spawn(*args: str, stdin: int | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, CHILD, *args], stdout=subprocess.PIPE,
                            stdin=stdin, text=True, bufsize=1)


def integrity(path: Path) -> str:
    with sqlite3.connect(path) as conn:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])


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


def resume(store: Path, session_id: str) -> tuple[list[dict[str, object]], dict[str, object]]:
    out = subprocess.run([sys.executable, CHILD, "resume", str(store), session_id, "continue"],
                         capture_output=True, text=True, check=True, timeout=120).stdout
    before = next(json.loads(x[2:]) for x in out.splitlines() if x.startswith("B "))
    result = next(json.loads(x[2:]) for x in out.splitlines() if x.startswith("R "))
    return before, result


@pytest.mark.parametrize("lines", [1, 7, 60, 201])
def test_sigkill_mid_run_loses_nothing_written_and_resumes(tmp_path: Path, lines: int) -> None:
    store = tmp_path / "sessions.sqlite3"
    written = kill_after(spawn("work", str(store), "crash"), lines)
    assert len(written) >= lines
    assert integrity(store) == "ok"
    stored = [m.to_dict() for m in SQLiteStore(store).get("crash")]
    assert stored[:len(written)] == written  # everything reported as written is there
    assert stored[0] == {"role": "user", "content": "do all the work"}

    before, result = resume(store, "crash")  # a fresh process continues the session
    assert before[:len(stored)] == stored
    history = [message_from_dict(d) for d in result["messages"]]  # type: ignore[union-attr]
    assert check_pairs(history) == []
    assert result["state"] == "completed" and result["output"] == "resumed fine"
    assert [m.content for m in history[-2:]] == ["continue", "resumed fine"]
    assert [m.to_dict() for m in SQLiteStore(store).get("crash")] == result["messages"]
    assert integrity(store) == "ok"


def test_sigkill_while_a_tool_runs_answers_the_call_as_interrupted(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite3"
    written = kill_after(spawn("block", str(store), "blocked", "3"), 10**9, marker="BLOCKED")
    # user, then 3 steps of call + result, then the 4th call whose tool never returned
    assert len(written) == 1 + 3 * 2 + 1
    assert written[-1]["tool_calls"][0]["arguments"] == {"i": 3}  # type: ignore[index]
    assert integrity(store) == "ok"
    before, result = resume(store, "blocked")
    assert before[:len(written)] == written
    interrupted = before[len(written)]
    assert interrupted["role"] == "tool" and interrupted["is_error"] is True
    assert interrupted["content"] == INTERRUPTED
    assert result["state"] == "completed"
    # the repair was stored too, so the store is a well-formed history again
    assert check_pairs(SQLiteStore(store).get("blocked")) == []


def test_concurrent_writer_processes_on_one_file(tmp_path: Path) -> None:
    store = tmp_path / "shared.sqlite3"
    n, ids = 150, [f"writer-{i}" for i in range(4)]
    children = [spawn("writer", str(store), sid, str(n), stdin=subprocess.PIPE) for sid in ids]
    try:
        start_together(children)
        for c in children:
            assert c.stdout is not None and c.stdout.readline().strip() == "done"
            assert c.wait(timeout=120) == 0
    finally:
        for c in children:
            c.kill()
            c.wait()
    s = SQLiteStore(store)
    assert sorted(i.id for i in s.list()) == ids
    for sid in ids:
        assert [m.content for m in s.get(sid)] == [f"{sid} message {i}" for i in range(n)]
    assert integrity(store) == "ok"


def start_together(children: list[subprocess.Popen[str]]) -> None:
    for c in children:  # every child is ready…
        assert c.stdout is not None and c.stdout.readline().strip() == "ready"
    for c in children:  # …then all start at once
        assert c.stdin is not None
        c.stdin.write("go\n")
        c.stdin.flush()


def test_processes_sending_to_one_session_take_turns(tmp_path: Path) -> None:
    store, k = tmp_path / "s.sqlite3", 6
    names = [f"p{i}" for i in range(4)]
    children = [spawn("turn", str(store), "shared", name, str(k), stdin=subprocess.PIPE)
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
    stored = SQLiteStore(store).get("shared")
    assert check_pairs(stored) == [] and INTERRUPTED not in [m.content for m in stored]
    turns = [i for i, m in enumerate(stored) if m.role == "user"]
    assert len(turns) == len(names) and len(stored) == len(names) * (2 * k + 2)
    seen = []
    for start in turns:  # each turn is one process's, whole and in order
        turn = stored[start:start + 2 * k + 2]
        name = turn[0].content.removeprefix("from ")
        seen.append(name)
        calls = [m.tool_calls[0].arguments for m in turn[1:-1:2]]
        assert calls == [{"tag": name, "i": i} for i in range(k)]
        assert [m.content for m in turn[2:-1:2]] == [f"{name} result {i}" for i in range(k)]
        assert turn[-1].content == f"{name} done"
    assert sorted(seen) == names


def test_a_live_writer_is_never_repaired_and_a_killed_one_frees_the_session(
        tmp_path: Path) -> None:
    from reactloop import Agent, SessionBusy
    from reactloop.testing import ScriptedModel

    store = tmp_path / "s.sqlite3"
    child = spawn("block", str(store), "live", "2")
    assert child.stdout is not None
    try:
        for line in child.stdout:  # the child is inside its third tool call, holding the lock
            if line.strip() == "BLOCKED":
                break
        before = (store.read_bytes(), SQLiteStore(store).get("live"))
        assert before[1][-1].tool_calls  # the call in flight has no result yet
        session = Agent(model=ScriptedModel(["after"])).session("live", store=store)
        assert session.messages == before[1]  # shown as stored, not "interrupted"
        with pytest.raises(SessionBusy, match=rf"pid {child.pid} on "):
            session.send_sync("may I?")
        for attempt in (lambda s: s.append("live", []), lambda s: s.delete("live"),
                        lambda s: s.clear("live"), lambda s: s.replace("live", [])):
            with pytest.raises(SessionBusy):
                attempt(SQLiteStore(store))
        assert (store.read_bytes(), SQLiteStore(store).get("live")) == before
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    finally:
        child.kill()
        child.wait()
    session.wait = 60  # the kernel released the dead writer's lock: no waiting for a lease
    assert session.send_sync("may I?").output == "after"
    stored = SQLiteStore(store).get("live")
    assert stored[:len(before[1])] == before[1]
    assert stored[len(before[1])].content == INTERRUPTED and check_pairs(stored) == []


def test_waiting_for_user_resumes_in_another_process(tmp_path: Path) -> None:
    from reactloop import Agent, ModelRequest, RunState, ToolCall
    from reactloop.testing import FunctionModel

    store = tmp_path / "s.sqlite3"
    out = subprocess.run([sys.executable, CHILD, "ask", str(store), "trip"],
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
    assert len(SQLiteStore(store).get("trip")) == len(result.messages) == 6
