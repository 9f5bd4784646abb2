"""Child processes for tests/test_approvals.py (``python approvals_child.py MODE STORE ID LOG``).

Every tool run appends a line to LOG, so the parent can count what ran, across processes.

Modes:
    request      a session whose model calls ``lookup`` and ``transfer`` (which needs approval)
                 in one response; prints ``P <pending json>`` when the run waits, then blocks
                 until killed
    block-other  the same, but ``lookup`` blocks forever after printing ``BLOCKED`` (a kill
                 while the other calls of the batch run)
    decide JSON  opens the session in a fresh process, prints ``B <pending json>``, resumes
                 with the decisions in JSON (``[{"approve"|"deny"|"edit": ...}]`` by index),
                 prints ``R <result json>``
    block-run    like ``decide`` with one approval, but ``transfer`` blocks forever after
                 printing ``RUNNING`` (a kill while an approved call runs)
"""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

from reactloop import Agent, ModelResponse, ToolCall, tool
from reactloop.testing import ScriptedModel

BLOCK: set[str] = set()


def agent(log: Path, script: list[ModelResponse | str]) -> Agent:
    def note(line: str) -> None:
        with log.open("a", encoding="utf-8") as f:
            f.write(line + "\n")

    @tool
    def lookup(account: str) -> str:
        """Look an account up.

        Args:
            account: the account
        """
        if "lookup" in BLOCK:
            print("BLOCKED", flush=True)
            threading.Event().wait()  # until the parent kills us
        note(f"lookup {account}")
        return f"{account}: balance 100"

    @tool(requires_approval=True)
    def transfer(amount: int, to: str) -> str:
        """Move money.

        Args:
            amount: how much
            to: where to
        """
        if "transfer" in BLOCK:
            print("RUNNING", flush=True)
            threading.Event().wait()
        note(f"transfer {amount} {to}")
        return f"sent {amount} to {to}"

    return Agent(model=ScriptedModel(script), tools=[lookup, transfer])


def main(argv: list[str]) -> None:
    mode, store, session_id, log = argv[0], argv[1], argv[2], Path(argv[3])
    if mode in ("request", "block-other"):
        if mode == "block-other":
            BLOCK.add("lookup")
        first = ModelResponse(tool_calls=[ToolCall("lookup", {"account": "A"}),
                                          ToolCall("transfer", {"amount": 50, "to": "B"})])
        session = agent(log, [first]).session(session_id, store=store)
        result = session.send_sync("Move 50 from A to B")
        print("P " + json.dumps([p.to_dict() for p in result.pending_approvals]), flush=True)
        threading.Event().wait()  # the person has not decided yet; the parent kills us
    elif mode in ("decide", "block-run"):
        if mode == "block-run":
            BLOCK.add("transfer")
        session = agent(log, ["Done: the transfer is settled."]).session(session_id, store=store)
        pending = session.pending_approvals
        print("B " + json.dumps([p.to_dict() for p in pending]), flush=True)
        wanted = json.loads(argv[4]) if len(argv) > 4 else [{"approve": True}]
        decisions = []
        for p, w in zip(pending, wanted, strict=False):
            if "deny" in w:
                decisions.append(p.deny(w["deny"]))
            elif "edit" in w:
                decisions.append(p.edit(w["edit"]))
            else:
                decisions.append(p.approve())
        result = session.resume_sync(decisions)
        print("R " + json.dumps({"state": result.state.value, "output": result.output,
                                 "messages": [m.to_dict() for m in result.messages]}),
              flush=True)
    else:
        raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
