"""An agent called as a tool on Temporal (issue 24): the sub-agent runs inside the parent's
workflow, each of its model and tool calls an activity of its own names, so a worker killed
(SIGKILL) in the middle of the sub-run re-runs no completed tool call. Against the real dev
server, with ``reactloop worker`` subprocesses (the harness of tests/test_temporal.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from reactloop import RunState

pytest.importorskip("temporalio")

from test_temporal import Workers, _kill, _lines, _queue, _run, _until, workers  # noqa: F401


def test_a_worker_killed_mid_sub_run_costs_no_completed_tool_call(
        workers: Workers, tmp_path: Path) -> None:  # noqa: F811
    import temporal_agents

    durable = temporal_agents.delegating
    assert set(durable.subs) == {"stepper"}
    names = {getattr(a, "__temporal_activity_definition").name for a in durable.activities}
    assert {"stepper.model", "stepper.tool.record", "delegating.model"} <= names

    queue, gate = _queue(), tmp_path / "gate"
    first = workers.start("delegating", queue, REACTLOOP_TEST_GATE=str(gate))

    async def go() -> Any:
        handle = await durable.start("Delegate three steps.", client=workers.address,
                                     task_queue=queue)
        await asyncio.to_thread(_until, Path(str(gate) + ".waiting").exists,
                                "the sub-agent's model to wait between its tool calls")
        _kill(first)  # the sub-agent's record 1 has run; its next model call is in flight
        gate.touch()
        await asyncio.to_thread(workers.start, "delegating", queue)
        events = [e async for _, e in handle.events()]
        return events, await handle.result()

    events, result = _run(go())
    assert result.state is RunState.COMPLETED, result.output
    assert result.output == "Delegated: All 3 steps recorded."
    records = [line for line in _lines(tmp_path / "log") if line[0] == "record"]
    assert sorted(line[1] for line in records) == ["1", "2", "3"]  # each ran exactly once
    assert records[0][2] == str(first.pid) and records[-1][2] != str(first.pid)
    # one run, nested: the sub-run's events carry its agent, its usage is in the totals
    nested = [e for e in events if e.agent == "stepper"]
    assert nested and nested[-1].type == "run_end"
    assert {e.parent_run_id for e in nested} == {result.run_id}
    assert result.metrics_by_agent["stepper"].tool_calls == 3
    assert result.metrics.tool_calls == 4
