"""The levers behind the seed demos on the embedded model (issue 23), checked without running
the model: several steps (a tool's description names the next one), a tool's own headline
starts the answer, tools whose names mean the same are not offered together, array items are
copied values too; and the demo skills accept what people type."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from reactloop import Message, ModelRequest, ToolCall, ToolRetry
from reactloop.messages import ModelSettings, ToolSpec
from reactloop.models._gbnf import Candidates, reply_grammar
from reactloop.skills import SkillSet

pytest.importorskip("llama_cpp")

from reactloop.models.local import Guidance, plan_reply

SKILLS = Path(__file__).resolve().parents[1] / "examples" / "skills"
SET = SkillSet.discover([SKILLS])
AIRPORT = {t.name: t for t in SET.skill_tools("airport")}
SPECS = tuple(t.spec() for t in AIRPORT.values())


class Ctx:
    """Just enough of a ToolContext for a skill tool called directly."""

    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []

    def emit(self, name: str, data: Any) -> None:
        self.events.append((name, data))


def _request(*messages: Message) -> ModelRequest:
    return ModelRequest("sys", messages, SPECS, (), ModelSettings())


def _calls(grammar: str | None) -> list[str]:
    return re.findall(r"^call-([\w-]+) ::=", grammar or "", re.M)


def _after(question: str, tool: str, args: dict[str, Any], content: str) -> ModelRequest:
    call = Message.assistant(None, [ToolCall(tool, args, "c1")])
    return _request(Message.user(question), call, Message.tool("c1", tool, content))


# -- several steps ----------------------------------------------------------------------------
def test_a_result_leads_on_to_the_tool_its_description_names() -> None:
    found = json.dumps([{"id": 111, "name": "Gate 12", "building": "Terminal B"}])
    request = _after("Where is gate B12?", "search_pois", {"term": "gate B12"}, found)
    plan = plan_reply(request, Guidance())
    assert _calls(plan.grammar) == ["show-poi"]  # the next step, and no answer yet
    assert '{\\"answer\\"' not in (plan.grammar or "") and "answer ::=" not in plan.grammar
    assert "show_poi" in {t.name for t in plan.listed + plan.extra}
    # the question decides between the tools named: a route was asked for
    asked = _after("Directions from gate B12 to the coffee bar on the map", "search_pois",
                   {"term": "gate B12"}, found)
    assert _calls(plan_reply(asked, Guidance()).grammar) == ["show-directions"]
    # without the lever the reply after a result must answer
    off = plan_reply(request, Guidance(follow_up=False))
    assert _calls(off.grammar) == [] and "answer ::=" in (off.grammar or "")


def test_the_next_step_copies_its_ids_from_the_result_before_it() -> None:
    found = json.dumps(AIRPORT["search_pois"].fn("coffee"))
    assert len(found) > 120  # too long for its spans to be copied, but not its numbers
    plan = plan_reply(_after("Where can I get a coffee?", "search_pois", {"term": "coffee"},
                             found), Guidance())
    args = re.search(r"^args-show-poi ::= (.*)$", plan.grammar or "", re.M)
    assert args is not None and '("126" | "131")' in args.group(1)  # the ids found, no others


def test_a_tool_is_not_offered_again_as_the_next_step_of_the_same_turn() -> None:
    shown = json.dumps({"id": 111, "name": "Gate 12"})
    first = Message.assistant(None, [ToolCall("search_pois", {"term": "gate B12"}, "c1")])
    second = Message.assistant(None, [ToolCall("show_poi", {"poi_id": 111}, "c2")])
    request = _request(Message.user("Where is gate B12?"), first,
                       Message.tool("c1", "search_pois", "[]"), second,
                       Message.tool("c2", "show_poi", shown))
    plan = plan_reply(request, Guidance())
    assert _calls(plan.grammar) == [] and "answer ::=" in (plan.grammar or "")


# -- a tool's headline starts the answer ----------------------------------------------------
def test_a_long_result_with_a_headline_starts_the_answer_with_it() -> None:
    details = AIRPORT["show_poi"].fn(111, Ctx())
    assert len(json.dumps(details)) > 120  # too long to begin an answer with as it is
    request = _after("Where is gate B12?", "show_poi", {"poi_id": 111},
                     json.dumps(details, separators=(",", ":")))
    plan = plan_reply(request, Guidance())
    assert plan.prefix == details["headline"] and "Terminal B" in plan.prefix
    assert re.search(r"char\{0,120\}", plan.grammar or "")  # a sentence more at most
    without = plan_reply(_after("Where is gate B12?", "show_poi", {"poi_id": 111},
                                json.dumps({k: v for k, v in details.items()
                                            if k != "headline"})), Guidance())
    # without a headline the record itself, as one line of its values, begins the answer
    assert without.prefix.startswith("name: Gate 12;") and "Terminal B" in without.prefix


# -- tools whose names mean the same --------------------------------------------------------
def test_tools_named_alike_are_not_offered_together() -> None:
    asked = Message.user("Directions from gate B12 to the coffee bar on the map")
    plan = plan_reply(_request(asked), Guidance())
    names = [t.name for t in plan.listed]
    assert "show_directions" in names and "get_directions" not in names


# -- array items are copied values too ------------------------------------------------------
def test_array_items_are_restricted_to_the_candidates() -> None:
    spec = ToolSpec("route", "A route.", {"type": "object", "properties": {
        "stops": {"type": "array", "items": {"type": "string"}}}, "required": ["stops"]})
    grammar = reply_grammar([spec], answer=False,
                            candidates={"route": Candidates((), ("gate B12", "coffee bar"))})
    item = re.search(r"^arg-route-stops-item ::= (.*)$", grammar, re.M)
    assert item is not None and '"\\"gate B12\\""' in item.group(1)
    assert "char" not in item.group(1)  # no free text


# -- the demo skills accept what people type ------------------------------------------------
def test_airport_finds_gates_by_their_code_and_routes_by_name() -> None:
    assert [p["id"] for p in AIRPORT["search_pois"].fn("gate B12")] == [111]
    ctx = Ctx()
    route = AIRPORT["show_directions"].fn(start="gate B12", destination="the coffee bar",
                                          ctx=ctx)
    assert route["path"][0] == "poi-111" and route["to"] == "Plaza Coffee Bar"
    assert f"{route['distance_m']} m" in route["headline"]
    assert ctx.events[-1][1]["waypoints"] == [111, 126]
    # a whole trip in one argument is split into start and destination
    trip = AIRPORT["show_directions"].fn(start="B12 to the coffee bar on the map",
                                         destination="B12 to the coffee bar on the map",
                                         ctx=Ctx())
    assert (trip["from"], trip["to"]) == ("Gate 12", "Plaza Coffee Bar")
    assert AIRPORT["show_directions"].fn(start=111, destination=126, ctx=Ctx())[
        "distance_m"] == route["distance_m"]
    with pytest.raises(ToolRetry, match="No place matches 'the moon'"):
        AIRPORT["show_directions"].fn(start=111, destination="the moon", ctx=Ctx())


def test_data_analyst_takes_a_source_named_inside_other_words() -> None:
    compare = {t.name: t for t in SET.skill_tools("data-analyst")}["compare_sources"]
    r = compare.fn("Compare fi_reporting", "bpc_reporting")
    assert r["source_a"] == "fi_reporting"
    assert "difference 8,000" in r["headline"]
    with pytest.raises(ToolRetry, match="Available sources"):
        compare.fn("fi_reports", "bpc_reporting")


def test_book_flight_tools_run_the_scripts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BOOK_FLIGHT_NOW", "2026-11-30T09:00:00")
    tools = {t.name: t for t in SET.skill_tools("book-flight")}
    found = tools["search_flights"].fn("London", "New York", "2026-12-01")
    cheapest = min(found["flights"], key=lambda f: f["total_price"])
    assert cheapest["flight"] in found["headline"] and found["count"] == len(found["flights"])
    booked = tools["book_flight"].fn(cheapest["flight_id"], ["Ada Lovelace"])
    assert booked["booking_reference"] in booked["headline"]
    with pytest.raises(ToolRetry, match="unknown airport or city 'Atlantis'"):
        tools["search_flights"].fn("Atlantis", "New York", "2026-12-01")
