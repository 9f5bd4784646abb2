"""Extensions in one package, and tools that say what they are (issue 22, item 1).

The loop names no extension: an internal tool (``Tool.internal``) is never gated, never
answered from an identical earlier call and always offered, whoever defines it; the plan
reaches ``RunResult.plan`` through ``Extension.result_field``; a durable runtime runs the
I/O-doing starts through ``Extension.start_does_io``."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from reactloop import Agent, ModelResponse, RunState, Tool, ToolCall, UserError, tool
from reactloop.extensions import Extension
from reactloop.testing import ScriptedModel

SRC = Path(__file__).resolve().parents[1] / "src" / "reactloop"


def _filler() -> list[Tool]:
    def make(i: int) -> Tool:
        def fn(item: str = "") -> str:
            return f"stock {i} {item}"
        return Tool(fn, name=f"inventory_{i}", description=f"Stock level of item group {i}.")

    return [make(i) for i in range(20)]


def test_a_user_tool_marked_internal_is_always_offered_never_gated_never_deduplicated() -> None:
    calls: list[str] = []

    @tool(internal=True)
    def remember(note: str) -> str:
        """Keep a note in the run's own scratchpad.

        Args:
            note: the note
        """
        calls.append(note)
        return "kept"

    @tool
    def send_email(to: str) -> str:
        """Send an email.

        Args:
            to: the address
        """
        return "sent"

    model = ScriptedModel([
        ModelResponse(tool_calls=[ToolCall("remember", {"note": "x"})]),
        ModelResponse(tool_calls=[ToolCall("remember", {"note": "x"})]),  # identical: runs again
        ModelResponse(tool_calls=[ToolCall("send_email", {"to": "a@b.c"})]),
    ])
    agent = Agent(model=model, tools=[*_filler(), remember, send_email], tool_selection=1,
                  approve=True)
    result = agent.run_sync("How many items of group 3 are in stock?")
    assert remember.internal and not send_email.internal
    assert calls == ["x", "x"]  # ran twice, without waiting for anyone
    assert result.state is RunState.WAITING_FOR_APPROVAL  # the world-facing tool waits
    assert [p.tool_name for p in result.pending_approvals] == ["send_email"]
    offered = [{t.name for t in r.tools} for r in model.requests]
    assert all("remember" in names for names in offered)  # selection never hides it
    assert all(len(names) == 2 for names in offered)  # the best 1, plus the internal one
    assert [t.internal for t in model.requests[0].tools if t.name == "remember"] == [True]


def test_the_built_in_run_state_tools_are_internal() -> None:
    from reactloop.planning import Planning
    from reactloop.skills import SkillSet

    agent = Agent(model=ScriptedModel([]), loop_control=True, planning=True,
                  output_type=int, output_mode="tool")
    specs = {s.name: s.internal for s in agent.spec.tools.specs()}
    assert specs == {"update_plan": True, "task_completion": True, "ask_question": True,
                     "converse": True, "final_answer": True}
    assert all(t.internal for t in SkillSet([]).tools())
    assert all(t.internal for t in Planning().tools())


def test_the_workspace_tools_are_not_internal(tmp_path: Path) -> None:
    agent = Agent(model=ScriptedModel([]), workspace=tmp_path)
    assert agent.tools and not any(s.internal for s in agent.spec.tools.specs())


def test_an_extension_fills_the_plan_through_result_field() -> None:
    class Checklist(Extension):
        key = "checklist"
        result_field = "plan"

        async def start(self, ctx: Any) -> None:
            ctx.state[self.key] = ["a", "b"]

    result = Agent(model=ScriptedModel([ModelResponse("done")]),
                   extensions=[Checklist()]).run_sync("go")
    assert result.plan == ["a", "b"]


def test_an_extension_keyed_plan_still_fills_the_plan() -> None:
    class MyPlan(Extension):
        key = "plan"

        def result(self, ctx: Any) -> Any:
            return "my plan"

    class Other(Extension):
        key = "other"

        def result(self, ctx: Any) -> Any:  # no result_field: not on the result
            return "ignored"

    result = Agent(model=ScriptedModel([ModelResponse("done")]),
                   extensions=[Other(), MyPlan()]).run_sync("go")
    assert result.plan == "my plan"


def test_an_unknown_result_field_is_refused_when_the_agent_is_built() -> None:
    class Bad(Extension):
        key = "bad"
        result_field = "output"

    with pytest.raises(UserError, match="result_field must be one of plan"):
        Agent(model=ScriptedModel([]), extensions=[Bad()])


def test_retrieval_declares_its_io_start() -> None:
    from reactloop.extensions._retrieval import RetrievedContext

    assert RetrievedContext([lambda p: "x"]).start_does_io
    assert not Extension().start_does_io


def test_planning_is_a_facade_over_the_extensions_package() -> None:
    import reactloop.planning as public
    from reactloop.extensions import _planning

    for name in [*public.__all__, "NO_PLAN", "update"]:
        assert getattr(public, name) is getattr(_planning, name)
    assert "façade" in (public.__doc__ or "")


def test_internal_survives_the_temporal_codec() -> None:
    pytest.importorskip("temporalio")
    from reactloop.messages import Message, ModelRequest, ToolSpec
    from reactloop.temporal._codec import request_from_dict, request_to_dict

    specs = (ToolSpec("a", "A.", {}), ToolSpec("b", "B.", {}, internal=True))
    back = request_from_dict(request_to_dict(ModelRequest("s", (Message.user("x"),), specs)))
    assert back.tools == specs
    assert "internal" not in request_to_dict(ModelRequest("s", (), specs[:1]))["tools"][0]


# -- the loop and its engines name no extension ----------------------------------------------
EXTENSION_NAMES = {"update_plan", "load_skill", "load_skill_reference", "plan", "retrieved",
                   "skills", "workspace"}
NO_EXTENSION_NAMES = ["_loop.py", "_spec.py", "agent.py", "runtime.py", "tools/_select.py",
                      "models/local.py", "temporal/_activities.py", "temporal/_workflow.py"]


def _string_constants(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                  if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                    ast.AsyncFunctionDef))
                  and n.body and isinstance(n.body[0], ast.Expr)}
    return {n.value for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and id(n) not in docstrings}


@pytest.mark.parametrize("module", NO_EXTENSION_NAMES)
def test_the_loop_and_its_engines_name_no_extension(module: str) -> None:
    """No special case by an extension's key or tool name (docstrings may mention them)."""
    named = _string_constants(SRC / module) & EXTENSION_NAMES
    assert not named, f"{module} names {sorted(named)}: say it with a property instead"
    text = (SRC / module).read_text(encoding="utf-8")
    for old in ("_UNGATED", "ALWAYS_OFFERED", "ext.key =="):
        assert old not in text, f"{module} still uses {old}"


def test_the_extensions_live_in_one_package() -> None:
    package = SRC / "extensions"
    assert {p.name for p in package.glob("*.py")} >= {
        "__init__.py", "_base.py", "_planning.py", "_retrieval.py", "_workspace.py"}
    assert not (SRC / "_retrieval.py").exists() and not (SRC / "extensions.py").exists()
    assert "class StaticExtension" not in (SRC / "_spec.py").read_text(encoding="utf-8")
    # the public planning module is a façade: it defines nothing itself
    tree = ast.parse((SRC / "planning.py").read_text(encoding="utf-8"))
    assert not [n for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))]


def test_selection_always_offers_the_plan_tool() -> None:
    model = ScriptedModel([ModelResponse("12")])
    Agent(model=model, tools=_filler(), planning=True, tool_selection=1).run_sync(
        "How many items of group 3 are in stock?")
    offered = {t.name for t in model.requests[0].tools}
    assert "update_plan" in offered and len(offered) == 2  # the best 1, plus the plan tool


# -- item 5: one body for the streams and the run --------------------------------------------
def test_streams_check_their_arguments_on_the_first_event_as_before() -> None:
    import asyncio

    import reactloop.agent

    agent = Agent(model=ScriptedModel([ModelResponse("hi")]))
    events = agent.stream(42)  # type: ignore[arg-type]
    with pytest.raises(UserError, match="prompt must be a string"):
        asyncio.run(events.__anext__())
    resumed = agent.resume_stream([])
    with pytest.raises(UserError, match="nothing to resume"):
        asyncio.run(resumed.__anext__())
    assert [e.type for e in asyncio.run(_collect(agent.stream("x")))][-1] == "run_end"
    assert not hasattr(reactloop.agent, "_last")


async def _collect(events: Any) -> list[Any]:
    return [e async for e in events]


def test_skills_say_which_tools_a_run_may_add(tmp_path: Path) -> None:
    """What the Temporal worker registers up front, asked of the extension (no type check)."""
    from reactloop.skills import SkillSet

    for name, tools_py in (("calc", "from reactloop import tool\n\n@tool\ndef mul(a: int, b: int)"
                                    " -> int:\n    \"\"\"Multiply.\"\"\"\n    return a * b\n"),
                           ("broken", "raise RuntimeError('no')\n")):
        d = tmp_path / name
        d.mkdir()
        (d / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {name}.\n---\nUse it.\n")
        (d / "tools.py").write_text(tools_py)
    skills = SkillSet.discover([tmp_path])
    assert [t.name for t in skills.later_tools()] == ["mul"]  # the broken one fails in the run
    assert Extension().later_tools() == ()
