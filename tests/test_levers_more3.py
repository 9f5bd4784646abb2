"""The embedded model's levers trained on ``benchmarks/evals/everyday_more3.yaml`` (issue 23,
sixth sitting), each checked without running the model: a share said in words is an
expression, a time of day said of a place asks for its clock, a search looks for the thing
(not for "my", "documents" or "map"), a question that says where a thing is written asks the
search, and a trip (from/at one place to another) offers the route with its two places, while
a question for one place does not offer the route."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reactloop import Agent, ToolCall
from reactloop._demo_tools import calculate
from reactloop._ranking import terms
from reactloop.messages import ToolSpec
from reactloop.models._fit import (
    argument_choices,
    expressions,
    named_values,
    need_clause,
    search_terms,
    small_talk,
    spoken_shares,
    trip_places,
)
from reactloop.models._gbnf import Candidates
from reactloop.models._repeat import CLOSING, NoRepeatNgram, counting, degenerate
from reactloop.models._shaping import figure, render_result
from reactloop.testing import ScriptedModel

pytest.importorskip("llama_cpp")

from reactloop.models.local import Guidance, plan_reply

ROOT = Path(__file__).resolve().parents[1]
SKILLS = ROOT / "examples" / "skills"


def test_a_share_said_in_words_is_an_expression() -> None:
    assert spoken_shares("What's 15 % of 240?") == ["15 * 240 / 100"]
    assert spoken_shares("what's 12 percent of 80") == ["12 * 80 / 100"]
    assert spoken_shares("What is half of 3 thousand?") == ["3000 / 2"]
    assert spoken_shares("a quarter of 1,000") == ["1000 / 4"]
    assert spoken_shares("I spent half my day reading") == []
    assert "calculate" in terms("what's 12 percent of 80", expand=True)
    found = Candidates((), ("12 percent", "80", "percent of 80"))
    assert expressions(calculate.spec(), "what's 12 percent of 80", found).strings == (
        "12 * 80 / 100",)
    assert calculate.fn("12 * 80 / 100") == 9.6  # type: ignore[attr-defined]


def test_a_time_of_day_said_of_a_place_asks_for_its_clock() -> None:
    for question in ("My friend is in San Francisco. Is it late there?",
                     "Are my parents in Sydney awake yet?",
                     "I want to call a colleague in Berlin. What hour is it over there?"):
        assert "time" in terms(question, expand=True), question
    # a schedule ("in the morning") and a lateness without a place are no clock questions
    assert "time" not in terms("I want to fly from London to Paris in the morning", expand=True)
    assert "time" not in terms("Am I too late to apply?", expand=True)


GREP = ToolSpec("grep", "Search file contents with a regular expression.", {
    "type": "object", "properties": {"pattern": {"type": "string"}, "path": {"type": "string"}},
    "required": ["pattern"]})
SEARCH = ToolSpec("search_pois", "Search the airport's points of interest.", {
    "type": "object", "properties": {"term": {"type": "string"}, "building": {"type": "string"}}})


def test_a_search_looks_for_the_thing_not_for_where_to_look() -> None:
    found = Candidates((), ("search", "my", "documents", "invoice", "search my documents",
                            "documents for invoice"))
    # a regular expression matches without regard to case (levers5: "instal" finds "Install")
    assert search_terms(GREP, found).strings == ("(?i)invoice",)
    shown = Candidates((), ("map", "family room", "family room on my map", "mark duty free",
                            "duty free"))
    assert search_terms(SEARCH, shown).strings == ("family room", "duty free")
    # a tool whose argument is no search term keeps every value
    assert search_terms(calculate.spec(), found) == found


def test_where_a_thing_is_written_asks_the_search() -> None:
    for question in ("Do any of my files talk about Acme?", "Where is the port configured?"):
        assert "search" in terms(question, expand=True), question


ROUTE = ToolSpec("show_directions", "Draw the walking route from one place to another.", {
    "type": "object", "properties": {"start": {"type": "string"},
                                     "destination": {"type": "string"}},
    "required": ["start", "destination"]})


def test_a_trip_gives_the_route_its_two_places() -> None:
    assert trip_places("I'm at gate 3. How far is it to the pharmacy?") == ("gate 3", "pharmacy")
    assert trip_places("Guide me from gate 7 to Cafe Aroma") == ("gate 7", "Cafe Aroma")
    assert trip_places("Any flights from London to Paris on 2026-12-05?") == ("London", "Paris")
    assert trip_places("I need to be in Paris by noon") is None
    props = argument_choices(ROUTE, "Show me the way from gate 12 to the water refill station."
                             ).parameters["properties"]
    assert props["start"]["enum"] == ["gate 12"]
    assert props["destination"]["enum"] == ["water refill station"]
    assert argument_choices(ROUTE, "Where is gate 12?") == ROUTE


def _offer(question: str) -> list[str]:
    model = ScriptedModel([ToolCall("load_skill", {"name": "airport"}), "done"])
    Agent(model=model, skills=[SKILLS]).run_sync(question)
    plan = plan_reply(model.requests[1], Guidance())
    return [t.name for t in plan.callable if not t.internal]


def test_one_place_to_show_offers_no_route_and_a_trip_ranks_it_first() -> None:
    assert "show_directions" not in _offer("Show the family room on my map please")
    assert _offer("Guide me from gate 7 to Cafe Aroma")[0] == "show_directions"


def test_a_need_searches_for_the_thing_needed() -> None:
    assert need_clause("I could really use a coffee before boarding.") == "a coffee"
    assert need_clause("I have a headache, where can I get some medicine?") == "some medicine"
    assert "service" in terms("I need to refill my water bottle.", expand=True)
    found = Candidates((), ("coffee", "before", "boarding", "coffee before boarding"))
    assert search_terms(SEARCH, found, "I could really use a coffee before boarding."
                        ).strings == ("coffee",)


QUERY = ToolSpec("query_source", "Query one data source.", {
    "type": "object", "properties": {"source": {"type": "string"}}, "required": ["source"]})
ROWS = {"source": "consolidation_mart", "row_count": 4, "rows": [
    {"company": "1001", "period": "202401", "amount": 1492000.0},
    {"company": "1002", "period": "202401", "amount": 912000.0},
    {"company": "1002", "period": "202402", "amount": 1279000.0},
    {"company": "2001", "period": "202402", "amount": 1014000.0}]}


def test_a_source_is_a_name_the_question_says_not_its_company_number() -> None:
    question = "How much did company 2001 report in consolidation_mart for period 202402?"
    found = Candidates(("2001", "202402"), ("2001", "company 2001", "consolidation_mart"))
    assert named_values(QUERY, question, found).strings == ("consolidation_mart",)
    assert named_values(QUERY, "How much is it?", found) == found


def test_a_figure_asked_of_a_table_is_computed_from_the_records_it_names() -> None:
    total = "What's the total amount in consolidation_mart for company 1002?"
    assert figure(ROWS, total) == "amount total 2191000 (2 records: 1002)"
    assert figure(ROWS, "How much did company 2001 report for period 202402?") == (
        "amount 1014000 (1 record: 2001, 202402)")
    assert figure(ROWS, "Show me the rows of consolidation_mart") == ""  # no quantity asked
    assert render_result(json.dumps(ROWS), total).startswith("amount total 2191000")
    # a result cut short gives no total of the records it kept
    cut = json.dumps(ROWS)[:150] + "[… 90 characters omitted …]"
    assert "total" not in render_result(cut, total)
    assert render_result(cut, total).startswith("1001, 202401")


def test_what_a_word_means_or_a_fun_fact_is_no_task_for_a_tool() -> None:
    for question in ("What does a time zone mean?", "What does UTC stand for?",
                     "Tell me a fun fact about airports."):
        assert small_talk(question), question
    assert not small_talk("What does notes.txt say?")
    assert not small_talk("What time is it in Tokyo?")


def test_a_skill_document_is_read_for_a_rule_its_words_answer() -> None:
    from reactloop.models._skill_select import reference_call

    model = ScriptedModel([ToolCall("load_skill", {"name": "book-flight"}), "done"])
    Agent(model=model, skills=[SKILLS]).run_sync("flying with a baby on my lap, what does that cost?")
    call = reference_call(model.requests[1])
    assert call is not None and "fare_rules" in call.arguments["path"]
    # a task on the things a question names is the skill's tool's, though its document names
    # them too
    model = ScriptedModel([ToolCall("load_skill", {"name": "data-analyst"}), "done"])
    Agent(model=model, skills=[SKILLS]).run_sync(
        "Reconcile bpc_reporting against consolidation_mart.")
    assert reference_call(model.requests[1]) is None


def test_a_degenerate_answer_closes_its_string() -> None:
    assert degenerate("Here:\\n- \\n-\\n- ")
    assert degenerate("x\\nSorry.\\nSorry.\\nSorry.")
    assert not degenerate("Items:\\n- a\\n- b\\n- c")
    import numpy as np  # llama.cpp's logits are a numpy array

    guard = NoRepeatNgram(lambda tokens: True, close=(34, lambda ids: bytes(ids)))
    prompt = [1, 2, 3]
    guard(np.array(prompt), np.zeros(128))
    scores = guard(np.array(prompt + list(b"ok\\n-\\n-\\n-")), np.zeros(128))
    assert scores[34] == 0.0 and int((scores <= -CLOSING).sum()) == 127
    assert not np.isinf(scores).any()  # what a grammar allows instead stays finite
    fine = guard(np.array(prompt + list(b"ok\\n- a\\n- b")), np.zeros(128))
    assert not np.isinf(fine).any()


def test_an_answer_that_counts_on_closes_its_string() -> None:
    # seen on the embedded model: a 50-row table copied into the answer turned into a count
    # that ran on to the 600-character cap (23 s of generation on 2 cores)
    count = "ACTUAL; 200000; ACTUAL; 4500, 4505; 4505, 4506; 4506, 4507; 4507, 4508; 4508, 4509"
    assert not degenerate(count)  # four steps of one: not yet
    assert degenerate(count + "; 4509, 4510")
    assert counting("x 4506, 4507, 4508, 4509, 4510, 4511, 4512")
    # rows, totals, a short run of gate numbers and small numbers are not counts
    assert not degenerate("1001, 202401, 400000, ACTUAL, 450000; 1001, 202401, 410000, ACTUAL")
    assert not counting("the totals: 1200, 1350, 1500, 1650, 1800, 1950, 2100")
    assert not counting("Gates 21, 22, 23 and 24 are in Terminal 2")
    assert not counting("steps 1, 2, 3, 4, 5, 6, 7, 8, 9")
    assert not counting("4505, 4506, 4504, 4505, 4506, 4507, 4508")  # a step back
