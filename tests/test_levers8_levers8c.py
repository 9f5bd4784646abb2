"""Levers for workspace listings, a table's row count, a file said where it is not, times of
day said in words and conversions said without "convert" (issue 23, tenth sitting, levers8c),
each checked without running the model — the offer, the call a reply must make, the answer's
first figure — on a workspace written by the test, in phrasings of no eval set."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from _lever_tools import count_letters
from reactloop import Agent, ModelRequest, ToolCall, tool
from reactloop._demo_tools import calculate, current_time
from reactloop.models._listing import asks_listing
from reactloop.models._tables import table_total
from reactloop.models._times import spoken_times
from reactloop.testing import ScriptedModel

pytest.importorskip("llama_cpp")

from reactloop.models.local import Guidance, plan_reply


@tool
def time_convert_time(source_timezone: str, time: str, target_timezone: str) -> str:
    """Convert time between timezones

    Args:
        source_timezone: Source IANA timezone name
        time: Time to convert in 24-hour format (HH:MM)
        target_timezone: Target IANA timezone name
    """
    return "{}"


TOOLS = [calculate, count_letters, current_time, time_convert_time]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "todo.md").write_text("- renew the passport\n- pay the gym\n", encoding="utf-8")
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "budget.csv").write_text(
        "quarter,spend\nq1,400\nq2,500\nq3,450\n", encoding="utf-8")
    return tmp_path


def _requests(workspace: Path, question: str, script: list[Any]) -> list[ModelRequest]:
    model = ScriptedModel([*script, "ok"])
    Agent(model=model, tools=TOOLS, workspace=workspace).run_sync(question)
    return model.requests


# -- a request for a listing lists, the folder said pinned ---------------------------------
@pytest.mark.parametrize(("question", "folder"), [
    ("display all my files please", None),
    ("ok so what have I got in here?", None),
    ("what files exist under the reports folder?", "reports"),
    ("erm, what's in reports?", "reports"),
    ("what documents r in the reports dir", "reports"),
])
def test_a_request_for_a_listing_calls_the_lister(workspace: Path, question: str,
                                                  folder: str | None) -> None:
    plan = plan_reply(_requests(workspace, question, [])[0], Guidance())
    assert [t.name for t in plan.callable] == ["list_dir"] and not plan.answer, question
    props = plan.callable[0].parameters["properties"]
    assert (props["path"]["const"] if "path" in props else None) == folder, question


@pytest.mark.parametrize("question", [
    "what documents are there about the passport?",  # a search of the contents
    "which files mention the gym?",
    "show me the way to the station",
    "what's in the news today?",
])
def test_no_listing_for_a_question_about_contents_or_no_files(question: str) -> None:
    assert not asks_listing(question)


# -- a table's row count -------------------------------------------------------------------
@pytest.mark.parametrize("question", [
    "how many quarters does the budget cover?",
    "what's the number of rows in reports/budget.csv",
    "How many entries are there in the budget table?",
])
def test_a_count_of_rows_starts_the_answer(question: str) -> None:
    text = "1\tquarter,spend\n2\tq1,400\n3\tq2,500\n4\tq3,450\n"
    assert table_total(text, question).startswith("3 rows (quarter, spend): q1, q2, q3")


def test_how_many_of_a_numeric_column_is_no_row_count() -> None:
    text = "item,units\npens,40\npads,15\n"
    assert not table_total(text, "how many units are there in stock.csv?").startswith("2 rows")


# -- a file said where it is not: the failure names the lister, then the file is read -------
def test_a_file_not_found_where_said_is_listed_then_read(workspace: Path) -> None:
    question = "What did q2 spend according to budget.csv?"
    failed = ToolCall("read_file", {"path": "budget.csv"})
    second = plan_reply(_requests(workspace, question, [failed])[1], Guidance())
    assert [t.name for t in second.callable] == ["list_dir"] and not second.answer
    listing = ToolCall("list_dir", {"recursive": True})
    third = plan_reply(_requests(workspace, question, [failed, listing])[2], Guidance())
    assert [t.name for t in third.callable] == ["read_file"] and not third.answer
    assert third.callable[0].parameters["properties"]["path"]["const"] == "reports/budget.csv"


# -- times of day in words; a conversion said without "convert" -----------------------------
@pytest.mark.parametrize(("said", "hhmm"), [
    ("let's say eleven in the morning in Oslo", "11:00"),
    ("half past 4 in the afternoon", "16:30"),
    ("quarter to ten at night", "21:45"),
    ("at seven in the evening", "19:00"),
    ("2 at night", "02:00"),
])
def test_times_said_in_words_are_hh_mm(said: str, hhmm: str) -> None:
    assert spoken_times(said) == [hhmm]


@pytest.mark.parametrize("question", [
    "half past four in the afternoon in Oslo - what's that in Lima?",
    "8 in the morning Toronto = ? Seoul",
])
def test_a_time_and_two_places_are_a_conversion(workspace: Path, question: str) -> None:
    plan = plan_reply(_requests(workspace, question, [])[0], Guidance())
    assert [t.name for t in plan.callable] == ["time_convert_time"] and not plan.answer, question


# -- a file said by its kind or a document's own name: listed, then read ---------------------
@pytest.mark.parametrize(("question", "path"), [
    ("what's the mean spend in my budget spreadsheet?", "reports/budget.csv"),
    ("Who do I pay? It's written in the todo doc.", "todo.md"),
    ("which passport thing was it again? look at the todo", "todo.md"),
    ("what does my todo say about the gym?", "todo.md"),
])
def test_a_file_said_by_its_kind_is_listed_then_read(workspace: Path, question: str,
                                                     path: str) -> None:
    first = plan_reply(_requests(workspace, question, [])[0], Guidance())
    assert [t.name for t in first.callable] == ["list_dir"] and not first.answer, question
    listing = ToolCall("list_dir", {"recursive": True})
    second = plan_reply(_requests(workspace, question, [listing])[1], Guidance())
    assert second.callable[0].parameters["properties"]["path"]["const"] == path, question


def test_a_file_said_as_one_loads_no_skill(workspace: Path) -> None:
    from reactloop.models._skill_select import skill_call

    model = ScriptedModel(["ok"])
    skills = Path(__file__).resolve().parents[1] / "examples" / "skills"
    Agent(model=model, tools=TOOLS, workspace=workspace, skills=[skills]).run_sync(
        "average the amounts of my quarterly spreadsheet for me")
    assert skill_call(model.requests[0]) is None


def test_a_document_the_answer_is_according_to_is_read(workspace: Path) -> None:
    question = "According to the todo, what do I renew?"
    first = plan_reply(_requests(workspace, question, [])[0], Guidance())
    assert [t.name for t in first.callable] == ["list_dir"] and not first.answer


def test_a_folder_said_after_any_verb_is_the_listing_path(workspace: Path) -> None:
    plan = plan_reply(_requests(workspace, "pls open up the reports folder", [])[0], Guidance())
    assert [t.name for t in plan.callable] == ["list_dir"]
    assert plan.callable[0].parameters["properties"]["path"]["const"] == "reports"


def test_written_in_any_of_my_files_searches_them() -> None:
    from reactloop._ranking import asks_documents

    assert asks_documents("is the word 'passport' written in any of my files?")
    assert asks_documents("does 'gym' show up in one of the notes?")
