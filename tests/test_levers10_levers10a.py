"""Levers of the twelfth sitting (levers10a, issue 23): data and numbers. Filters and groups
a question says for a table tool, the figure of the one record a lookup names, the record a
"which … had the highest" asks, a row of a table repeated over a span or as a share of the
total, a row lowered by a percentage, arithmetic said wholly in words, a tip said before its
percentage, and a two-number call that wrote one number twice. Each checked without the
model, in phrasings of its own (none from an eval set)."""

from __future__ import annotations

import json

import pytest

from reactloop import ToolCall, tool


@tool
def ledger_query(ledger: str, filters: dict[str, str] | None = None,
                 group_by: list[str] | None = None) -> str:
    """Rows of one ledger, or its measures summed per group.

    Args:
        ledger: the ledger's name.
        filters: column values to keep, e.g. {"branch": "3301", "month": "202405"}.
        group_by: columns to group by; the measures are summed per group.
    """
    return "rows"


def _filled(question: str, arguments: dict[str, object] | None = None) -> dict[str, object]:
    from reactloop.models._filters import said_filters

    call = ToolCall("ledger_query", arguments or {"ledger": "north_ledger"})
    return dict(said_filters(call, [ledger_query.spec()], question).arguments)


# -- the filters and the grouping a question says ----------------------------------------------
def test_a_lower_case_word_after_a_key_is_no_value_and_a_which_question_groups() -> None:
    question = "which branch sold the most in north_ledger for month 202406?"
    assert _filled(question) == {"ledger": "north_ledger", "filters": {"month": "202406"},
                                 "group_by": ["branch"]}
    # the model copied "sold" after "branch": dropped, the question's month kept
    written = _filled(question, {"ledger": "north_ledger", "filters": {"branch": "sold"}})
    assert written["filters"] == {"month": "202406"}
    # "which month was the lowest over all months": no month "was", no month "s"
    assert _filled("which month was the lowest over all months in north_ledger?") == {
        "ledger": "north_ledger", "group_by": ["month"]}
    # "the most office supplies", "least on cleaning": those rows, not every row per branch
    assert "group_by" not in _filled(
        "which branch bought the most office supplies in north_ledger in 202406?")
    assert "group_by" not in _filled("which branch spent least on cleaning in north_ledger?")


def test_a_code_said_without_its_key_fills_the_key_written_its_way() -> None:
    # "3307" is written like the branch example, "202409" like the month; "in 2024" is a year
    assert _filled("what did 3307 spend in 202409 according to north_ledger?")["filters"] == {
        "branch": "3307", "month": "202409"}
    assert _filled("north_ledger rows for branch 3301 in 2024")["filters"] == {"branch": "3301"}
    # a code labelled by another word ("cost centre 610500") is no month (6100 is no year)
    assert _filled("cost centre 610500 of branch 3302 in north_ledger")["filters"] == {
        "branch": "3302"}


def test_a_value_the_call_wrote_gives_way_to_the_one_the_question_says() -> None:
    written = _filled("branch 3305, month 202410, north_ledger",
                      {"ledger": "north_ledger", "filters": {"branch": "3301"}})
    assert written["filters"] == {"branch": "3305", "month": "202410"}
    same = {"ledger": "north_ledger", "filters": {"branch": "3305", "month": "202410"}}
    assert _filled("branch 3305, month 202410, north_ledger", same) == same


# -- the figure of the records a result holds --------------------------------------------------
_ROWS = {"ledger": "north_ledger", "row_count": 6, "rows": [
    {"branch": "3301", "month": "202406", "line": "710100", "line_name": "Office supplies",
     "amount": 1250.0},
    {"branch": "3301", "month": "202406", "line": "710200", "line_name": "Cleaning",
     "amount": 800.0},
    {"branch": "3302", "month": "202406", "line": "710100", "line_name": "Office supplies",
     "amount": 2075.0},
    {"branch": "3302", "month": "202406", "line": "710200", "line_name": "Cleaning",
     "amount": 640.0},
    {"branch": "3303", "month": "202406", "line": "710100", "line_name": "Office supplies",
     "amount": 990.0},
    {"branch": "3303", "month": "202406", "line": "710200", "line_name": "Cleaning",
     "amount": 1415.0}]}


def test_one_record_named_by_its_codes_answers_with_its_figure_not_a_field_its_label_names() -> None:
    from reactloop.models._shaping import render_result

    text = json.dumps(_ROWS)
    out = render_result(text, "north_ledger: line 710200, branch 3303, month 202406 -- figure?")
    assert out.startswith("amount 1415 (1 record"), out
    out = render_result(text, "what did branch 3302 put on line 710100 in 202406?")
    assert out.startswith("amount 2075 (1 record"), out


def test_which_field_had_the_highest_or_lowest_is_computed_from_the_records() -> None:
    from reactloop.models._shaping import render_result

    text = json.dumps(_ROWS)
    out = render_result(text, "Which branch had the highest total in 202406?")
    assert out.startswith("branch 3302 highest amount 2715"), out
    out = render_result(text, "which branch spent least on cleaning?")
    assert out.startswith("branch 3302 lowest amount 640"), out
    grouped = json.dumps({"rows": [{"month": "202404", "amount": 10.0},
                                   {"month": "202405", "amount": 30.0},
                                   {"month": "202406", "amount": 20.0}]})
    assert render_result(grouped, "which month was the biggest?").startswith(
        "month 202405 highest amount 30")
    assert render_result(grouped, "what was the amount in 202405?").startswith("amount 30")


# -- a table read from a file: a row over a span, a row's share, a row lowered -----------------
_CSV = "     1\tmonth,visitors\n     2\tmarch,420\n     3\tapril,515\n     4\tmay,465\n"


@pytest.mark.parametrize(("question", "start"), [
    ("if every month brought in as many visitors as april, how many would a whole year see?",
     "visitors april 515 * 12 = 6180"),
    ("at the march pace, what's a full twelve months?", "visitors march 420 * 12 = 5040"),
    ("Imagine a quarter where each month is like may. Total?", "visitors may 465 * 3 = 1395"),
    ("if every month matched april for six months, what's the sum?", "visitors april 515 * 6 = 3090"),
    ("what share of all visitors came in april?", "visitors april 515 / total 1400 = 36.79%"),
    ("what percentage of the total does march make up?", "visitors march 420 / total 1400 = 30%"),
    ("if may dropped by 20%, how many would be left?", "visitors may 465 - 93 = 372"),
    ("april declined by 15 - what now?", "visitors april 515 - 15 = 500"),
])
def test_a_named_row_over_a_span_as_a_share_or_lowered(question: str, start: str) -> None:
    from reactloop.models._shaping import render_result

    assert render_result(_CSV, question).startswith(start), render_result(_CSV, question)


def test_a_row_shared_out_over_a_span_is_not_repeated() -> None:
    from reactloop.models._scaled_rows import row_repeated

    assert row_repeated(_CSV, "if april's visitors were spread evenly over 4 weeks?") == ""
    assert row_repeated(_CSV, "how many visitors in april?") == ""


# -- arithmetic said in words, a tip said before its percentage, one number written twice ------
def test_arithmetic_said_wholly_in_words_goes_whole_to_the_expression_tool() -> None:
    from tests.test_levers_workspace_expr import _first

    from reactloop.models.local import Guidance, plan_reply

    plan = plan_reply(_first("how much is six times nine minus four"), Guidance())
    assert [t.name for t in plan.callable] == ["calculate"], plan.callable
    assert plan.candidates is not None
    assert plan.candidates["calculate"].strings[0] == "6 * 9 - 4"


def test_a_tip_or_tax_said_before_its_percentage() -> None:
    from reactloop._amounts import said_arithmetic

    assert said_arithmetic("lunch came to 62.50 and we'd tip 12 percent, how much is the tip?"
                           ) == ["62.50 * 12 / 100"]
    assert said_arithmetic("the bike is 740 plus tax of 9%") == ["740 * 109 / 100"]


def test_a_two_number_call_that_wrote_one_number_twice_takes_both_in_order() -> None:
    from reactloop.messages import ToolSpec
    from reactloop.models._filters import said_filters

    spec = ToolSpec("times", "Multiply two numbers.", {"type": "object", "properties": {
        "x": {"type": "number"}, "y": {"type": "number"}}, "required": ["x", "y"]})
    minus = ToolSpec("minus", "Subtract y from x.", {"type": "object", "properties": {
        "x": {"type": "number"}, "y": {"type": "number"}}, "required": ["x", "y"]})

    def called(name: str, question: str, x: float, y: float) -> dict[str, object]:
        call = ToolCall(name, {"x": x, "y": y})
        return dict(said_filters(call, [spec, minus], question).arguments)

    assert called("times", "kindly work out 512 multiplied by 37", 37, 37) == {"x": 512, "y": 37}
    assert called("minus", "take 88 from 1040", 88, 88) == {"x": 1040, "y": 88}
    assert called("times", "what is 7 times 7", 7, 7) == {"x": 7, "y": 7}
    assert called("times", "kindly work out 512 multiplied by 37", 512, 37) == {"x": 512, "y": 37}


# -- second round: powers and rates said in words, a base said with "than", a weakest row ------
def test_a_power_said_with_its_number_in_words_goes_whole_to_the_expression_tool() -> None:
    from tests.test_levers_workspace_expr import _first

    from reactloop.models.local import Guidance, plan_reply

    plan = plan_reply(_first("what's fifteen squared minus eight"), Guidance())
    assert [t.name for t in plan.callable] == ["calculate"], plan.callable
    assert plan.candidates is not None
    assert plan.candidates["calculate"].strings[0] == "15**2 - 8"


@pytest.mark.parametrize(("question", "expression"), [
    ("if we put aside 275 a month for 9 months, what do we end up with?", "275 * 9"),
    ("our storage plan is 45 a month. what does it cost for a whole year?", "45 * 12"),
    ("the sitter charges 60 per day; how much for 5 days?", "60 * 5"),
    ("how many hours are there in 3 weeks?", "3 * 168"),
    ("a lamp is 64 and the tax is 5%, how much is the tax?", "64 * 5 / 100"),
    ("what percentage of 640 is 96?", "96 / 640 * 100"),
    ("27 is what percent of 90", "27 / 90 * 100"),
    ("I scored 42 out of 56, as a percentage?", "42 / 56 * 100"),
])
def test_an_amount_per_unit_of_time_over_a_span_a_span_in_smaller_units_and_a_ratio(
        question: str, expression: str) -> None:
    from reactloop._amounts import said_arithmetic

    assert said_arithmetic(question) == [expression], question


def test_a_rate_with_no_span_is_no_arithmetic() -> None:
    from reactloop._amounts import said_arithmetic

    assert said_arithmetic("I walk 6 km a day") == []
    assert said_arithmetic("the gym costs 35 a month") == []


@pytest.mark.parametrize(("question", "start"), [
    ("how much higher was april than march, in percent?", "visitors from march 420 to april 515: +22.6%"),
    ("which month was the weakest?", "visitors lowest march 420"),
    ("what is may annualised?", "visitors may 465 * 12 = 5580"),
])
def test_a_base_said_after_than_a_weakest_row_and_a_row_annualised(question: str, start: str) -> None:
    from reactloop.models._shaping import render_result

    assert render_result(_CSV, question).startswith(start), render_result(_CSV, question)


def test_which_field_differs_names_the_one_record_of_a_comparison_that_does() -> None:
    from reactloop.models._shaping import headline

    result = json.dumps({"headline": "Total spend: north 9,000, south 8,600, difference 400.",
                         "top_differences": [
                             {"key": {"branch": "3302", "month": "202406", "line": "710200"},
                              "absolute_diff": 400, "percentage_diff": 4.4}]})
    assert headline(result, "which line is off between north and south for branch 3302?") == (
        "line 710200 absolute_diff 400")
    assert headline(result, "in which month do north and south differ most?") == (
        "month 202406 absolute_diff 400")
    # no "which": the tool's own headline (or the figure the codes ask)
    assert headline(result, "do north and south agree?").startswith("Total spend")


def test_a_field_said_after_the_extreme_and_a_total_said_overall() -> None:
    from reactloop.models._shaping import render_result

    out = render_result(json.dumps(_ROWS), "the biggest line for branch 3301 in 202406?")
    assert out.startswith("line 710100 highest amount 1250"), out
    assert render_result(_CSV, "how many visitors overall?").startswith(
        "visitors total 1400 (3 rows)")
    assert render_result(_CSV, "visitors so far this year?").startswith("visitors total 1400")
