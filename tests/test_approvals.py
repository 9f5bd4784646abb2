"""Approvals (issue 14) with scripted models: a gated call waits for a person, the other calls
of its response run, and decisions — approve, deny, edit — continue the run from a saved run,
a session, or another process. Decisions are bound to call id and arguments hash; nothing
runs twice and no call is left without a result, also across SIGKILL."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from reactloop import (
    Agent,
    ApprovalError,
    Decision,
    ModelResponse,
    PendingApproval,
    RunContext,
    RunState,
    ToolCall,
    ToolContext,
    UserError,
    tool,
)
from reactloop.approvals import apply_decisions, arguments_hash, pending_approvals
from reactloop.context import check_pairs
from reactloop.context._units import INTERRUPTED
from reactloop.messages import message_from_dict
from reactloop.sessions import SQLiteStore
from reactloop.testing import ScriptedModel

CHILD = str(Path(__file__).with_name("approvals_child.py"))
RAN: list[str] = []


@pytest.fixture(autouse=True)
def _reset() -> Iterator[None]:
    RAN.clear()
    yield


@tool
def lookup(account: str) -> str:
    """Look an account up.

    Args:
        account: the account
    """
    RAN.append(f"lookup {account}")
    return f"{account}: balance 100"


@tool(requires_approval=True)
def transfer(amount: int, to: str) -> str:
    """Move money.

    Args:
        amount: how much
        to: where to
    """
    RAN.append(f"transfer {amount} {to}")
    return f"sent {amount} to {to}"


def calls(*pairs: tuple[str, dict[str, Any]]) -> ModelResponse:
    return ModelResponse(tool_calls=[ToolCall(name, args) for name, args in pairs])


LOOKUP_AND_TRANSFER = calls(("lookup", {"account": "A"}), ("transfer", {"amount": 50, "to": "B"}))


def waiting_run(*script: Any, **agent_kw: Any) -> tuple[Agent, ScriptedModel, Any]:
    model = ScriptedModel([LOOKUP_AND_TRANSFER, *script])
    agent = Agent(model=model, tools=[lookup, transfer], **agent_kw)
    return agent, model, agent.run_sync("Move 50 from A to B")


def test_a_gated_call_waits_while_the_other_calls_of_its_response_run() -> None:
    _, model, result = waiting_run("unused")
    assert result.state is RunState.WAITING_FOR_APPROVAL
    assert RAN == ["lookup A"]  # the other call ran; the transfer did not
    [p] = result.pending_approvals
    assert (p.tool_name, dict(p.arguments)) == ("transfer", {"amount": 50, "to": "B"})
    assert p.arguments_hash == arguments_hash("transfer", {"amount": 50, "to": "B"})
    assert p.call_id == result.messages[1].tool_calls[1].id
    assert [m.role for m in result.messages] == ["user", "assistant", "tool"]
    assert model.remaining == 1  # no model call while waiting
    assert "transfer" in result.output
    assert result.to_dict()["pending_approvals"] == [p.to_dict()]
    saved = json.loads(result.save())
    assert saved["pending_approvals"] == [p.to_dict()]  # part of RunContext.to_dict()
    assert RunContext.from_dict(saved).pending_approvals == [p]


def test_approve_runs_the_call_once_and_the_same_run_goes_on() -> None:
    agent, model, result = waiting_run("Sent.")
    [p] = result.pending_approvals
    done = agent.resume_sync(result.save(), decisions=[p.approve()])
    assert done.state is RunState.COMPLETED and done.output == "Sent."
    assert RAN == ["lookup A", "transfer 50 B"]
    seen = model.requests[-1].messages
    assert [m.content for m in seen if m.role == "tool"] == ["A: balance 100", "sent 50 to B"]
    assert done.run_id == result.run_id and done.metrics.iterations == 2
    assert check_pairs(done.messages) == [] and done.pending_approvals == ()
    with pytest.raises(ApprovalError, match="already approved"):
        agent.resume_sync(done.save(), decisions=[p.approve()])
    assert RAN == ["lookup A", "transfer 50 B"]  # nothing ran twice


def test_deny_answers_the_call_with_the_reason_the_model_sees() -> None:
    agent, model, result = waiting_run("I did not send it.")
    [p] = result.pending_approvals
    done = agent.resume_sync(result, decisions=[p.deny("B is not a known payee")])
    assert RAN == ["lookup A"] and done.state is RunState.COMPLETED
    answer = model.requests[-1].messages[-1]
    assert answer.role == "tool" and answer.is_error and answer.tool_call_id == p.call_id
    assert answer.content == "The user denied this tool call. Reason: B is not a known payee"
    assert done.steps[-2].results[0].error == "denied by the user: B is not a known payee"


def test_edit_runs_the_call_with_the_edited_arguments_and_says_so() -> None:
    agent, model, result = waiting_run("Sent 20.")
    [p] = result.pending_approvals
    done = agent.resume_sync(result.save(), decisions=[p.edit({"amount": 20, "to": "B"})])
    assert RAN == ["lookup A", "transfer 20 B"] and done.output == "Sent 20."
    answer = model.requests[-1].messages[-1].content
    assert answer == '(The user edited the arguments to {"amount": 20, "to": "B"}.)\nsent 20 to B'


def test_a_mixed_batch_every_call_answered_once() -> None:
    batch = calls(("transfer", {"amount": 1, "to": "X"}), ("lookup", {"account": "A"}),
                  ("transfer", {"amount": 2, "to": "Y"}), ("transfer", {"amount": 3, "to": "Z"}))
    model = ScriptedModel([batch, "All handled."])
    agent = Agent(model=model, tools=[lookup, transfer])
    result = agent.run_sync("three transfers")
    assert RAN == ["lookup A"] and len(result.pending_approvals) == 3
    x, y, z = result.pending_approvals
    done = agent.resume_sync(result.save(), decisions=[z.edit({"amount": 30, "to": "Z"}),
                                                       x.approve(), y.deny("no")])
    assert sorted(RAN) == ["lookup A", "transfer 1 X", "transfer 30 Z"]
    assert done.state is RunState.COMPLETED and check_pairs(done.messages) == []
    answers = {m.tool_call_id: m.content for m in done.messages if m.role == "tool"}
    assert len(answers) == 4 and answers[y.call_id].startswith("The user denied")
    assert done.metrics.tool_calls == 3  # lookup, then the two approved transfers


def test_undecided_calls_keep_the_run_waiting() -> None:
    batch = calls(("transfer", {"amount": 1, "to": "X"}), ("transfer", {"amount": 2, "to": "Y"}))
    model = ScriptedModel([batch, "Both done."])
    agent = Agent(model=model, tools=[transfer])
    first = agent.run_sync("two transfers")
    x, y = first.pending_approvals
    second = agent.resume_sync(first.save(), decisions=[x.approve()])
    assert second.state is RunState.WAITING_FOR_APPROVAL and second.pending_approvals == (y,)
    assert RAN == ["transfer 1 X"] and model.remaining == 1
    third = agent.resume_sync(second.save(), decisions=[y.approve()])
    assert third.state is RunState.COMPLETED and RAN == ["transfer 1 X", "transfer 2 Y"]


def test_a_decision_for_other_arguments_is_refused_and_nothing_runs() -> None:
    agent, _, result = waiting_run("unused")
    [p] = result.pending_approvals
    forged = Decision(p.call_id, arguments_hash("transfer", {"amount": 5000, "to": "B"}), True)
    with pytest.raises(ApprovalError, match="made for other arguments") as info:
        agent.resume_sync(result.save(), decisions=[forged])
    assert info.value.call_id == p.call_id
    assert RAN == ["lookup A"]
    assert pending_approvals(result.messages) == [p]  # still waiting


def test_unknown_duplicate_and_malformed_decisions_are_clear_errors() -> None:
    agent, _, result = waiting_run("unused")
    [p] = result.pending_approvals
    with pytest.raises(ApprovalError, match=r"no tool call 'nope' waits for approval \(waiting: "):
        apply_decisions(result.messages, [Decision("nope", p.arguments_hash, True)])
    with pytest.raises(ApprovalError, match="two decisions"):
        apply_decisions(result.messages, [p.approve(), p.deny("x")])
    lookup_id = result.messages[1].tool_calls[0].id
    with pytest.raises(ApprovalError, match="no tool call"):
        apply_decisions(result.messages, [Decision(lookup_id or "", "h", True)])
    with pytest.raises(ApprovalError, match="needs call_id"):
        Decision.from_dict({"call_id": p.call_id})
    with pytest.raises(UserError, match="nothing to resume"):
        agent.resume_sync(result.save())
    with pytest.raises(UserError, match="not both"):
        agent.resume_sync(result.save(), "hello", decisions=[p.approve()])
    assert RAN == ["lookup A"]


def test_decisions_travel_as_json() -> None:
    agent, _, result = waiting_run("Sent.")
    [p] = result.pending_approvals
    body = json.loads(json.dumps([p.edit({"amount": 7, "to": "B"}).to_dict()]))
    assert PendingApproval.from_dict(p.to_dict()) == p
    done = agent.resume_sync(result.save(), decisions=body)
    assert RAN[-1] == "transfer 7 B" and done.state is RunState.COMPLETED


def test_a_new_message_while_calls_wait_is_refused(tmp_path: Path) -> None:
    agent, _, result = waiting_run("unused")
    with pytest.raises(UserError, match=r"transfer \(.*\) wait for approval"):
        agent.run_sync("and now?", history=result.messages)
    with pytest.raises(UserError, match="wait for approval"):
        agent.resume_sync(result.save(), "and now?")
    session = Agent(model=ScriptedModel([LOOKUP_AND_TRANSFER]), tools=[lookup, transfer]
                    ).session("s", store=tmp_path / "s.sqlite3")
    session.send_sync("go")
    with pytest.raises(UserError, match="wait for approval"):
        session.send_sync("next")
    assert len(session.pending_approvals) == 1


def test_events_announce_requests_and_decisions() -> None:
    model = ScriptedModel([LOOKUP_AND_TRANSFER, "Sent."])
    agent = Agent(model=model, tools=[lookup, transfer])

    async def main() -> tuple[list[Any], list[Any]]:
        first = [e async for e in agent.stream("go")]
        [p] = first[-1].result.pending_approvals
        second = [e async for e in agent.resume_stream(first[-1].result.save(),
                                                       decisions=[p.approve()])]
        return first, second

    first, second = asyncio.run(main())
    types = [e.type for e in first]
    assert types.index("tool_result") < types.index("approval_requested") < types.index("run_end")
    requested = next(e for e in first if e.type == "approval_requested")
    assert requested.to_dict()["approval"]["tool_name"] == "transfer"
    decided = next(e for e in second if e.type == "approval_decided")
    assert decided.to_dict()["decision"]["approved"] is True
    assert decided.call.name == "transfer"
    kinds = [e.type for e in second]
    assert kinds.index("approval_decided") < kinds.index("tool_result") < kinds.index("run_end")
    assert second[-1].result.state is RunState.COMPLETED


def test_policies_decide_which_calls_wait() -> None:
    def big(arguments: Mapping[str, Any], context: ToolContext) -> bool:
        assert context.tool_name == "transfer" and context.call_id
        return int(arguments["amount"]) > 100

    @tool(requires_approval=big)
    def pay(amount: int, to: str) -> str:
        """Pay.

        Args:
            amount: how much
            to: whom
        """
        return "paid"

    small_and_big = calls(("transfer", {"amount": 5, "to": "A"}),
                          ("transfer", {"amount": 500, "to": "B"}),
                          ("transfer", {"amount": "lots", "to": "C"}))
    agent = Agent(model=ScriptedModel([small_and_big]), tools=[pay.renamed("transfer")])
    result = agent.run_sync("pay")
    # the rule survives renaming; only the big one waits, the invalid one errs at once
    assert [dict(p.arguments)["amount"] for p in result.pending_approvals] == [500]
    assert [m.is_error for m in result.messages if m.role == "tool"] == [False, True]
    everything = Agent(model=ScriptedModel([calls(("lookup", {"account": "A"})),
                                            calls(("task_completion", {"result": "ok"}))]),
                       tools=[lookup], approve=True, loop_control=True)
    waiting = everything.run_sync("go")
    assert [p.tool_name for p in waiting.pending_approvals] == ["lookup"]
    done = everything.resume_sync(waiting.save(), decisions=[waiting.pending_approvals[0].approve()])
    assert done.state is RunState.COMPLETED and done.output == "ok"  # control tools never wait
    planner = Agent(model=ScriptedModel([calls(("update_plan", {"goal": "g", "steps": ["a"]})),
                                         "planned"]), planning=True, approve=True)
    assert planner.run_sync("plan").state is RunState.COMPLETED  # run-state tools never wait
    with pytest.raises(UserError, match="requires_approval / approve"):
        Agent(model=ScriptedModel([]), approve="yes")  # type: ignore[arg-type]


def test_a_failing_rule_asks_a_person() -> None:
    def broken(arguments: Mapping[str, Any], context: ToolContext) -> bool:
        raise RuntimeError("rule bug")

    agent = Agent(model=ScriptedModel([calls(("lookup", {"account": "A"}))]), tools=[lookup],
                  approve=broken)
    assert agent.run_sync("go").state is RunState.WAITING_FOR_APPROVAL and RAN == []


def test_the_iteration_budget_carries_over() -> None:
    model = ScriptedModel([LOOKUP_AND_TRANSFER, calls(("lookup", {"account": "C"})), "last"])
    agent = Agent(model=model, tools=[lookup, transfer], max_iterations=3)
    first = agent.run_sync("go")
    [p] = first.pending_approvals
    done = agent.resume_sync(first.save(), decisions=[p.approve()])
    assert done.metrics.iterations == 3 and done.state is RunState.MAX_ITERATIONS
    assert model.requests[-1].tools == ()  # the third iteration was the forced last one


def test_conversation_and_session_resume_in_process(tmp_path: Path) -> None:
    conversation = Agent(model=ScriptedModel([LOOKUP_AND_TRANSFER, "Sent."]),
                         tools=[lookup, transfer]).conversation()
    conversation.send_sync("go")
    [p] = conversation.pending_approvals
    assert asyncio.run(conversation.resume([p.approve()])).output == "Sent."
    assert conversation.pending_approvals == []

    store = tmp_path / "s.sqlite3"
    session = Agent(model=ScriptedModel([LOOKUP_AND_TRANSFER, "Denied it."]),
                    tools=[lookup, transfer]).session("t", store=store)
    first = session.send_sync("go")
    [q] = session.pending_approvals
    result = session.resume_sync([q.deny("not today")])
    assert result.output == "Denied it."
    assert result.run_id == first.run_id  # the same run goes on, from the stored history
    assert [m.to_dict() for m in SQLiteStore(store).get("t")] == \
        [m.to_dict() for m in result.messages]
    stored_decision = SQLiteStore(store).get("t")[1].metadata["approvals"][q.call_id]
    assert stored_decision["decision"] == {"call_id": q.call_id, "arguments_hash":
                                           q.arguments_hash, "approved": False,
                                           "reason": "not today"}


# ---- other processes, and SIGKILL ------------------------------------------------------------
needs_sigkill = pytest.mark.skipif(sys.platform == "win32", reason="needs SIGKILL")


def _spawn(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, CHILD, *args], stdout=subprocess.PIPE, text=True,
                            bufsize=1)


def _kill_at(child: subprocess.Popen[str], prefix: str) -> str:
    """Read the child's lines until one starts with ``prefix``; SIGKILL it; return the line."""
    assert child.stdout is not None
    try:
        for line in child.stdout:
            if line.startswith(prefix):
                os.kill(child.pid, signal.SIGKILL)
                return line.strip()
        raise AssertionError(f"the child ended without printing {prefix!r}")
    finally:
        child.kill()
        child.wait()


def _decide(store: Path, log: Path, decisions: list[dict[str, Any]]) -> tuple[list[Any], Any]:
    out = subprocess.run([sys.executable, CHILD, "decide", str(store), "s", str(log),
                          json.dumps(decisions)], capture_output=True, text=True, check=True,
                         timeout=120).stdout
    before = next(json.loads(x[2:]) for x in out.splitlines() if x.startswith("B "))
    return before, next(json.loads(x[2:]) for x in out.splitlines() if x.startswith("R "))


def _integrity(path: Path) -> str:
    with sqlite3.connect(path) as conn:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])


@needs_sigkill
def test_sigkill_between_request_and_decision_loses_nothing(tmp_path: Path) -> None:
    store, log = tmp_path / "s.sqlite3", tmp_path / "ran.log"
    line = _kill_at(_spawn("request", str(store), "s", str(log)), "P ")
    [requested] = json.loads(line[2:])
    assert _integrity(store) == "ok"
    assert log.read_text().splitlines() == ["lookup A"]

    before, result = _decide(store, log, [{"approve": True}])  # a fresh process decides
    assert before == [requested]  # the pending approval survived the kill, hash and all
    assert result["state"] == "completed" and result["output"] == "Done: the transfer is settled."
    assert log.read_text().splitlines() == ["lookup A", "transfer 50 B"]  # each ran once
    history = [message_from_dict(d) for d in result["messages"]]
    assert check_pairs(history) == []
    assert [m.to_dict() for m in SQLiteStore(store).get("s")] == result["messages"]


@needs_sigkill
def test_sigkill_while_the_other_calls_run_keeps_the_approval_waiting(tmp_path: Path) -> None:
    store, log = tmp_path / "s.sqlite3", tmp_path / "ran.log"
    _kill_at(_spawn("block-other", str(store), "s", str(log)), "BLOCKED")
    before, result = _decide(store, log, [{"deny": "not now"}])
    assert [p["tool_name"] for p in before] == ["transfer"]  # waiting, not interrupted
    tools = [m for m in result["messages"] if m["role"] == "tool"]
    assert [t["name"] for t in tools] == ["lookup", "transfer"]
    assert tools[0]["content"] == INTERRUPTED  # the call the kill interrupted
    assert tools[1]["content"] == "The user denied this tool call. Reason: not now"
    assert not log.exists()  # nothing ran at all


@needs_sigkill
def test_sigkill_while_an_approved_call_runs_never_runs_it_twice(tmp_path: Path) -> None:
    store, log = tmp_path / "s.sqlite3", tmp_path / "ran.log"
    _kill_at(_spawn("request", str(store), "s", str(log)), "P ")
    _kill_at(_spawn("block-run", str(store), "s", str(log)), "RUNNING")
    # the decision was stored before the call ran: on reopening, the call is answered as
    # interrupted instead of waiting (and running) again
    session = Agent(model=ScriptedModel([]), tools=[lookup, transfer]).session(
        "s", store=store)
    assert session.pending_approvals == []
    last = session.messages[-1]
    assert last.role == "tool" and last.name == "transfer" and last.content == INTERRUPTED
    assert log.read_text().splitlines() == ["lookup A"]
    assert check_pairs(session.messages) == []
