"""Skills inside an agent run, walked end to end with ScriptedModel as in the seeds.

The catalog is in ``request.system``; ``load_skill`` returns the instructions as a tool result
and appends the skill's tools to later requests, without changing what came before.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from reactloop import Agent, ModelResponse, RunState, ToolCall
from reactloop.events import CustomEvent
from reactloop.testing import ScriptedModel

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "skills"
BOOK_FLIGHT = EXAMPLES / "book-flight"


def call(tool_name: str, call_id: str, /, **arguments: Any) -> ModelResponse:
    return ModelResponse(tool_calls=[ToolCall(tool_name, arguments, call_id)])


def tool_names(request: Any) -> list[str]:
    return [t.name for t in request.tools]


def test_catalog_in_system_and_skill_tools_only_after_loading() -> None:
    model = ScriptedModel([
        call("load_skill", "c1", name="data-analyst"),
        call("compare_sources", "c2", source_a="fi_reporting", source_b="consolidation_mart",
             measure="amount", filters={"company": "1001", "period": "202401"}),
        "fi_reporting shows 1,500,000 and consolidation_mart 1,492,000: a major difference.",
    ])
    agent = Agent(model=model, instructions="You are Skillian.", skills=[EXAMPLES])
    result = agent.run_sync("Compare the amount totals between fi_reporting and "
                            "consolidation_mart for company 1001 in period 202401")
    assert result.state is RunState.COMPLETED
    first, second, third = model.requests
    for skill in ("- airport: ", "- book-flight: ", "- data-analyst: "):
        assert skill in first.system
    assert "## The classification rule" not in first.system  # level 2 is not in the prompt
    assert tool_names(first) == ["load_skill", "load_skill_reference"]
    assert tool_names(second) == ["load_skill", "load_skill_reference", "list_sources",
                                  "query_source", "compare_sources"]
    # the prefix is stable: same system prompt, tools only appended, history only grows
    assert second.system == first.system == third.system
    assert second.tools[:2] == first.tools
    assert second.messages[: len(first.messages)] == first.messages
    loaded = second.messages[-1]
    assert loaded.role == "tool" and loaded.content.startswith("# Skill: data-analyst")
    compared = json.loads(third.messages[-1].content)
    assert compared["summary"]["major_differences"] == 1
    assert compared["top_differences"][0]["percentage_diff"] == 0.53
    assert compared["top_differences"][0]["status"] == "major_diff"


def test_unknown_source_error_lets_the_model_recover() -> None:
    model = ScriptedModel([
        call("load_skill", "c1", name="data-analyst"),
        call("compare_sources", "c2", source_a="fi_reports", source_b="bpc"),
        call("compare_sources", "c3", source_a="fi_reporting", source_b="bpc_reporting"),
        "Good alignment.",
    ])
    result = Agent(model=model, skills=[EXAMPLES]).run_sync("Compare fi_reports and bpc")
    error = model.requests[2].messages[-1]
    assert error.is_error and "Available sources: fi_reporting" in error.content
    fixed = json.loads(model.requests[3].messages[-1].content)
    assert fixed["interpretation"].startswith("Good alignment (96.7%)")
    assert result.output == "Good alignment."


def test_calling_a_skill_tool_before_loading_is_an_unknown_tool() -> None:
    model = ScriptedModel([call("compare_sources", "c1", source_a="a", source_b="b"), "ok"])
    Agent(model=model, skills=[EXAMPLES]).run_sync("compare")
    answer = model.requests[1].messages[-1]
    assert answer.is_error and "Unknown tool 'compare_sources'" in answer.content


def test_airport_walkthrough_emits_ui_events() -> None:
    model = ScriptedModel([
        call("load_skill", "c1", name="airport"),
        call("search_pois", "c2", term="gate 15"),
        call("search_pois", "c3", term="bathroom", near_poi_id=114, limit=1),
        call("show_poi", "c4", poi_id=135),
        "The nearest restroom is Restroom B East in Terminal B, 23 m from Gate 15.",
    ])
    agent = Agent(model=model, skills=[EXAMPLES])

    async def collect() -> list[Any]:
        return [e async for e in agent.stream("Where's the nearest bathroom near Gate 15?")]

    events = asyncio.run(collect())
    custom = [(e.name, e.data) for e in events if isinstance(e, CustomEvent)]
    assert custom == [
        ("skill_loaded", {"skill": "airport", "tools": ["search_pois", "get_poi_details",
                                                         "get_directions", "show_poi",
                                                         "show_directions"]}),
        ("ui", {"action": "show_poi", "poi_id": 135, "name": "Restroom B East",
                "building": "Terminal B"}),
    ]
    nearest = json.loads(model.requests[3].messages[-1].content)
    assert nearest[0]["distance_m"] == 23
    assert events[-1].type == "run_end"


def _stdout(content: str) -> object:
    """The JSON a script printed, from the workspace's run_command result."""
    result = json.loads(content)
    assert result["exit_code"] == 0, result
    return json.loads(result["stdout"])


def test_book_flight_multi_turn_walkthrough() -> None:
    scripts = BOOK_FLIGHT / "scripts"
    model = ScriptedModel([
        # turn 1: the request lacks details; the skill says to ask for them first
        call("load_skill", "c1", name="book-flight"),
        "Where are you flying from, on which date, in which cabin and for how many people?",
        # turn 2: the details are there; the skill is still loaded, its text is in history
        call("run_command", "c2", command=f"python {scripts / 'get_current_time.py'}"),
        call("run_command", "c3", command=f"python {scripts / 'search_flights.py'} --from "
                                          "Beijing --to Tokyo --date 2026-12-01"),
        "I found 5 flights; the first is CA925 at 08:30.",
        # turn 3: the user confirms; fare rules, then booking
        call("load_skill_reference", "c4", skill="book-flight",
             path="references/fare_rules.md"),
        call("run_command", "c5", command=f"python {scripts / 'book_flight.py'} --flight-id "
                                          "CA925-20261201 --passenger 'Li Wei'"),
        "Booked.",
    ])
    from reactloop.tools.workspace import Workspace

    # the real workspace tool, confined to the skill's folder, runs the skill's scripts
    workspace = Workspace(BOOK_FLIGHT, env={"BOOK_FLIGHT_NOW": "2026-11-30T09:00:00"})
    agent = Agent(model=model, skills=[EXAMPLES], workspace=workspace)
    chat = agent.conversation()
    first = chat.send_sync("I want to book a flight to Tokyo")
    assert first.output.startswith("Where are you flying from")
    loaded = model.requests[1].messages[-1].content
    assert "## Step 0: get the missing details first" in loaded
    assert f"Folder: {BOOK_FLIGHT.resolve()}" in loaded

    chat.send_sync("From Beijing, tomorrow, economy, 1 person")
    now = _stdout(model.requests[3].messages[-1].content)
    assert isinstance(now, dict)
    assert now["date"] == "2026-11-30"
    flights = _stdout(model.requests[4].messages[-1].content)
    assert isinstance(flights, dict)
    assert flights["count"] == 5 and flights["flights"][0]["flight_id"] == "CA925-20261201"
    # the instructions loaded in turn 1 are still in the conversation in turn 2
    assert any(m.content.startswith("# Skill: book-flight") for m in model.requests[4].messages)
    assert model.requests[4].system == model.requests[0].system

    result = chat.send_sync("Yes, book CA925 for Li Wei")
    assert "checked bags" in model.requests[6].messages[-1].content
    booking = _stdout(model.requests[7].messages[-1].content)
    assert isinstance(booking, dict)
    assert booking["status"] == "confirmed" and booking["passengers"] == ["Li Wei"]
    assert result.output == "Booked." and model.remaining == 0


def test_skill_tools_in_a_later_turn_after_reloading() -> None:
    model = ScriptedModel([
        call("load_skill", "c1", name="data-analyst"),
        "Loaded.",
        call("load_skill", "c2", name="data-analyst"),
        call("list_sources", "c3"),
        "Three sources.",
    ])
    chat = Agent(model=model, skills=[EXAMPLES]).conversation()
    chat.send_sync("load the analyst")
    result = chat.send_sync("which sources are there?")
    sources = json.loads(model.requests[4].messages[-1].content)
    assert [s["name"] for s in sources] == ["fi_reporting", "bpc_reporting",
                                            "consolidation_mart"]
    assert result.state is RunState.COMPLETED


def test_agent_rejects_a_bad_skills_folder(tmp_path: Path) -> None:
    from reactloop import UserError

    with pytest.raises(UserError, match="does not exist"):
        Agent(model=ScriptedModel([]), skills=[tmp_path / "missing"])


def test_loading_twice_in_one_run_answers_with_a_short_note() -> None:
    model = ScriptedModel([
        call("load_skill", "c1", name="airport"),
        call("load_skill", "c2", name="airport"),
        "Done.",
    ])
    Agent(model=model, skills=[EXAMPLES]).run_sync("airport help")
    full = model.requests[1].messages[-1].content
    note = model.requests[2].messages[-1].content
    assert full.startswith("# Skill: airport")
    assert note.startswith("Skill 'airport' is already loaded") and "show_poi" in note
    assert tool_names(model.requests[2]).count("show_poi") == 1
