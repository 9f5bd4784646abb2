"""Child processes for tests/test_sessions_*.py (run as ``python sessions_child.py MODE ...``).

STORE is what a user passes as ``store=``: a SQLite file path or a ``postgresql://`` URL.

Modes:
    work STORE ID            a session that calls a tool in a loop; prints ``W <message>`` after
                             each message is committed, until the parent kills it
    block STORE ID N         the same, but the N-th tool call blocks forever after printing
                             ``BLOCKED``
    resume STORE ID TEXT     opens the session, prints its history (``B …``), sends TEXT, prints
                             ``R <result json>``
    ask STORE ID             a loop-control agent that asks the user a question
    writer STORE ID N        prints ``ready``, waits for a line on stdin, appends N messages
    turn STORE ID NAME K     prints ``ready``, waits for a line on stdin, then sends one message
                             whose run calls ``work`` K times (waiting for other writers)
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Sequence

from reactloop import Agent, Message, ModelRequest, ToolCall
from reactloop.sessions import SessionInfo, SessionWriter, open_store
from reactloop.testing import FunctionModel, ScriptedModel


class ReportingWriter:
    """A session writer that reports every message on stdout once it has committed."""

    def __init__(self, inner: SessionWriter) -> None:
        self.inner = inner
        self.session_id = inner.session_id

    def get(self) -> list[Message]:
        return self.inner.get()

    def append(self, messages: Sequence[Message]) -> None:
        self.inner.append(messages)
        for m in messages:
            print("W " + json.dumps(m.to_dict()), flush=True)

    def replace(self, messages: Sequence[Message]) -> None:
        self.inner.replace(messages)

    def close(self) -> None:
        self.inner.close()

    def __enter__(self) -> ReportingWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ReportingStore:
    """A store (SQLite or PostgreSQL) whose session writers report what they commit."""

    def __init__(self, store: str) -> None:
        self.inner = open_store(store)

    def get(self, session_id: str) -> list[Message]:
        return self.inner.get(session_id)

    def writer(self, session_id: str) -> ReportingWriter:
        return ReportingWriter(self.inner.writer(session_id))

    def append(self, session_id: str, messages: Sequence[Message]) -> None:
        self.inner.append(session_id, messages)

    def replace(self, session_id: str, messages: Sequence[Message]) -> None:
        self.inner.replace(session_id, messages)

    def clear(self, session_id: str) -> None:
        self.inner.clear(session_id)

    def delete(self, session_id: str) -> bool:
        return self.inner.delete(session_id)

    def close(self) -> None:
        self.inner.close()

    def list(self) -> list[SessionInfo]:
        return self.inner.list()


def worker_agent(block_at: int | None) -> Agent:
    def work(i: int) -> str:
        """Do one unit of work.

        Args:
            i: the unit's number
        """
        if i == block_at:
            print("BLOCKED", flush=True)
            threading.Event().wait()  # until the parent kills us
        return f"result {i} " + "x" * 300

    def next_call(request: ModelRequest) -> ToolCall:
        return ToolCall("work", {"i": sum(m.role == "tool" for m in request.messages)})

    return Agent(model=FunctionModel(next_call), tools=[work], max_iterations=3000)


def main(argv: list[str]) -> None:
    mode, store_path, session_id = argv[:3]
    if mode in ("work", "block"):
        block_at = int(argv[3]) if mode == "block" else None
        session = worker_agent(block_at).session(session_id, store=ReportingStore(store_path))
        session.send_sync("do all the work")
    elif mode == "resume":
        agent = Agent(model=FunctionModel(lambda r: "resumed fine"))
        session = agent.session(session_id, store=store_path)
        print("B " + json.dumps([m.to_dict() for m in session.messages]), flush=True)
        result = session.send_sync(argv[3])
        print("R " + json.dumps({"state": result.state.value, "output": result.output,
                                 "messages": [m.to_dict() for m in result.messages]}),
              flush=True)
    elif mode == "ask":
        model = ScriptedModel([ToolCall("ask_question", {"question": "Which city?"})])
        agent = Agent(model=model, loop_control=True)
        result = agent.session(session_id, store=store_path).send_sync("Book me a flight")
        print("R " + json.dumps({"state": result.state.value, "output": result.output}),
              flush=True)
    elif mode == "writer":
        store = open_store(store_path)
        store.list()  # connect before saying we are ready
        print("ready", flush=True)
        sys.stdin.readline()
        for i in range(int(argv[3])):
            store.append(session_id, [Message.user(f"{session_id} message {i}")])
        print("done", flush=True)
    elif mode == "turn":
        turn(store_path, session_id, argv[3], int(argv[4]))
    else:
        raise SystemExit(f"unknown mode {mode!r}")


def turn(store: str, session_id: str, name: str, k: int) -> None:
    def work(tag: str, i: int) -> str:
        """Do one unit of work.

        Args:
            tag: who asks
            i: the unit's number
        """
        return f"{tag} result {i}"

    def next_call(request: ModelRequest) -> ToolCall | str:
        prompt = max(i for i, m in enumerate(request.messages) if m.role == "user")
        done = sum(m.role == "tool" for m in request.messages[prompt:])
        return ToolCall("work", {"tag": name, "i": done}) if done < k else f"{name} done"

    agent = Agent(model=FunctionModel(next_call), tools=[work], max_iterations=k + 2)
    session = agent.session(session_id, store=store)
    session.wait = 300
    print("ready", flush=True)
    sys.stdin.readline()
    result = session.send_sync(f"from {name}")
    print("R " + json.dumps({"state": result.state.value, "output": result.output}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
