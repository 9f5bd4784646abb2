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
