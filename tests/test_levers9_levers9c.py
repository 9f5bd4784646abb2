"""Levers of the eleventh sitting (levers9c, issue 23): arithmetic said in words (a
percentage that raises or lowers an amount, a multiple or fraction of one, an average of
numbers listed, numbers said in words), ... Each checked without the model, in phrasings of
its own (none from an eval set)."""

from __future__ import annotations

import pytest
from tests.test_levers_workspace_expr import _first

from reactloop.models.local import Guidance, plan_reply


# -- arithmetic said in words goes whole to the expression tool ------------------------------
@pytest.mark.parametrize(("question", "expression"), [
    ("bump 380 up by 6 percent", "380 * 106 / 100"),
    ("our team grew 30% last year", None),  # a percentage of no amount said
    ("raise 380 by 6 percent", "380 * 106 / 100"),
    ("what's 940 minus 30%?", "940 * 70 / 100"),
    ("a 25% discount on 72 euros, what do I pay then", "72 * 75 / 100"),
    ("what's 410 plus 5 percent", "410 * 105 / 100"),
    ("rent is 1,150 and it goes up by 3%, what's the new rent?", "1150 * 103 / 100"),
    ("dinner was 58 dollars and I'd add a 15% tip, total?", "58 * 115 / 100"),
    ("40% off 95, how much is it", "95 * 60 / 100"),
    ("what is four times as much as 213", "213 * 4"),
    ("two thirds of 351?", "351 * 2 / 3"),
    ("what's the mean of 7, 19, 22 and 40", "(7 + 19 + 22 + 40) / 4"),
])
def test_a_percentage_multiple_or_average_said_in_words_is_one_expression(
        question: str, expression: str | None) -> None:
    from reactloop._amounts import said_arithmetic

    assert said_arithmetic(question) == ([expression] if expression else []), question
    if expression is None:
        return
    plan = plan_reply(_first(question), Guidance())
    # never a two-number tool with the percentage as its second number ("940 - 30")
    names = [t.name for t in plan.callable]
    single = sum(expression.count(op) for op in "+-*/") == 1  # "213 * 4": multiply may do it
    assert names[0] == "calculate" and set(names) <= {"calculate", "multiply"} and (
        single or names == ["calculate"]) and not plan.answer, question
    assert plan.candidates is not None
    assert plan.candidates["calculate"].strings[0] == expression


def test_a_number_said_in_words_is_its_digits() -> None:
    from reactloop._amounts import words_to_digits
    from reactloop.models._operators import spoken_arithmetic

    assert words_to_digits("eight hundred and forty-one divided by nine") == "841 divided by 9"
    assert words_to_digits("which one is bigger, one or two?") == "which one is bigger, one or 2?"
    assert spoken_arithmetic("sixty six times twelve") == ["66 * 12"]
    assert spoken_arithmetic("three thousand two hundred minus forty") == ["3200 - 40"]


def test_a_two_number_tool_takes_the_numbers_said_in_words() -> None:
    plan = plan_reply(_first("eight hundred and forty one divided by nine"), Guidance())
    assert plan.candidates is not None
    assert set(plan.candidates["divide"].numbers) == {"841", "9"}


def test_an_answer_that_starts_with_a_figure_does_not_change_it() -> None:
    from reactloop.models._gbnf import reply_grammar

    grammar = reply_grammar([], answer=True, answer_prefix="4913")
    # the next character is no digit, point or comma: never "4913.0000001" or "4913,5"
    assert '"4913" (char-after-figure char{' in grammar
    rule = next(line for line in grammar.splitlines() if line.startswith("char-after-figure"))
    assert "0-9.,]" in rule
    plain = reply_grammar([], answer=True, answer_prefix="Gate 4 is in Terminal A.")
    assert "char-after-figure" not in plain


def test_the_figure_rule_is_valid_gbnf() -> None:
    llama_cpp = pytest.importorskip("llama_cpp")
    from reactloop.models._gbnf import reply_grammar

    llama_cpp.LlamaGrammar.from_string(reply_grammar([], answer=True, answer_prefix="72"),
                                       verbose=False)


# -- a projection from a table's rows -------------------------------------------------------
STOCK = "     1\tweek,units\n     2\tweek1,40\n     3\tweek2,55\n     4\tweek3,61\n"
VISITS = "     1\tquarter,visitors\n     2\tspring,800\n     3\tsummer,1000\n"


def test_the_next_row_repeats_the_change_the_question_names() -> None:
    from reactloop.models._shaping import render_result

    # the named row's change (week3 - week2 = 6) added to the last row
    assert render_result(STOCK, "if next week rises by the same amount week3 did, how many "
                         "units?").startswith("units next: week3 61 + (week3 61 - week2 55) = 67")
    # no row named: the last step
    assert render_result(VISITS, "Assume autumn goes up by the same amount. Visitors then?"
                         ).startswith("visitors next: summer 1000 + (summer 1000 - spring 800) = 1200")
    # a rate: the last step's ratio
    assert render_result(VISITS, "if it keeps growing at the same rate, what's autumn?"
                         ).startswith("visitors next: summer 1000 * (summer 1000 / spring 800) = 1250")


def test_a_percentage_above_a_named_row_and_a_month_said_short() -> None:
    from reactloop.models._shaping import render_result

    sales = "     1\tmonth,amount\n     2\tjanuary,900\n     3\tfebruary,1100\n"
    assert render_result(sales, "What if march lands 20% above february?").startswith(
        "amount february 1100 + 220 = 1320")
    assert render_result(sales, "what if march is 10 percent below january?").startswith(
        "amount january 900 - 90 = 810")
    assert render_result(sales, "how much did we grow from jan to feb, in percent?").startswith(
        "amount from january 900 to february 1100: +22.2% (+200)")


# -- the airport: opening hours asked as "is X open at …", the nearest X to Y -----------------
def test_opening_hours_asked_of_a_place_the_data_holds_load_its_skill() -> None:
    from tests.test_levers_lead11 import _first_request

    from reactloop.models._skill_select import skill_call

    for question in ("is the rail station still open at 11:45pm?",
                     "until what time is the noodle house open tonight",
                     "what time does the pharmacy shut?",
                     "can I still grab a burger at 10 pm?"):
        call = skill_call(_first(question))
        assert call is not None and call.arguments == {"name": "airport"}, question
    assert skill_call(_first_request("is it open yet?")) is None  # no place said


def test_a_time_of_day_is_no_id() -> None:
    from tests.test_levers_pragmatics import _after_load

    from reactloop.messages import ToolSpec
    from reactloop.models._fit import needs_found_id

    show = ToolSpec("show_poi", "Show a point on the map.", {
        "type": "object", "properties": {"poi_id": {"type": "integer"}}, "required": ["poi_id"]})
    for question in ("is the pharmacy open at 7am?", "Is the Burger Point open at 10:30pm?",
                     "is the lounge open at 6 a.m."):
        assert needs_found_id(show, question, False), question
    assert not needs_found_id(show, "show gate 7 on the map", False)
    plan = _after_load("Is the Burger Point still open at 10:30pm?", "airport")
    assert [t.name for t in plan.callable] == ["search_pois"]


def test_the_nearest_thing_to_a_place_is_no_route() -> None:
    from tests.test_levers_pragmatics import _after_load

    from reactloop.models._fit import trip_places

    names = ["Gate 12", "restroom", "Cafe Aroma"]
    assert trip_places("which restroom is closest to gate 12?", names) is None
    assert trip_places("nearest restroom to gate 12 please", names) is None
    assert trip_places("from gate 12 to the nearest restroom", names) is not None  # a trip
    plan = _after_load("closest restroom to gate 12?", "airport")
    assert "show_directions" not in [t.name for t in plan.callable]


# -- the workspace: a document named is read, "anything in my docs about …" is searched ------
@pytest.mark.parametrize(("question", "tool"), [
    ("what does todo say about the dentist?", "list_dir"),  # a document said bare: listed, read
    ("what time is standup? it's in the readme", "list_dir"),  # where the answer is said
    ("see my notes: when is the invoice due?", "list_dir"),
    ("my todo mentions a dentist. which day?", "list_dir"),  # the document is the subject
    ("anything in my files about the invoice?", "grep"),  # which file: a search
    ("which notes mention the dentist?", "grep"),
])
def test_a_document_named_is_read_and_which_file_is_searched(question: str, tool: str) -> None:
    plan = plan_reply(_first(question), Guidance())
    assert [t.name for t in plan.callable] == [tool] and not plan.answer, question


def test_how_many_files_in_the_workspace_counts_inside_folders() -> None:
    from reactloop.models._listing import _EVERYWHERE

    assert _EVERYWHERE.search("how many files are in my workspace?")
    assert not _EVERYWHERE.search("how many files are in the docs folder?")


# -- figures across a table result's records named by two codes of one field ------------------
def _ledger() -> str:
    import json

    rows = [{"store": "177", "week": "2025w1", "month": "202501", "amount": 500.0},
            {"store": "177", "week": "2025w2", "month": "202502", "amount": 650.0},
            {"store": "177", "week": "2025w3", "month": "202503", "amount": 590.0},
            {"store": "188", "week": "2025w1", "month": "202501", "amount": 300.0}]
    return json.dumps({"source": "ledger", "rows": rows})


def test_a_change_between_two_codes_of_the_records_begins_the_answer() -> None:
    from reactloop.models._shaping import render_result

    assert render_result(_ledger(), "how far did store 177 fall from 202502 to 202503?").startswith(
        "amount from 202502 650 to 202503 590: -60 (-9.2%)")
    assert render_result(_ledger(), "store 177: by what percent did it grow from 202501 to "
                         "202502?").startswith("amount from 202501 500 to 202502 650: +30% (+150)")


def test_a_projection_and_an_average_across_the_records() -> None:
    from reactloop.models._shaping import render_result

    assert render_result(_ledger(), "if store 177 changes by the same amount as from 202502 to "
                         "202503, what's next month?").startswith(
        "amount next: 202503 590 + (202503 590 - 202502 650) = 530")
    assert render_result(_ledger(), "mean amount of store 177 over 202501-202503?").startswith(
        "amount average 580 (3 records: 202501 to 202503)")


def test_numbers_in_words_run_together_or_misspelt_and_no_false_joins() -> None:
    from reactloop._amounts import words_to_digits

    assert words_to_digits("sixhundred minus fourty") == "600 minus 40"
    assert words_to_digits("ninty nine plus one") == "99 plus one"
    assert words_to_digits("one and two, two three") == "one and 2, two three"  # no one number
    assert words_to_digits("tenner at the oneself") == "tenner at the oneself"


def test_a_request_after_a_remark_about_oneself_and_hours_said_after_the_place() -> None:
    from reactloop.models._fit import small_talk
    from reactloop.models._skill_select import skill_call

    assert not small_talk("we're by the duty free now, take me to gate 11")
    assert small_talk("I'm so tired, take care")  # a closing, no order
    for question in ("burger point opening hours?", "how do I catch a train to the city?",
                     "how do I get a coffee around here"):
        call = skill_call(_first(question))
        assert call is not None and call.arguments == {"name": "airport"}, question
