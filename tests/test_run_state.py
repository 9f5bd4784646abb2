"""Issue 11: run state as data — per-run state on the run, serialisable runs, one-way imports."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

from reactloop import Agent, ModelResponse, RunContext, RunState, ToolCall
from reactloop.messages import ModelRequest
from reactloop.testing import FunctionModel, ScriptedModel

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE.parent / "examples" / "skills"


def test_a_waiting_run_resumes_from_its_json_in_a_fresh_process(tmp_path: Path) -> None:
    model = ScriptedModel([
        ModelResponse(tool_calls=[ToolCall("load_skill", {"name": "data-analyst"})]),
        ModelResponse(tool_calls=[ToolCall("update_plan", {
            "goal": "compare sources", "steps": ["ask which city", "compare"]})]),
        ModelResponse(tool_calls=[ToolCall("ask_question", {"question": "Which city?"})]),
    ])
    agent = Agent(model=model, skills=[EXAMPLES], planning=True, loop_control=True)
    waiting = agent.run_sync("Compare the sources for my city")
    assert waiting.state is RunState.WAITING_FOR_USER and waiting.output == "Which city?"
    saved = tmp_path / "run.json"
    saved.write_text(waiting.save(), encoding="utf-8")
    data = json.loads(saved.read_text(encoding="utf-8"))
    assert data["state"]["skills"]["loaded"] == ["data-analyst"]
    assert data["state"]["plan"]["goal"] == "compare sources"

    out = subprocess.run([sys.executable, str(HERE / "resume_child.py"), str(saved), "Paris"],
                         capture_output=True, text=True, timeout=120, check=True)
    child = json.loads(out.stdout)
    assert child["state"] == "completed" and child["output"] == "Done for Paris."
    assert "compare_sources" in child["tools_offered"]  # the skill's tools came back
    assert "already loaded" in child["reload_answer"]  # ...and it was not loaded twice
    assert "Goal: compare sources" in child["plan_note"]  # the plan came back
    assert child["plan"]["steps"][0] == {"description": "ask which city",
                                         "status": "completed", "result": "Paris"}
    assert child["first_message"] == "Compare the sources for my city"


def test_run_context_round_trips_through_json() -> None:
    model = ScriptedModel([ModelResponse(tool_calls=[ToolCall("update_plan", {
        "goal": "g", "steps": ["a"]})]), "done"])
    result = Agent(model=model, planning=True).run_sync("go")
    ctx = RunContext.from_dict(json.loads(result.save()))
    assert ctx.messages == list(result.messages)
    assert [s.to_dict() for s in ctx.steps] == [s.to_dict() for s in result.steps]
    assert ctx.metrics.to_dict() == result.metrics.to_dict()
    assert json.loads(json.dumps(ctx.to_dict())) == json.loads(result.save())


def test_a_newer_saved_run_is_refused_clearly() -> None:
    import pytest

    with pytest.raises(ValueError, match="upgrade reactloop"):
        RunContext.from_dict({"version": 99, "run_id": "x"})


def test_1000_concurrent_runs_on_one_agent_keep_their_own_plans_and_skills() -> None:
    """Per-run state lives on the run: no agent-level cache can evict it."""

    def script(request: ModelRequest) -> ModelResponse:
        prompt = request.messages[0].content
        tools_done = [m for m in request.messages if m.role == "tool"]
        step = len(tools_done)
        if step == 0:
            return ModelResponse(tool_calls=[ToolCall("update_plan", {
                "goal": prompt, "steps": ["load", "finish"]})])
        if step == 1:
            return ModelResponse(tool_calls=[ToolCall("load_skill", {"name": "data-analyst"})])
        if step == 2:
            return ModelResponse(tool_calls=[ToolCall("update_plan", {"step": 1,
                                                                      "result": prompt})])
        if step == 3:
            return ModelResponse(tool_calls=[ToolCall("load_skill", {"name": "data-analyst"})])
        return ModelResponse(text=f"{prompt}: {tools_done[-1].content[:40]}")

    agent = Agent(model=FunctionModel(script), skills=[EXAMPLES], planning=True,
                  max_iterations=8)

    async def main() -> list[object]:
        return await asyncio.gather(*(agent.run(f"run-{i}") for i in range(1000)))

    results = asyncio.run(main())
    for i, r in enumerate(results):
        assert r.state is RunState.COMPLETED, r.output  # type: ignore[attr-defined]
        plan = r.plan  # type: ignore[attr-defined]
        assert plan.goal == f"run-{i}" and plan.steps[0].result == f"run-{i}"
        assert r.output.startswith(f"run-{i}: Skill 'data-analyst' is already loaded")  # type: ignore[attr-defined]
        assert r.steps[1].results[0].content.startswith("# Skill: data-analyst")  # type: ignore[attr-defined]
