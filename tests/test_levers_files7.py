"""Levers for files named without a path, counts of files, a change between two rows of a
table, and definition questions with advice (issue 23, ninth sitting), each checked without
running the model — the offer, the call a reply must make, the answer's first figure — on a
workspace written by the test."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from _lever_tools import count_letters
from reactloop import Agent, ModelRequest, ToolCall, tool
from reactloop._demo_tools import calculate, current_time
from reactloop.models._fit import small_talk
from reactloop.models._shaping import render_result
from reactloop.testing import ScriptedModel

pytest.importorskip("llama_cpp")

from reactloop.models.local import Guidance, plan_reply

ROOT = Path(__file__).resolve().parents[1]


TOOLS = [calculate, count_letters, current_time]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "todo.md").write_text("- renew the passport\n- pay the gym\n", encoding="utf-8")
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "budget.csv").write_text(
        "quarter,spend\nq1,400\nq2,500\nq3,450\n", encoding="utf-8")
    (tmp_path / "reports" / "archive").mkdir()
    (tmp_path / "reports" / "archive" / "old.txt").write_text("old\n", encoding="utf-8")
    (tmp_path / "Recipe.txt").write_text(
        "Pancakes: flour, milk, two eggs.\nThe soup needs a bay leaf and an hour.\n",
        encoding="utf-8")
    return tmp_path


def _requests(workspace: Path, question: str, script: list[Any]) -> list[ModelRequest]:
    model = ScriptedModel([*script, "ok"])
    Agent(model=model, tools=TOOLS, workspace=workspace).run_sync(question)
    return model.requests


# -- a file said without a path: list, then read the listed file of that name ---------------
@pytest.mark.parametrize(("question", "path"), [
    ("could you pull up my recipes and say how long the soup takes?", "Recipe.txt"),
    ("look through my todo and tell me what to renew", "todo.md"),
    ("what does the budget file say about q2?", "reports/budget.csv"),
])
def test_a_file_said_without_a_path_is_listed_then_read(workspace: Path, question: str,
                                                        path: str) -> None:
    first = plan_reply(_requests(workspace, question, [])[0], Guidance())
    assert [t.name for t in first.callable] == ["list_dir"] and not first.answer, question
    listing = ToolCall("list_dir", {"recursive": True})
    second = plan_reply(_requests(workspace, question, [listing])[1], Guidance())
    assert [t.name for t in second.callable] == ["read_file"] and not second.answer
    assert second.callable[0].parameters["properties"]["path"]["const"] == path


def test_the_read_file_is_quoted_by_the_line_of_the_question(workspace: Path) -> None:
    question = "could you pull up my recipes and say how long the soup takes?"
    script = [ToolCall("list_dir", {"recursive": True}), ToolCall("read_file", {
        "path": "Recipe.txt"})]
    plan = plan_reply(_requests(workspace, question, script)[2], Guidance())
    assert plan.answer and not plan.callable
    assert plan.prefix.startswith("The soup needs a bay leaf")


@pytest.mark.parametrize("question", [
    "check the weather for me",  # "the X" is no file unless said to be one
    "open my files",  # no one file
    "is there anything in my notes about the gym?",  # a search of the contents
    "what time is it in my city?",  # a clock, no file
])
def test_no_listing_when_no_one_file_is_said(workspace: Path, question: str) -> None:
    plan = plan_reply(_requests(workspace, question, [])[0], Guidance())
    assert "list_dir" not in [t.name for t in plan.callable] or len(plan.callable) > 1, question


@tool
def calendar_events(day: str) -> str:
    """List the calendar's events of a day.

    Args:
        day: the day, e.g. 'monday'
    """
    return "none"


def test_a_tool_named_by_the_request_is_no_file_to_list(workspace: Path) -> None:
    model = ScriptedModel(["ok"])
    Agent(model=model, tools=[*TOOLS, calendar_events], workspace=workspace).run_sync(
        "check my calendar for monday please")
    plan = plan_reply(model.requests[0], Guidance())
    assert "calendar_events" in [t.name for t in plan.callable]


# -- how many files: a listing, recursive when asked, the count first -----------------------
@pytest.mark.parametrize(("question", "deep"), [
    ("count all my files including the ones in subfolders", True),
    ("how many documents are sitting in my workspace altogether?", True),
    ("how many files are there at the top level?", False),
])
def test_how_many_files_is_a_listing_not_a_letter_count(workspace: Path, question: str,
                                                        deep: bool) -> None:
    plan = plan_reply(_requests(workspace, question, [])[0], Guidance())
    assert [t.name for t in plan.callable] == ["list_dir"] and not plan.answer, question
    props = plan.callable[0].parameters["properties"]
    assert (props.get("recursive", {}).get("const") is True) is deep
    assert props.get("path", {}).get("const", ".") == "."  # the root, not a word of the question


def test_a_count_in_a_named_folder_lists_that_folder(workspace: Path) -> None:
    plan = plan_reply(_requests(workspace, "how many files sit in the reports folder?", [])[0],
                      Guidance())
    assert [t.name for t in plan.callable] == ["list_dir"] and not plan.answer
    assert "path" in plan.callable[0].parameters["properties"]


def test_the_answer_starts_with_the_count_of_files_listed(workspace: Path) -> None:
    question = "count all my files including the ones in subfolders"
    requests = _requests(workspace, question, [ToolCall("list_dir", {"recursive": True})])
    plan = plan_reply(requests[1], Guidance())
    assert plan.answer and plan.prefix.startswith(
        "4 files: Recipe.txt, todo.md, reports/budget.csv, reports/archive/old.txt")
    folders = '{"path": ".", "entries": [{"name": "a", "type": "dir"}, {"name": "b.txt", "type": "file"}]}'
    assert render_result(folders, "how many folders do I have?").startswith("1 folder: a")


# -- the change between two rows of a table -------------------------------------------------
TABLE = "1\tquarter,spend\n2\tq1,400\n3\tq2,500\n4\tq3,450\n"


@pytest.mark.parametrize(("question", "figure"), [
    ("what was the percent increase in spend from q1 to q2?", "spend from q1 400 to q2 500: +25% (+100)"),
    ("how much did spend fall between q2 and q3", "spend from q2 500 to q3 450: -50 (-10%)"),
    ("by how much did q3 rise over q1?", "spend from q1 400 to q3 450: +50 (+12.5%)"),
    ("how much did spend change from q1 to q1", ""),  # one row named
])
def test_a_change_between_two_named_rows_begins_the_answer(question: str, figure: str) -> None:
    rendered = render_result(TABLE, question)
    assert rendered.startswith(figure) if figure else "->" not in rendered and "%" not in rendered


# -- a definition question with advice about the thing: no tool ----------------------------
@pytest.mark.parametrize(("question", "talk"), [
    ("what's an e-visa exactly, should i carry a copy of mine?", True),
    ("What is a travel adapter, and do I have to bring my own?", True),
    ("what is a lounge, is there one near me?", False),  # a place to find
    ("what is a layover, where is mine?", False),
    ("what time is it in Lima right now?", False),
    ("is there a pharmacy near gate 7?", False),
])
def test_a_definition_with_advice_about_it_calls_no_tool(question: str, talk: bool) -> None:
    assert small_talk(question) is talk, question


def test_phrasings_are_not_the_eval_sets() -> None:
    sets = ["everyday.yaml", "everyday_more.yaml", "everyday_more2.yaml", "everyday_more3.yaml",
            "everyday_more4.yaml", "holdout.yaml", "holdout_everyday.yaml",
            "holdout_everyday2.yaml", "holdout_everyday3.yaml", "holdout_everyday4.yaml",
            "holdout_everyday5.yaml", "holdout_everyday6.yaml"]
    texts = " ".join((ROOT / "benchmarks" / "evals" / name).read_text(encoding="utf-8").lower()
                     for name in sets)
    module = sys.modules[__name__]
    for name in dir(module):
        for mark in getattr(getattr(module, name), "pytestmark", []):
            if mark.name == "parametrize":
                for case in mark.args[1]:
                    question = case if isinstance(case, str) else case[0]
                    assert question.lower() not in texts, question
