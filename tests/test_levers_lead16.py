"""Levers the lead built on holdout_everyday10's misses after its one blind run (issue 23),
checked here in phrasings of their own: "does my X folder have …" lists that folder; a
question for the change a percentage makes ("how much do I save") is that change; "knock 8%
off" a named row; "what does it mean when …" and a standard named with a number ("UTF-8")
call no tool; "at 08:30 my time" is the time where the user is."""

from __future__ import annotations

import pytest
from tests.test_levers_workspace_expr import _first

from reactloop.models.local import Guidance, plan_reply


@pytest.mark.parametrize(("question", "folder"), [
    ("does my data folder have a spreadsheet in it?", "data"),
    ("is there a changelog in the docs folder?", "docs"),
])
def test_does_a_folder_have_a_thing_lists_that_folder(question: str, folder: str) -> None:
    plan = plan_reply(_first(question), Guidance())
    assert [t.name for t in plan.callable] == ["list_dir"], question
    assert plan.callable[0].parameters["properties"]["path"]["const"] == folder


def test_the_change_a_percentage_makes_when_the_question_asks_it() -> None:
    from reactloop._amounts import said_arithmetic

    assert said_arithmetic("boots were 140 and are 25% off, how much would I save?") == [
        "140 * 25 / 100"]
    assert said_arithmetic("dinner came to 86 plus a 15% tip; how much is the tip?") == [
        "86 * 15 / 100"]
    assert said_arithmetic("boots were 140 and are 25% off, what do I pay?") == ["140 * 75 / 100"]


def test_a_percentage_knocked_off_a_named_row() -> None:
    from reactloop.models._tables import row_arithmetic

    table = "     1\tquarter,revenue\n     2\tq1,4000\n     3\tq2,5200"
    assert row_arithmetic(table, "knock 5% off q2 please") == "revenue q2 5200 - 260 = 4940"


@pytest.mark.parametrize(("question", "talk"), [
    ("what does it mean when a video is exported as MP4?", True),
    ("What does it mean if an email is sent as BCC?", True),
    ("what does it mean when my notes.txt says tbd?", False),
    ("is gate B12 open now?", False),
])
def test_what_it_means_and_a_standard_named_with_a_number(question: str, talk: bool) -> None:
    from reactloop.models._fit import small_talk

    assert small_talk(question) is talk, question


def test_a_time_said_as_my_time_is_where_the_user_is() -> None:
    from reactloop.models._times import zone_of_time

    text = "we're in lisbon and my aunt in perth calls at 7:15 our time; what is that for her?"
    assert zone_of_time(text, ["lisbon", "perth"]) == "lisbon"
    assert zone_of_time("in perth at 7:15, what time in lisbon", ["lisbon", "perth"]) == "perth"
