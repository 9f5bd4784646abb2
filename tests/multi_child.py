"""Child process for tests/test_multi_*.py (run as ``python multi_child.py MODE STORE ID ...``).

Modes:
    handoff STORE ID TEXT   the triage agent hands the session to ``booking``, which asks a
                            question; prints ``R <result json>``
    next STORE ID TEXT      a fresh process: opens the session and sends TEXT; the triage
                            agent's model fails if it is called (the session must start with
                            ``booking``); prints ``R <result json>``
    approve-wait STORE ID TEXT
                            the concierge calls the booking agent as a tool; booking's
                            ``book`` call waits for approval; prints ``P <pending json>`` and
                            ``R <result json>``
    ask STORE ID TEXT       the concierge's booking agent asks the user a question (the session
                            waits for the answer), or, when it asked, takes TEXT as the answer;
                            prints ``R <result json>``
    approve-resume STORE ID DECISIONS
                            a fresh process resumes the session with DECISIONS (JSON list);
                            prints ``R <result json>``; every ``book`` call appends a line to
                            ``STORE.booked``
"""

from __future__ import annotations

import json
import sys
from typing import Any

from reactloop import Agent, ModelRequest, ModelResponse, ToolCall, tool
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


def concierge(store: str) -> Agent:
    @tool(requires_approval=True)
    def book(flight: str) -> str:
        """Book a flight.

        Args:
            flight: the flight number
        """
        with open(store + ".booked", "a") as f:
            f.write(flight + "\n")
        return f"booked {flight}"

    def booking_model(request: ModelRequest) -> ModelResponse | str:
        last = request.messages[-1]
        if last.role == "tool" and last.name == "book":
            return f"Done: {last.content}."
        return ModelResponse(tool_calls=[ToolCall("book", {"flight": "LH123"})])

    def concierge_model(request: ModelRequest) -> ModelResponse | str:
        last = request.messages[-1]
        if last.role == "tool" and last.name == "booking":
            return f"Your trip: {last.content}"
        return ModelResponse(tool_calls=[ToolCall("booking", {"task": "book LH123"})])

    booking = Agent(FunctionModel(booking_model), name="booking", tools=[book])
    return Agent(FunctionModel(concierge_model), name="concierge", tools=[booking.as_tool()])


def asking() -> Agent:
    def booking_model(request: ModelRequest) -> ModelResponse:
        last = request.messages[-1]
        if last.role == "user" and "date" in last.content:
            return ModelResponse(tool_calls=[ToolCall(
                "task_completion", {"result": f"Booked for {last.content}."})])
        return ModelResponse(tool_calls=[ToolCall("ask_question",
                                                  {"question": "For which date?"})])

    def concierge_model(request: ModelRequest) -> ModelResponse | str:
        last = request.messages[-1]
        if last.role == "tool" and last.name == "booking":
            return f"Your trip: {last.content}"
        return ModelResponse(tool_calls=[ToolCall("booking", {"task": "book Rome"})])

    booking = Agent(FunctionModel(booking_model), name="booking", loop_control=True)
    return Agent(FunctionModel(concierge_model), name="concierge", tools=[booking.as_tool()])


def report(result: Any) -> None:
    print("R " + json.dumps({"agent": result.agent, "output": result.output,
                             "state": result.state.value,
                             "tool_calls": result.metrics.tool_calls,
                             "input_tokens": result.metrics.input_tokens,
                             "roles": [m.role for m in result.messages]}), flush=True)


def main(mode: str, store: str, session_id: str, text: str) -> None:
    if mode == "ask":
        report(asking().session(session_id, store=store).send_sync(text))
        return
    if mode.startswith("approve-"):
        session = concierge(store).session(session_id, store=store)
        if mode == "approve-wait":
            result = session.send_sync(text)
            print("P " + json.dumps([p.to_dict() for p in result.pending_approvals]),
                  flush=True)
        else:
            result = session.resume_sync(json.loads(text))
        report(result)
        return
    triage = agents(triage_may_answer=mode == "handoff")
    session = triage.session(session_id, store=store)
    result = session.send_sync(text)
    print("R " + json.dumps({"agent": result.agent, "output": result.output,
                             "state": result.state.value,
                             "roles": [m.role for m in result.messages]}), flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:5])
