"""The embedded model's levers of issue 23, each checked without running the model: arguments
that can recover, operators without a shared word, the repetition guard, skills chosen like
tools (and grammars of skill tools that llama.cpp accepts)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from reactloop import Agent, Message, ModelRequest, ToolCall
from reactloop._demo_tools import calculate, current_time, multiply
from reactloop._ranking import best_choice, name_matches, select_tools
from reactloop.messages import ModelSettings, ToolSpec
from reactloop.models._gbnf import reply_grammar
from reactloop.models._repeat import NoRepeatNgram, collapse_repeats, repeating
from reactloop.models._skill_select import skill_call
from reactloop.skills import SkillSet

pytest.importorskip("llama_cpp")

from reactloop.models.local import (
    Guidance,
    LocalModel,
    essential,
    plan_reply,
    schema_values,
)

SKILLS = Path(__file__).resolve().parents[1] / "examples" / "skills"


def _request(*messages: Message, tools: tuple[ToolSpec, ...]) -> ModelRequest:
    return ModelRequest("sys", messages, tools, (), ModelSettings())


def _grammar(text: str) -> None:
    from llama_cpp.llama_grammar import LlamaGrammar

    LlamaGrammar.from_string(text, verbose=False)  # raises on a grammar llama.cpp rejects


# -- arguments that can recover -------------------------------------------------------------
def test_schema_values_are_the_tools_own_examples_and_defaults() -> None:
    got = schema_values(current_time.spec())
    assert {"UTC", "Europe/Paris"} <= set(got.strings)


def test_a_retry_may_copy_the_error_and_the_schema_but_a_fresh_call_may_not() -> None:
    spec = current_time.spec()
    asked = Message.user("What time is it in Atlantis?")
    fresh = plan_reply(_request(asked, tools=(spec,)), Guidance())
    assert fresh.grammar is not None and '"\\"Europe/Paris\\""' not in fresh.grammar
    asked = Message.user("What time is it in Nassau?")
    call = Message.assistant(None, [ToolCall("current_time", {"timezone": "Nassau"}, "c1")])
    error = Message.tool("c1", "current_time", "unknown timezone 'Nassau'; use an IANA name "
                         "like 'America/Nassau'", is_error=True)
    retry = plan_reply(_request(asked, call, error, tools=(spec,)), Guidance())
    assert retry.grammar is not None
    assert '"\\"America/Nassau\\""' in retry.grammar  # from the error
    # the docs' example names another city than the user's: never a fix
    # (tests/test_general_levers.py::test_a_retry_never_swaps_the_users_city_for_an_example)
    assert '"\\"Europe/Paris\\""' not in retry.grammar
    assert '"\\"UTC\\""' in retry.grammar  # the tool's default
    _grammar(retry.grammar)


def test_a_guided_call_fills_only_the_essential_arguments() -> None:
    params = {"type": "object", "properties": {"term": {"type": "string"},
                                                "near": {"type": "integer"}}}
    assert list(essential(ToolSpec("s", "", params)).parameters["properties"]) == ["term"]
    assert essential(ToolSpec("s", "", params)).parameters["required"] == ["term"]
    whole = {**params, "required": ["term", "near"]}
    assert essential(ToolSpec("s", "", whole)).parameters is whole


# -- operators and intents ----------------------------------------------------------------
@pytest.mark.parametrize("question", ["2**10", "What is 3^4?", "(17 + 25) * 2",
                                      "Compute 12 * 12 - 4."])
def test_an_expression_reaches_the_calculating_tool_without_a_shared_word(question: str) -> None:
    specs = [multiply.spec(), current_time.spec(), calculate.spec()]
    chosen = select_tools(specs, question, 3, min_ratio=0.5)
    assert chosen[0].name == "calculate" and name_matches(chosen[0], question)
    plan = plan_reply(_request(Message.user(question), tools=tuple(specs)), Guidance())
    assert plan.grammar is not None and "answer ::=" not in plan.grammar  # a call is required


def test_the_expression_is_offered_as_typed() -> None:
    plan = plan_reply(_request(Message.user("(17 + 25) * 2"), tools=(calculate.spec(),)),
                      Guidance())
    assert plan.grammar is not None and '"\\"(17 + 25) * 2\\""' in plan.grammar


# -- no degenerate output ------------------------------------------------------------------
def test_a_repeated_ngram_is_pushed_down_in_answers_only() -> None:
    assert repeating([1, 2, 3, 4, 1, 2, 3], 4) == {4}
    assert repeating([1, 2, 3, 4, 5, 6], 4) == set()
    guard = NoRepeatNgram(lambda out: True, n=3)
    prompt = [9, 9, 9]
    guard(np.array(prompt), np.zeros(10))  # the first call sees only the prompt
    scores = guard(np.array([*prompt, 5, 6, 7, 5, 6]), np.zeros(10))
    assert scores[7] < -10 and scores[5] == 0  # "5 6" was followed by 7 before
    tool_call = NoRepeatNgram(lambda out: False, n=3)
    tool_call(np.array(prompt), np.zeros(10))
    assert tool_call(np.array([*prompt, 5, 6, 7, 5, 6]), np.zeros(10))[7] == 0


def test_repeated_sentences_are_collapsed() -> None:
    sorry = "I'm sorry, I can't do that. " * 5
    assert collapse_repeats(sorry + "Bye.") == "I'm sorry, I can't do that. Bye."
    assert collapse_repeats("It is 42. That is all.") == "It is 42. That is all."


# -- skills chosen like tools ---------------------------------------------------------------
def test_load_skill_lists_each_skill_with_its_tools_as_choices() -> None:
    load = SkillSet.discover([SKILLS]).tools()[0].spec()
    choices = dict(load.choices)
    assert set(choices) == {"airport", "book-flight", "data-analyst"}
    assert "search_pois" in choices["airport"] and "compare_sources" in choices["data-analyst"]


@pytest.mark.parametrize(("question", "skill"), [
    ("Where is gate 15?", "airport"), ("Where can I get a coffee at the airport?", "airport"),
    ("Compare the amounts in fi_reporting and bpc_reporting.", "data-analyst"),
    ("What time is it in Paris?", None), ("What is 17 plus 25?", None),
    ("Tell me a short joke.", None),
])
def test_skills_are_ranked_with_the_tools(question: str, skill: str | None) -> None:
    load = SkillSet.discover([SKILLS]).tools()[0].spec()
    specs = [calculate.spec(), current_time.spec(), multiply.spec(), load]
    best = best_choice(specs, question)
    assert (best[1] if best else None) == skill


class _FakeLlama:
    """llama.cpp's chat completion, scripted: the replies, and the grammars it was given."""

    def __init__(self, replies: list[dict[str, Any]]) -> None:
        self.replies = replies
        self.grammars: list[str] = []

    def tokenize(self, text: bytes, **kwargs: Any) -> list[int]:
        return list(range(len(text) // 4 + 1))

    def create_chat_completion(self, **kwargs: Any) -> dict[str, Any]:
        self.grammars.append(getattr(kwargs.get("grammar"), "_grammar", ""))
        text = json.dumps(self.replies.pop(0))
        return {"choices": [{"message": {"content": text}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1}}


def test_a_fitting_question_loads_the_skill_as_a_visible_step() -> None:
    model = LocalModel()
    fake = _FakeLlama([{"tool": "search_pois", "arguments": {"term": "gate 15"}},
                       {"answer": "Gate 15 is in Terminal B."}])
    model._llm, model.guidance = fake, Guidance()
    agent = Agent(model, skills=[SKILLS])

    async def run() -> list[Any]:
        return [ev async for ev in agent.stream("Where is gate 15?")]

    import asyncio

    events = asyncio.run(run())
    calls = [ev.call.name for ev in events if ev.type == "tool_call"]
    assert calls == ["load_skill", "search_pois"]
    loaded = next(ev.result for ev in events if ev.type == "tool_result")
    assert loaded.name == "load_skill" and "# Skill: airport" in loaded.content
    result = events[-1].result
    assert result.steps[0].tool_calls[0].arguments == {"name": "airport"}
    assert result.output == "Gate 15 is in Terminal B."
    # the skill's tools joined the offer, the call was required, load_skill was not offered
    assert "call-search-pois" in fake.grammars[0] and "answer ::=" not in fake.grammars[0]
    assert "call-load-skill" not in fake.grammars[0]
    # the next question of the conversation does not load it again
    again = ModelRequest("", (*result.messages, Message.user("Where is gate 16?")),
                         tuple(t.spec() for t in SkillSet.discover([SKILLS]).tools()), (),
                         ModelSettings())
    assert skill_call(again) is None


def test_the_grammar_of_every_example_skill_tool_is_accepted_by_llama_cpp() -> None:
    skills = SkillSet.discover([SKILLS])
    for name in ("airport", "data-analyst"):
        for t in skills.skill_tools(name):
            _grammar(reply_grammar([t.spec()], answer=True))


def test_skill_selection_loads_the_skill_for_any_model_when_asked() -> None:
    from reactloop.messages import ModelResponse
    from reactloop.testing import ScriptedModel

    scripted = ScriptedModel([ModelResponse("Gate 15 is in Terminal B.")])
    result = Agent(scripted, skills=[SKILLS], skill_selection=True).run_sync("Where is gate 15?")
    assert [c.name for s in result.steps for c in s.tool_calls] == ["load_skill"]
    assert len(scripted.requests) == 1  # the load was not the model's call
    assert "search_pois" in {t.name for t in scripted.requests[0].tools}
    off = ScriptedModel([ModelResponse("Somewhere.")])
    plain = Agent(off, skills=[SKILLS]).run_sync("Where is gate 15?")
    assert plain.steps[0].tool_calls == () and len(off.requests) == 1  # off by default


def test_the_cli_flag_turns_skill_selection_on() -> None:
    from reactloop.cli._build import build_agent as build_cli_agent
    from reactloop.models._skill_select import SkillSelection

    opts: dict[str, Any] = {
        "model": "local", "tool_specs": (), "skill_dirs": (str(SKILLS),), "mcp_config": None,
        "instructions": "", "max_iterations": 10, "loop_control": False,
        "skill_selection": True, "demo_tools": False}
    assert isinstance(build_cli_agent(opts).model, SkillSelection)
    assert not isinstance(build_cli_agent({**opts, "skill_selection": False}).model,
                          SkillSelection)


def test_a_date_is_not_an_expression() -> None:
    specs = [calculate.spec(), current_time.spec()]
    question = "How many days are there between 2024-01-01 and 2024-03-01?"
    assert select_tools(specs, question, 3, min_ratio=0.5) == []


def test_an_answer_forced_after_failures_begins_with_what_failed() -> None:
    spec = calculate.spec()
    asked = Message.user("What is 2024-01-01?")
    call = Message.assistant(None, [ToolCall("calculate", {"expression": "x"}, "c1")])
    error = Message.tool("c1", "calculate", "Error: not an arithmetic expression: 'x'",
                         is_error=True)
    # the loop offers no tool after the second identical failure (declared ones stay listed)
    request = ModelRequest("sys", (asked, call, error), (), (), ModelSettings(), (spec,))
    plan = plan_reply(request, Guidance())
    assert plan.prefix == "calculate failed: not an arithmetic expression: 'x'. "
    assert plan.grammar is not None and "call-calculate" not in plan.grammar
