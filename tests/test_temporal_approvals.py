"""Approvals on Temporal: a run that reaches a gated tool call waits in its workflow, durably,
for decisions (``RunHandle.decide``, ``reactloop run --temporal ... --approve-all``), against
the real dev server (the ``temporal_server`` fixture). Tools count their side effects in a
file (tests/temporal_agents.py), so "ran exactly once" is checked, not assumed.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("temporalio")

from reactloop import RunState
from reactloop.approvals import Decision, arguments_hash
from reactloop.errors import ApprovalError, UserError
from test_temporal import (
    Workers,
    _cli,
    _kill,
    _lines,
    _queue,
    _terminal,
    _with_worker,
    running_workers,
)

pytestmark = pytest.mark.slow


@pytest.fixture
def workers(temporal_server: str, tmp_path: Path) -> Iterator[Workers]:
    yield from running_workers(temporal_server, tmp_path)


def _local(decide: Any) -> Any:
    """The same agent in-process: waiting, then resumed with ``decide(pending)``."""
    import temporal_agents

    agent = temporal_agents.paying_agent
    waiting = agent.run_sync("Pay the bill.")
    return agent.resume_sync(waiting, decisions=[decide(waiting.pending_approvals[0])])


def test_an_approved_call_runs_once_and_the_run_completes(
        temporal_server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import temporal_agents

    log = tmp_path / "log"

    async def body(client: Any, queue: str) -> Any:
        handle = await temporal_agents.paying.start("Pay the bill.", client=client,
                                                    task_queue=queue, session=True)
        first = [e.type async for _, e in handle.events()]
        assert "approval_requested" in first and "approval_decided" not in first
        waiting = await handle.result()
        assert waiting.state is RunState.WAITING_FOR_APPROVAL, waiting.output
        [p] = waiting.pending_approvals
        assert (p.call_id, p.tool_name, dict(p.arguments)) == ("pay-1", "transfer",
                                                               {"amount": 100})
        assert [line[:2] for line in _lines(log)] == [["record", "1"]]  # the other call ran
        assert (await handle.status())["waiting_for_approval"]
        # refused, recording and running nothing: other arguments, an unknown call, a message
        forged = Decision(p.call_id, arguments_hash("transfer", {"amount": 10_000}), True)
        with pytest.raises(ApprovalError, match="made for other arguments"):
            await handle.decide([forged])
        with pytest.raises(ApprovalError, match="no tool call 'nope' waits"):
            await handle.decide([Decision("nope", p.arguments_hash, True)])
        with pytest.raises(UserError, match="wait for approval"):
            await handle.send("never mind")
        assert [line[0] for line in _lines(log)] == ["record"]
        turn = await handle.decide([p.approve()])
        events = [e.type async for _, e in handle.events()]
        done = await handle.result()
        with pytest.raises(ApprovalError, match="already approved"):  # a decision applies once
            await handle.decide([p.approve()])
        await handle.close()
        return turn, events, done

    monkeypatch.setenv("REACTLOOP_TEST_LOG", str(log))
    turn, events, done = _with_worker(temporal_agents.paying, temporal_server, body)
    assert turn == 2 and events[0] == "run_start" and events[-1] == "run_end"
    assert "approval_decided" in events and "approval_requested" not in events
    assert done.state is RunState.COMPLETED and not done.pending_approvals
    assert [line[:2] for line in _lines(log)] == [["record", "1"], ["transfer", "100"]]
    local = _local(lambda p: p.approve())  # what the same decision does in-process
    assert done.output == local.output == "Saw: step 1 recorded | transferred 100"
    assert [(m.role, m.content) for m in done.messages] == [
        (m.role, m.content) for m in local.messages]


def test_a_denied_call_answers_the_model_and_an_edit_runs_the_edited_call(
        temporal_server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import temporal_agents

    async def body(client: Any, queue: str) -> Any:
        out = []
        for decide in (lambda p: p.deny("too much"), lambda p: p.edit({"amount": 5})):
            handle = await temporal_agents.paying.start("Pay the bill.", client=client,
                                                        task_queue=queue)
            waiting = await handle.result()
            await handle.decide([decide(waiting.pending_approvals[0])])
            out.append(await handle.result())
        return out

    log = tmp_path / "log"
    monkeypatch.setenv("REACTLOOP_TEST_LOG", str(log))
    denied, edited = _with_worker(temporal_agents.paying, temporal_server, body)
    assert denied.state is edited.state is RunState.COMPLETED
    assert denied.output == _local(lambda p: p.deny("too much")).output
    assert "The user denied this tool call. Reason: too much" in denied.output
    assert "transferred 5" in edited.output and "edited the arguments" in edited.output
    transfers = [line[1] for line in _lines(log) if line[0] == "transfer"]
    assert transfers == ["5"]  # the denied call never ran; the edited one ran once


def test_the_approval_wait_survives_a_worker_restart(workers: Workers, tmp_path: Path) -> None:
    queue, run_id = _queue(), f"pay-{uuid.uuid4().hex[:6]}"
    first = workers.start("paying", queue)
    common = ["--temporal", workers.address, "--agent", "temporal_agents:paying",
              "--task-queue", queue, "--id", run_id]
    asked = _cli(*common, "Pay the bill.", env=workers.env)
    assert asked.returncode == 7, asked.stderr  # waiting for approval, as a local run
    assert "transfer (pay-1)" in asked.stderr
    assert f"--task-queue {queue} --id {run_id} --approve-all" in asked.stderr  # how to go on
    assert [line[0] for line in _lines(tmp_path / "log")] == ["record"]
    _kill(first)
    second = workers.start("paying", queue)
    done = _cli(*common, "--approve-all", env=workers.env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Saw: step 1 recorded | transferred 100"
    transfers = [line for line in _lines(tmp_path / "log") if line[0] == "transfer"]
    assert transfers == [["transfer", "100", str(second.pid)]]  # once, after the restart
    # --deny-all with a new task: decided in the same command, the model reads the denial
    denied = _cli(*common[:-1], f"{run_id}-2", "--deny-all", "Pay the bill.", env=workers.env)
    assert denied.returncode == 0, denied.stderr
    assert "Reason: denied by --deny-all" in denied.stdout
    assert len([line for line in _lines(tmp_path / "log") if line[0] == "transfer"]) == 1


def test_run_temporal_on_a_terminal_asks_and_y_approves(workers: Workers,
                                                        tmp_path: Path) -> None:
    queue = _queue()
    workers.start("paying", queue)
    child = _terminal(workers, "paying", queue, "Pay the bill.")
    import pexpect  # there: _terminal skips without it
    child.expect_exact('transfer({"amount": 100}) needs your approval.')
    child.expect_exact("approve? [y]es / [n]o / [e]dit:")
    assert [line[0] for line in _lines(tmp_path / "log")] == ["record"]  # not yet
    child.sendline("y")
    child.expect_exact("transfer: approved")
    child.expect_exact("Saw: step 1 recorded | transferred 100")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert [line[:2] for line in _lines(tmp_path / "log")] == [["record", "1"],
                                                               ["transfer", "100"]]
