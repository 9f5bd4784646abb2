"""Levers for questions about the user's files, for expressions of several operators, and for
greetings and general questions (issue 23, eighth sitting), each checked without running the
model: the ranked offer, the call a reply must make, or that no tool is offered."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from reactloop import Agent, ModelRequest, ToolCall, tool
from reactloop._demo_tools import calculate, current_time
from reactloop.models._fit import small_talk
from reactloop.models._skill_select import skill_call
from reactloop.testing import ScriptedModel

pytest.importorskip("llama_cpp")

from reactloop.models.local import Guidance, plan_reply

ROOT = Path(__file__).resolve().parents[1]
SKILLS = ROOT / "examples" / "skills"
WORKSPACE = ROOT / "benchmarks" / "evals" / "workspace"


@tool
def add(a: float, b: float) -> float:
    """Add two numbers and return the sum.

    Args:
        a: the first number
        b: the second number
    """
    return a + b


@tool
def subtract(a: float, b: float) -> float:
    """Subtract b from a and return the difference a - b.

    Args:
        a: the number to subtract from
        b: the number to subtract
    """
    return a - b


@tool
def multiply(a: float, b: float) -> float:
    """Multiply two numbers and return the product.

    Args:
        a: the first number
        b: the second number
    """
    return a * b


@tool
def divide(a: float, b: float) -> float:
    """Divide a by b and return the quotient a / b.

    Args:
        a: the number to divide
        b: the number to divide by
    """
    return a / b


@tool
def km_to_miles(km: float) -> float:
    """Convert a distance from kilometres to miles.

    Args:
        km: the distance in kilometres
    """
    return km * 0.621371


ARITHMETIC = [add, subtract, multiply, divide, calculate, current_time, km_to_miles]


def _first(question: str, tools: list[Any] | None = None, *, skills: bool = True
           ) -> ModelRequest:
    model = ScriptedModel(["ok"])
    Agent(model=model, tools=tools if tools is not None else ARITHMETIC,
          skills=[SKILLS] if skills else [], workspace=WORKSPACE).run_sync(question)
    return model.requests[0]


def _offer(request: ModelRequest) -> tuple[list[str], bool]:
    plan = plan_reply(request, Guidance())
    return [t.name for t in plan.callable], plan.answer


# -- a file named in the question is read first, its figures computed after ---------------
@pytest.mark.parametrize("question", [
    "what do january and february come to together in data/sales.csv?",
    "Please sum up the amounts listed in sales.csv",
    "multiply the two figures in data/sales.csv for me",
    "Work out 10% of the total in data/sales.csv",
])
def test_a_named_file_is_read_before_any_arithmetic(question: str) -> None:
    request = _first(question)
    assert skill_call(request) is None
    plan = plan_reply(request, Guidance())
    assert [t.name for t in plan.callable] == ["read_file"] and not plan.answer, question
    assert plan.candidates is not None
    assert all("sales.csv" in s for s in plan.candidates["read_file"].strings)


def test_a_web_or_mail_address_is_no_file_to_read() -> None:
    from reactloop.models._files import named_file

    assert named_file("mail bob.stone@example.com about it") is None
    assert named_file("is example.org down?") is None
    assert named_file("open reports/q3.csv") == "reports/q3.csv"


def test_after_the_read_the_answer_starts_with_the_figure_the_question_asks() -> None:
    model = ScriptedModel([ToolCall("read_file", {"path": "data/sales.csv"}), "done"])
    Agent(model=model, tools=ARITHMETIC, workspace=WORKSPACE).run_sync(
        "what do january and february come to together in data/sales.csv?")
    plan = plan_reply(model.requests[1], Guidance())
    assert plan.answer and not plan.callable
    assert plan.prefix.startswith("amount january 1200 + february 1350 = 2550")


@pytest.mark.parametrize(("question", "figure"), [
    ("what is the combined amount of all rows?", "amount total 2550 (2 rows)"),
    ("average of march and january, please", "amount average of"),
    ("mean monthly amount?", "amount average 1275 (2 rows)"),
    ("which month was it?", ""),  # asks no sum
    ("in which month did we earn the most?", "amount highest february 1350"),
    ("what was our weakest... er, lowest month?", "amount lowest january 1200"),
])
def test_a_table_figure_sums_or_picks_the_rows_named_or_every_row(question: str, figure: str) -> None:
    from reactloop.models._tables import table_total

    text = "1\tmonth,amount\n2\tjanuary,1200\n3\tfebruary,1350\n"
    got = table_total(text, question)
    if question.startswith("average of march"):  # one row named (no march): no sum of one
        assert got == ""
    else:
        assert got.startswith(figure) if figure else got == ""


# -- a question whether the files say something is a search of their contents --------------
@pytest.mark.parametrize(("question", "words"), [
    ("is there a file that says when the office closes on fridays?", {"office", "clos", "friday"}),
    ("did we note down the wifi password anywhere?", {"wifi", "password"}),
    ("any docs about restarting the server?", {"restart", "server"}),
    ("Do any of our notes mention the landlord?", {"landlord"}),
    ("do I have something written about the parking permit?", {"park", "permit"}),
    ("can you look through my notes for anything on the boiler?", {"boiler"}),
    ("when is the water bill due, according to our docs?", {"water", "bill", "due"}),
    ("does the readme explain the configuration?", {"configur"}),  # the root: "configure"
])
def test_a_question_whether_the_files_say_something_searches_them(
        question: str, words: set[str]) -> None:
    request = _first(question)
    assert skill_call(request) is None, question
    plan = plan_reply(request, Guidance())
    assert [t.name for t in plan.callable] == ["grep"] and not plan.answer, question
    assert [t.name for t in plan.listed] == ["grep"]  # no tool that merely shares "time"
    assert plan.candidates is not None
    found = {w for s in plan.candidates["grep"].strings for w in s.removeprefix("(?i)").split("|")}
    assert found == words, question


def test_the_kind_of_answer_asked_is_no_word_a_file_says() -> None:
    from reactloop.models._files import any_word_pattern

    assert any_word_pattern(("(?i)time", "(?i)lunch", "(?i)served"),
                            "is there a note saying what time lunch is served?") == (
        "(?i)lunch|serv",)
    assert any_word_pattern(("(?i)time",), "what time?") == ("(?i)time",)  # nothing else


def test_a_question_that_names_a_folder_is_still_a_listing() -> None:
    names, answer = _offer(_first("how many files sit in the data folder?"))
    assert "list_dir" in names and "grep" not in names and not answer


# -- an expression of several operators goes whole to the expression tool -----------------
@pytest.mark.parametrize("question", [
    "what's 880/8 - 6?",
    "compute 12*7+3 please",
    "Could you figure out 50 - 3 * 4",
    "what is 900 divided by 3 minus 75?",
    "how much is 14 times 6 plus 9",
    "what's the sum of 17, 23 and 41?",  # three numbers: more than add takes
    "multiply 3, 5 and 11 please",
])
def test_an_expression_of_several_operators_is_calculated_whole(question: str) -> None:
    plan = plan_reply(_first(question), Guidance())
    assert [t.name for t in plan.callable] == ["calculate"] and not plan.answer, question
    assert plan.candidates is not None
    (expression,) = plan.candidates["calculate"].strings
    assert sum(expression.count(op) for op in "+-*/") == 2, expression


def test_a_spoken_expression_is_written_as_typed() -> None:
    from reactloop.models._operators import expression_operators, spoken_arithmetic

    assert spoken_arithmetic("what is 900 divided by 3 minus 75?") == ["900 / 3 - 75"]
    assert spoken_arithmetic("what is 6 plus 7") == ["6 + 7"]
    assert spoken_arithmetic("add up 1,250, 40 and 7") == ["1250 + 40 + 7"]
    assert expression_operators("what's 880/8 - 6 on 2024-05-01?") == [["/", "-"]]
    assert expression_operators("open data/q3.csv at 10:30") == []


@pytest.mark.parametrize(("question", "kept"), [
    ("what is 63 + 29?", {"add", "calculate"}),  # exactly one op of add's kind
    ("what is 63 * 29?", {"multiply", "calculate"}),
    ("what is 630 / 7?", {"divide", "calculate"}),
])
def test_one_operation_may_still_go_to_its_two_number_tool(question: str, kept: set[str]
                                                            ) -> None:
    from reactloop.models._operators import whole_expression

    specs = [t.spec() for t in ARITHMETIC]
    # a tool of numbers of no operation (km_to_miles) is no part of an expression either
    assert {t.name for t in whole_expression(specs, question)} == kept | {"current_time"}


# -- greetings and general questions call nothing, requests after a greeting still do ------
@pytest.mark.parametrize("question", [
    "hiya! killing time before boarding, just wanted to say hello",
    "good afternoon :)",
    "hey there, hope your weekend was fun",
    "morning! bored at the lounge",
    "What's the difference between a hostel and a hotel, generally speaking?",
    "how do a carry-on and a personal item differ?",
    "In general, why do planes fly so high?",
    "okay, talk to you soon!",  # acknowledgements and farewells only
    "perfect, got it. bye for now",
])
def test_greetings_and_general_questions_call_no_tool(question: str) -> None:
    assert small_talk(question), question
    request = _first(question)
    assert _offer(request) == ([], True)
    assert skill_call(request) is None


@pytest.mark.parametrize(("question", "skill", "tool_name"), [
    ("hello! where can I find gate 3?", "airport", None),
    ("hey, what's the time in Oslo?", None, "current_time"),
    ("good morning, can you add 41 and 17?", None, "add"),
    ("hi, what's the difference between 930 and 477?", None, "subtract"),
    ("ok, now convert 12 km to miles", None, "km_to_miles"),
])
def test_a_request_after_a_greeting_is_still_served(question: str, skill: str | None,
                                                   tool_name: str | None) -> None:
    assert not small_talk(question), question
    request = _first(question)
    call = skill_call(request)
    if skill is not None:
        assert call is not None and call.arguments == {"name": skill}
    else:
        assert call is None
        names, answer = _offer(request)
        assert tool_name in names and not answer, (question, names)


def test_phrasings_are_not_the_eval_sets() -> None:
    # the sets tuned on or already run; a blind set (a later held-out or validation set) is
    # never read, not even by a test
    sets = ["everyday.yaml", "everyday_more.yaml", "everyday_more2.yaml", "everyday_more3.yaml",
            "holdout.yaml", "holdout_everyday.yaml", "holdout_everyday2.yaml",
            "holdout_everyday3.yaml", "holdout_everyday4.yaml", "holdout_everyday5.yaml",
            "holdout_everyday6.yaml"]
    texts = " ".join((ROOT / "benchmarks" / "evals" / name).read_text(encoding="utf-8").lower()
                     for name in sets)
    module = sys.modules[__name__]
    for name in dir(module):
        marks = getattr(getattr(module, name), "pytestmark", [])
        for mark in marks:
            if mark.name == "parametrize":
                for case in mark.args[1]:
                    question = case if isinstance(case, str) else case[0]
                    assert question.lower() not in texts, question


@pytest.mark.parametrize(("question", "offered"), [
    ("what's the difference between ISO and ANSI keyboards?", False),  # names, no number
    ("how many miles is a half marathon?", None),  # a number said in words: may convert
    ("what's the difference between 930 and 477?", True),
])
def test_a_tool_of_numbers_only_needs_a_number_in_the_question(question: str,
                                                               offered: bool | None) -> None:
    from reactloop.models._operators import lacks_number

    assert lacks_number(subtract.spec(), question) is (offered is False)
    names, _ = _offer(_first(question, [subtract, current_time], skills=False))
    if offered is not None:
        assert ("subtract" in names) is offered, (question, names)


def test_words_of_looking_through_files_are_no_filler_of_other_searches() -> None:
    # "check" says where to look only for the files' search: the airport's "check-in hall"
    # is still searched by its name
    model = ScriptedModel([ToolCall("load_skill", {"name": "airport"}), "done"])
    Agent(model=model, tools=[calculate, current_time], skills=[SKILLS],
          workspace=WORKSPACE).run_sync("please put the check-in hall on the map")
    plan = plan_reply(model.requests[1], Guidance())
    assert [t.name for t in plan.callable] == ["search_pois"] and plan.candidates is not None
    assert plan.candidates["search_pois"].strings == ("check-in hall",)
