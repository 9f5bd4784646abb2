"""The embedded model's levers for several steps and structured results (issue 23, second
sitting), each checked without running the model: answers that start from a structured result,
expressions copied whole, retries that do not copy the value an error quoted back, a second
step the request names, a skill's own words as no values, a skill's reference read like a
skill is loaded, and from/to arguments the way the question says them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reactloop import Agent, Message, ModelRequest, ToolCall, tool
from reactloop._ranking import select_tools, terms
from reactloop.messages import ModelResponse, ModelSettings, ToolSpec
from reactloop.models._shaping import order_directions, render_result, result_ids
from reactloop.testing import ScriptedModel

pytest.importorskip("llama_cpp")

from reactloop.models.local import Guidance, conversation_values, plan_reply

SKILLS = Path(__file__).resolve().parents[1] / "examples" / "skills"
POIS = [{"id": 100 + n, "name": f"Gate {n + 1}", "category": "gate",
         "building": "Terminal A" if n < 10 else "Terminal B"} for n in range(20)]


@tool
def search_pois(term: str = "", building: str | None = None) -> list[dict[str, Any]]:
    """Search the points of interest.

    Args:
        term: words to look for, e.g. 'coffee'.
        building: only this building.
    """
    return []


@tool
def show_poi(poi_id: int) -> dict[str, Any]:
    """Show a point of interest on the user's map.

    Args:
        poi_id: the point's id, from search_pois.
    """
    return {}


@tool
def list_dir(path: str = ".") -> dict[str, Any]:
    """List a folder.

    Args:
        path: the folder, relative to the workspace root.
    """
    return {}


LOAD = ToolSpec("load_skill", "Load a skill.", {"type": "object", "properties": {
    "name": {"type": "string"}}, "required": ["name"]}, internal=True)


def _request(*messages: Message, tools: tuple[ToolSpec, ...]) -> ModelRequest:
    return ModelRequest("sys", messages, tools, (), ModelSettings())


def _call(name: str, args: dict[str, Any], cid: str) -> Message:
    return Message.assistant(None, [ToolCall(name, args, cid)])


def test_a_structured_result_begins_the_answer_with_the_matching_records_first() -> None:
    text = json.dumps(POIS)
    assert render_result(text, "Where is gate 15?").startswith("Gate 15, gate, Terminal B; ")
    nested = {"source": {"timezone": "Europe/London", "datetime": "16:30", "is_dst": False},
              "target": {"timezone": "Asia/Tokyo", "datetime": "01:30"}, "time_difference": "+9h"}
    assert render_result(json.dumps(nested)) == (
        "target: timezone Asia/Tokyo, datetime 01:30; source: timezone Europe/London, "
        "datetime 16:30; time_difference: +9h")  # the asked-for side first
    # plain text is rendered as its lines (test_general_levers.py::
    # test_a_plain_text_result_begins_the_answer_with_its_lines); a JSON scalar is not
    assert render_result("plain text") == "plain text" and render_result("42") == ""
    assert len(render_result(text)) <= 240
    asked = Message.user("Where is gate 15?")
    plan = plan_reply(_request(asked, _call("search_pois", {"term": "gate"}, "c1"),
                               Message.tool("c1", "search_pois", text),
                               tools=(search_pois.spec(),)), Guidance())
    assert plan.prefix.startswith("Gate 15, gate, Terminal B")  # was "": the result was long
    assert plan.grammar is not None and "char{0,160}" in plan.grammar  # then a sentence at most


def test_an_expression_is_offered_whole_and_not_its_parts() -> None:
    from reactloop.models.local import Turn

    strings = conversation_values(Turn("(17 + 25) * 2", ())).strings
    assert "(17 + 25) * 2" in strings
    assert "17 + 25" not in strings and "17 + 25 * 2" not in strings
    assert "17" not in strings  # its numbers neither (they stay numbers for number arguments)
    assert "17" in conversation_values(Turn("(17 + 25) * 2", ())).numbers


def test_a_retry_does_not_copy_the_value_the_error_quoted_back() -> None:
    asked = Message.user("List the files in the workspace.")
    spec = list_dir.spec()
    call = _call("list_dir", {"path": "workspace"}, "c1")
    error = Message.tool("c1", "list_dir", "'workspace' does not exist in the workspace; call "
                         "list_dir to see what is there.", is_error=True)
    retry = plan_reply(_request(asked, call, error, tools=(spec,)), Guidance())
    assert retry.grammar is not None and "call-list-dir" in retry.grammar
    assert '"\\"workspace\\""' not in retry.grammar and '"\\".\\""' in retry.grammar
    assert '"\\"files\\""' not in retry.grammar  # the question's words were tried
    # a success after the failure is answered, from its result
    done = plan_reply(_request(asked, call, error, _call("list_dir", {"path": "."}, "c2"),
                               Message.tool("c2", "list_dir", '{"entries": ["notes.txt"]}'),
                               tools=(spec,)), Guidance())
    assert done.grammar is not None and "call-list-dir" not in done.grammar
    assert done.prefix == "entries: notes.txt"


def test_a_tool_that_failed_twice_in_a_turn_is_not_offered_again() -> None:
    asked = Message.user("List the files in the workspace.")
    history = [asked]
    for i, path in enumerate(["workspace", "files"]):
        history += [_call("list_dir", {"path": path}, f"c{i}"),
                    Message.tool(f"c{i}", "list_dir", f"'{path}' does not exist", is_error=True)]
    plan = plan_reply(_request(*history, tools=(list_dir.spec(),)), Guidance())
    assert plan.grammar is not None and "call-list-dir" not in plan.grammar
    assert plan.prefix.startswith("list_dir failed: 'files' does not exist")


def test_the_request_names_its_second_step_with_the_id_a_result_gave() -> None:
    asked = Message.user("Show gate 3 on the map.")
    skill = (_call("load_skill", {"name": "airport"}, "c0"),
             Message.tool("c0", "load_skill", "# Skill: airport"))
    found = Message.tool("c1", "search_pois", json.dumps(POIS))
    tools = (search_pois.spec(), show_poi.spec(), LOAD)
    plan = plan_reply(_request(asked, *skill, _call("search_pois", {"term": "gate"}, "c1"), found,
                               tools=tools), Guidance())
    assert plan.grammar is not None and "answer ::=" not in plan.grammar  # was: answer now
    assert "call-show-poi" in plan.grammar and "call-search-pois" not in plan.grammar
    assert '"102"' in plan.grammar and '"3"' not in plan.grammar  # Gate 3's id, not "3"
    assert result_ids([found], "Show gate 3 on the map.") == ("102",)
    other = plan_reply(_request(Message.user("Where is gate 3?"), *skill,
                                _call("search_pois", {"term": "gate"}, "c1"), found,
                                tools=tools), Guidance())
    assert other.grammar is not None and "call-show-poi" not in other.grammar  # no "show"


def test_the_skills_own_words_and_fillers_are_no_values_for_its_tools() -> None:
    asked = Message.user("Where can I get a coffee at the airport?")
    loaded = Message.tool("c1", "load_skill", "# Skill: airport\n...")
    load = LOAD
    plan = plan_reply(_request(asked, _call("load_skill", {"name": "airport"}, "c1"), loaded,
                               tools=(search_pois.spec(), load)), Guidance())
    assert plan.grammar is not None and '"\\"coffee\\""' in plan.grammar
    for junk in ("airport", "the airport", "get a coffee", "coffee at the airport"):
        assert f'"\\"{junk}\\""' not in plan.grammar, junk
    gate = plan_reply(_request(Message.user("Search gate 15 at the airport."),
                               _call("load_skill", {"name": "airport"}, "c1"), loaded,
                               tools=(search_pois.spec(), load)), Guidance())
    assert gate.grammar is not None and '"\\"gate 15\\""' in gate.grammar


def test_a_fitting_reference_is_read_right_after_its_skill_loads() -> None:
    scripted = ScriptedModel([ModelResponse("Economy: 1 bag of 23 kg.")])
    agent = Agent(scripted, skills=[SKILLS], skill_selection=True)
    result = agent.run_sync("What are the baggage rules when I book a flight?")
    calls = [(c.name, dict(c.arguments)) for s in result.steps for c in s.tool_calls]
    assert calls == [("load_skill", {"name": "book-flight"}),
                     ("load_skill_reference", {"skill": "book-flight",
                                               "path": "references/fare_rules.md"})]
    assert len(scripted.requests) == 1  # both were chosen, not the model's calls
    other = Agent(ScriptedModel([ModelResponse("ok")]), skills=[SKILLS], skill_selection=True)
    searched = other.run_sync("Search flights from London to Tokyo on 2026-12-01.")
    assert [c.name for s in searched.steps for c in s.tool_calls] == ["load_skill"]


def test_from_and_to_arguments_follow_the_question() -> None:
    call = ToolCall("convert_time", {"source_timezone": "Asia/Tokyo", "time": "16:30",
                                     "target_timezone": "Europe/London"})
    fixed = order_directions(call, "Convert 16:30 from Europe/London time to Asia/Tokyo time.")
    assert fixed.arguments == {"source_timezone": "Europe/London", "time": "16:30",
                               "target_timezone": "Asia/Tokyo"}
    right = ToolCall("route", {"from_city": "Paris", "to_city": "Rome"})
    assert order_directions(right, "Trains from Paris to Rome?") is right
    between = ToolCall("days_between", {"start": "2024-03-01", "end": "2024-01-01"})
    assert order_directions(between, "Days between 2024-01-01 and 2024-03-01?") is between


def test_a_question_for_the_members_of_a_plural_asks_for_the_listing_tool() -> None:
    @tool
    def list_sources() -> list[str]:
        """List the data sources that can be queried and compared."""
        return []

    @tool
    def compare_sources(source_a: str, source_b: str) -> str:
        """Compare a measure between two sources."""
        return ""

    assert "list" in terms("Which reporting sources can I compare?", expand=True)
    assert "list" not in terms("Which city is the capital of Peru?", expand=True)
    specs = [compare_sources.spec(), list_sources.spec()]
    top = select_tools(specs, "Which reporting sources can I compare?", 1)
    assert [t.name for t in top] == ["list_sources"]


def test_one_word_of_a_description_is_too_little_to_offer_a_tool() -> None:
    from reactloop._ranking import evident

    @tool
    def grep(pattern: str) -> str:
        """Search file contents; answers matching lines.

        Args:
            pattern: a regular expression.
        """
        return ""

    assert not evident(grep.spec(), "Write one line of a poem about the sea.")
    assert evident(grep.spec(), "Search the files for the word invoice.")  # a name's synonym
    assert evident(grep.spec(), "Which lines match this pattern?")  # two words of its docs
    plan = plan_reply(_request(Message.user("Write one line of a poem about the sea."),
                               tools=(grep.spec(),)), Guidance())
    assert plan.listed == () and plan.grammar is not None and "call-grep" not in plan.grammar
