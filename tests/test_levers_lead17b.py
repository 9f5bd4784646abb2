"""Levers for a table's total against a target asked as a percentage, a folder written with
its trailing slash, remarks opened by an interjection and questions for how a thing works
(issue 23, lead17b), each checked without running the model — the shaped result, the offer,
the call a reply must make — in phrasings of no eval set."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from reactloop import Agent, ModelRequest
from reactloop._demo_tools import calculate, current_time
from reactloop.models._fit import small_talk
from reactloop.models._tables import table_target
from reactloop.testing import ScriptedModel

pytest.importorskip("llama_cpp")

from reactloop.models._skill_select import skill_call
from reactloop.models.local import Guidance, plan_reply

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks" / "evals"))
from tools import TOOLS  # noqa: E402

EVERY = [*TOOLS, calculate, current_time]
VISITORS = "quarter,visitors\nq1,300\nq2,450\nq3,250\n"


# -- a table's total as a percentage of the target the question says -----------------------
@pytest.mark.parametrize(("question", "said"), [
    ("We hoped for 2,000 visitors in q1 and q2. Per the sheet, what percentage of that goal did"
     " we get?", "750 / 2000 = 37.5% of the 2000"),
    ("the target was 800 over all three quarters; what percent of the target did we hit?",
     "1000 / 800 = 125% of the 800"),
    ("budget for q3 was 1000, what share of the budget was used", "250 / 1000 = 25% of the 1000"),
])
def test_a_total_against_a_target_is_said_as_a_percentage(question: str, said: str) -> None:
    assert said in table_target(VISITORS, question), question


def test_a_target_without_a_percentage_keeps_the_gap() -> None:
    shaped = table_target(VISITORS, "we aimed for 700 in q1 and q2, did we make it?")
    assert shaped.endswith("50 over the 700 aimed for") and "%" not in shaped


# -- a folder written with its trailing slash is the listing's path --------------------------
@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "recipes").mkdir()
    (tmp_path / "recipes" / "soup.md").write_text("Leeks and potatoes.\n", encoding="utf-8")
    (tmp_path / "invoices").mkdir()
    (tmp_path / "invoices" / "may.csv").write_text("item,cost\nink,12\n", encoding="utf-8")
    (tmp_path / "todo.txt").write_text("water the plants\n", encoding="utf-8")
    return tmp_path


def _request(question: str, workspace: Path | None = None, skills: bool = False
             ) -> ModelRequest:
    model = ScriptedModel(["ok"])
    Agent(model=model, tools=EVERY, workspace=workspace or ROOT / "benchmarks" / "evals" / "workspace",
          skills=[ROOT / "examples" / "skills"] if skills else []).run_sync(question)
    return model.requests[0]


@pytest.mark.parametrize(("question", "folder"), [
    ("any .md files in recipes/? list em", "recipes"),
    ("show me whats under invoices/ please", "invoices"),
    ("hey which ones are inside recipes/", "recipes"),
])
def test_a_folder_with_its_slash_is_listed(workspace: Path, question: str, folder: str) -> None:
    plan = plan_reply(_request(question, workspace), Guidance())
    assert [t.name for t in plan.callable] == ["list_dir"] and not plan.answer, question
    assert plan.callable[0].parameters["properties"]["path"]["const"] == folder


# -- a remark opened by an interjection is talk; an order after one is not -------------------
@pytest.mark.parametrize("question", [
    "haha my toddler just hid the tv remote in the fridge",
    "omg we nearly missed the last bus home",
    "ugh my laptop decided to update itself in the middle of a call",
    "lmao the parrot next door learned to whistle the ringtone",
])
def test_an_interjection_before_a_remark_is_talk(question: str) -> None:
    assert small_talk(question), question
    plan = plan_reply(_request(question), Guidance())
    assert not plan.callable and plan.answer, question


@pytest.mark.parametrize("question", [
    "lol send an email to Priya",
    "omg what time is it in Lima",
    "ugh my calendar, can you add the dentist on friday",
])
def test_an_interjection_before_a_request_stays_a_request(question: str) -> None:
    assert not small_talk(question), question


# -- how a thing works (what it records, measures, stores) is knowledge ----------------------
@pytest.mark.parametrize("question", [
    "What does the flight data recorder on an airliner actually measure?",
    "what does the cockpit voice recorder really record",
    "What does the transponder on a plane actually do?",
])
def test_how_a_thing_works_is_talk_even_with_a_skills_word(question: str) -> None:
    assert small_talk(question), question
    assert skill_call(_request(question, skills=True)) is None, question


@pytest.mark.parametrize("question", [
    "what does the invoices file record?",
    "what does my step counter actually record?",
])
def test_what_ones_own_thing_records_is_no_general_question(question: str) -> None:
    assert not small_talk(question), question
