"""Child processes for tests/test_sessions_*.py (run as ``python sessions_child.py MODE ...``).

Modes:
    work STORE ID            a session that calls a tool in a loop; prints ``W <message>`` after
                             each message is committed, until the parent kills it
    block STORE ID N         the same, but the N-th tool call blocks forever after printing
                             ``BLOCKED``
    resume STORE ID TEXT     opens the session, prints its history (``B …``), sends TEXT, prints
                             ``R <result json>``
    ask STORE ID             a loop-control agent that asks the user a question
    writer STORE ID N        prints ``ready``, waits for a line on stdin, appends N messages
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Sequence

from reactloop import Agent, Message, ModelRequest, ToolCall
from reactloop.sessions import SQLiteStore
from reactloop.testing import FunctionModel, ScriptedModel


class ReportingStore(SQLiteStore):
    """Reports every message on stdout once its transaction has committed."""

    def append(self, session_id: str, messages: Sequence[Message]) -> None:
        super().append(session_id, messages)
        for m in messages:
            print("W " + json.dumps(m.to_dict()), flush=True)


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
        store = SQLiteStore(store_path)
        store.list()  # connect before saying we are ready
        print("ready", flush=True)
        sys.stdin.readline()
        for i in range(int(argv[3])):
            store.append(session_id, [Message.user(f"{session_id} message {i}")])
        print("done", flush=True)
    else:
        raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
