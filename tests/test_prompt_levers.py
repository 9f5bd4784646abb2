"""The embedded model's prompt is reproducible and cheap (issue 23), checked without running
the model: no absolute path of the checkout in it (a workspace is named, a loaded skill shows
its head only), a follow-up step keeps the system message, so llama.cpp's KV cache of the
prompt is reused; and a name in a question (``fi_reporting``) is copied alone."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reactloop import Agent, Message, ModelRequest, ToolCall
from reactloop._ranking import says_name
from reactloop.messages import ModelSettings, ToolSpec
from reactloop.models._local_prompt import brief_skill, render_messages
from reactloop.models._shaping import culprits
from reactloop.skills import SkillSet
from reactloop.testing import ScriptedModel

pytest.importorskip("llama_cpp")

from reactloop.models._guided import guided_params
from reactloop.models.local import Guidance, LocalModel, Turn, conversation_values, plan_reply

SKILLS = Path(__file__).resolve().parents[1] / "examples" / "skills"
SET = SkillSet.discover([SKILLS])
SPECS = tuple(t.spec() for t in SET.skill_tools("airport"))


def _loaded(question: str, skill: str) -> tuple[Message, ...]:
    """A real run's history: ``question``, the ``load_skill`` call and its real result."""
    model = ScriptedModel([ToolCall("load_skill", {"name": skill}), "done"])
    result = Agent(model=model, skills=[SKILLS]).run_sync(question)
    return tuple(m for m in result.messages if m.role != "system")[:3]


def _text(messages: list[dict[str, str]]) -> str:
    return "\n".join(m["content"] for m in messages)


def test_a_loaded_skill_shows_its_head_only_to_a_guided_model() -> None:
    history = _loaded("Where can I get a coffee at the airport?", "airport")
    result = history[2]
    assert result.name == "load_skill" and str(SKILLS) in result.content  # the run keeps it all
    request = ModelRequest("sys", history, SPECS, (), ModelSettings())
    brief = _text(render_messages(request, SPECS, brief_skills=True))
    assert str(SKILLS) not in brief and "information desk" not in brief
    assert "# Skill: airport" in brief and "Tools now callable: search_pois" in brief
    full = _text(render_messages(request, SPECS))
    assert str(SKILLS) in full and len(full) - len(brief) > 1000
    # not a load_skill result: left as it is
    assert brief_skill("no skill here") == "no skill here"


class _FakeLlama:
    """Stands in for llama_cpp.Llama: records the messages of each completion."""

    def __init__(self) -> None:
        self.prompts: list[list[dict[str, str]]] = []

    def tokenize(self, text: bytes, add_bos: bool = True) -> list[int]:
        return list(text)  # a token per byte

    def detokenize(self, tokens: list[int]) -> bytes:
        return bytes(tokens)

    def create_chat_completion(self, **kwargs: Any) -> dict[str, Any]:
        self.prompts.append(kwargs["messages"])
        return {"choices": [{"message": {"content": '{"answer": "ok"}'},
                             "finish_reason": "stop"}], "usage": {}}


def test_the_embedded_and_the_served_prompt_are_the_same_in_every_checkout() -> None:
    history = _loaded("Where can I get a coffee at the airport?", "airport")
    request = ModelRequest("sys", history, SPECS, (), ModelSettings())
    model = LocalModel(guidance=Guidance())
    model._llm = fake = _FakeLlama()
    model._complete(request)
    assert str(SKILLS) not in _text(fake.prompts[0])
    params, _ = guided_params(request, Guidance(), "smollm2", "grammar")
    assert params["messages"] == fake.prompts[0]
    # a capable model reads the skill's instructions (and the folder its scripts are in)
    model.guidance = Guidance.caps_only()
    model._complete(request)
    assert str(SKILLS) in _text(fake.prompts[1])


def test_a_follow_up_step_keeps_the_system_message_and_lists_its_tool_last() -> None:
    question = "Where is the coffee bar at the airport?"
    history = _loaded(question, "airport")
    search = Message.assistant(None, [ToolCall("search_pois", {"term": "coffee"}, "c2")])
    found = Message.tool("c2", "search_pois", json.dumps(
        [{"id": 126, "name": "Plaza Coffee Bar", "building": "Airside Plaza"}]))
    before = ModelRequest("sys", history, SPECS, (), ModelSettings())
    after = ModelRequest("sys", (*history, search, found), SPECS, (), ModelSettings())
    first, step = plan_reply(before, Guidance()), plan_reply(after, Guidance())
    assert [t.name for t in step.callable] == ["show_poi"]  # the next step
    assert "show_poi" not in {t.name for t in step.listed} and step.extra
    old = render_messages(before, first.listed, extra=first.extra, brief_skills=True)
    new = render_messages(after, step.listed, extra=step.extra, brief_skills=True)
    # the system message, and so the whole earlier prompt, is the same: llama.cpp reuses it
    assert new[0] == old[0] and new[:len(old)] == old
    assert "You can call now:\n- show_poi(poi_id: integer)" in new[-1]["content"]


# -- a name is copied alone ---------------------------------------------------------------
def test_a_name_in_the_question_is_a_value_but_the_words_around_it_are_not() -> None:
    question = "Compare the amounts in fi_reporting and bpc_reporting."
    got = conversation_values(Turn(question, ())).strings
    assert {"fi_reporting", "bpc_reporting", "Compare the amounts"} <= set(got)
    assert not [s for s in got if "_reporting" in s and " " in s]
    spec = next(t.spec() for t in SET.skill_tools("data-analyst") if t.name == "compare_sources")
    plan = plan_reply(ModelRequest("sys", (Message.user(question),), (spec,), (),
                                   ModelSettings()), Guidance())
    assert "fi_reporting" in (plan.grammar or "") and "in fi_reporting" not in (plan.grammar or "")
    # the same for a file and a time zone; numbers and dates are no names
    ask = "Read notes.txt from Europe/Paris on 2024-03-15 at 2.5 km"
    strings = set(conversation_values(Turn(ask, ())).strings)
    assert {"notes.txt", "Europe/Paris", "Read", "on 2024-03-15 at 2.5 km"} <= strings
    assert "Read notes.txt" not in strings and "Europe/Paris on" not in strings


# -- a tool whose whole name the question says ----------------------------------------------
def _tool(name: str, doc: str, arg: str) -> ToolSpec:
    return ToolSpec(name, doc, {"type": "object", "properties": {arg: {"type": "string"}},
                                "required": [arg]})


def test_a_question_saying_a_tools_whole_name_calls_that_tool() -> None:
    words = _tool("word_count", "Count the words in a piece of text.", "text")
    letters = _tool("count_letters", "Count the letters in a word.", "word")
    asked = Message.user('Count the words in "to be or not to be".')
    plan = plan_reply(ModelRequest("sys", (asked,), (letters, words), (), ModelSettings()),
                      Guidance())
    assert [t.name for t in plan.callable] == ["word_count"]
    # quoted words are material, not the request; a question saying no whole name keeps both
    for text in ('How many letters in "word count"?', "Count these: a b c"):
        both = plan_reply(ModelRequest("sys", (Message.user(text),), (letters, words), (),
                                       ModelSettings()), Guidance())
        assert {t.name for t in both.callable} >= {"count_letters"}
    # a related everyday word says a name too ("backwards": reverse)
    assert says_name(_tool("reverse_word", "Reverse a word.", "word"),
                     "Spell the word 'stressed' backwards.")


# -- a value an error quotes inside its message ---------------------------------------------
def test_a_value_quoted_inside_an_error_message_is_not_copied_again() -> None:
    call = Message.assistant(None, [ToolCall("convert", {"zone": "Paris", "time": "09:00"},
                                             "c1")])
    failed = Message.tool("c1", "convert", "Invalid timezone: 'No time zone found with key "
                          "Paris'", is_error=True)
    assert culprits((call,), (failed,)) == {"convert": {"Paris"}}
    # a value that only appears inside a longer name of the message is not the culprit
    hint = Message.tool("c1", "convert", "use a name like 'Europe/Paris'", is_error=True)
    assert culprits((call,), (hint,)) == {}


# -- a document read is material to answer from -----------------------------------------------
def test_after_a_skill_document_is_read_the_reply_may_answer_from_it() -> None:
    question = "What are the baggage rules when I book a flight?"
    model = ScriptedModel([ToolCall("load_skill", {"name": "book-flight"}),
                           ToolCall("load_skill_reference", {"skill": "book-flight",
                                                             "path": "references/fare_rules.md"}),
                           "done"])
    result = Agent(model=model, skills=[SKILLS]).run_sync(question)
    request = model.requests[2]
    assert [m.name for m in request.messages if m.role == "tool"] == [
        "load_skill", "load_skill_reference"] and "checked bags" in result.messages[-2].content
    plan = plan_reply(request, Guidance())
    # not a forced book_flight call with invented ids: the answer is allowed
    assert plan.answer and "answer ::=" in (plan.grammar or "")
    # right after the load alone, a call of the skill's tools is still required
    assert not plan_reply(model.requests[1], Guidance()).answer


# -- a long result: its head only ---------------------------------------------------------------
def test_a_guided_model_reads_the_head_of_a_long_result_and_is_told_the_rest_was_left_out() -> None:
    from reactloop.models._local_prompt import RESULT_CHARS

    rows = json.dumps([{"company": 1000 + i, "amount": 10 * i} for i in range(400)])
    call = Message.assistant(None, [ToolCall("query_source", {"source": "bpc"}, "c1")])
    request = ModelRequest("sys", (Message.user("Show me the amounts."), call,
                                   Message.tool("c1", "query_source", rows)), (), (),
                           ModelSettings())
    guided = render_messages(request, brief_skills=True)[-1]["content"]
    assert rows[:RESULT_CHARS] in guided and rows[:RESULT_CHARS + 1] not in guided
    assert f"[… {len(rows) - RESULT_CHARS} characters omitted]" in guided
    assert rows in render_messages(request)[-1]["content"]  # a capable model reads it whole
