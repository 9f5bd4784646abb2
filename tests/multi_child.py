"""Child process for tests/test_multi_*.py (run as ``python multi_child.py MODE STORE ID ...``).

Modes:
    handoff STORE ID TEXT   the triage agent hands the session to ``booking``, which asks a
                            question; prints ``R <result json>``
    next STORE ID TEXT      a fresh process: opens the session and sends TEXT; the triage
                            agent's model fails if it is called (the session must start with
                            ``booking``); prints ``R <result json>``
"""

from __future__ import annotations

import json
import sys

from reactloop import Agent, ModelRequest, ModelResponse, ToolCall
from reactloop.testing import FunctionModel


def booking_model(request: ModelRequest) -> str:
    last = [m for m in request.messages if m.role == "user"][-1]
    if "date" not in last.content:
        return "For which date?"
    return f"Booked for {last.content}."


def agents(triage_may_answer: bool) -> Agent:
    booking = Agent(FunctionModel(booking_model), name="booking",
                    instructions="You book flights.")

    def triage_model(request: ModelRequest) -> ModelResponse:
        if not triage_may_answer:
            raise AssertionError("the triage agent was asked although booking spoke last")
        return ModelResponse(tool_calls=[ToolCall("transfer_to_booking", {})])

    return Agent(FunctionModel(triage_model), name="triage", handoffs=[booking],
                 instructions="Route the user to the right specialist.")


def main(mode: str, store: str, session_id: str, text: str) -> None:
    triage = agents(triage_may_answer=mode == "handoff")
    session = triage.session(session_id, store=store)
    result = session.send_sync(text)
    print("R " + json.dumps({"agent": result.agent, "output": result.output,
                             "state": result.state.value,
                             "roles": [m.role for m in result.messages]}), flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:5])
