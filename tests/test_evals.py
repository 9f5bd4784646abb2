"""reactloop.evals from Python: cases, matchers, scoring, runs, cassettes, judge, reports."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from reactloop import Agent, ModelRequest, ModelResponse, ToolCall, Usage, tool
from reactloop.evals import (
    CallRecord,
    Case,
    Cassette,
    EvalConfigError,
    Judge,
    Report,
    Transcript,
    evaluate,
    evaluate_sync,
    load_suite,
    parse_case,
    parse_matcher,
    parse_suite,
    run_case_sync,
    score,
)
from reactloop.testing import FunctionModel


@tool
def add(a: float, b: float) -> float:
    """Add two numbers.

    Args:
        a: the first number
        b: the second number
    """
    return a + b


@tool
def subtract(a: float, b: float) -> float:
    """Subtract b from a.

    Args:
        a: the number to subtract from
        b: the number to subtract
    """
    return a - b


def arith(request: ModelRequest) -> ModelResponse:
    """add for 'plus', a sloppy subtract for 'minus', the result as the answer."""
    last = request.messages[-1]
    if last.role == "tool":
        return ModelResponse(f"The answer is {float(last.content):g}.", usage=Usage(10, 5))
    nums = [int(n) for n in re.findall(r"\d+", last.content)]
    if "plus" in last.content:
        return ModelResponse(tool_calls=[ToolCall("add", {"a": nums[0], "b": nums[1]})],
                             usage=Usage(20, 8))
    if "minus" in last.content:
        return ModelResponse(tool_calls=[ToolCall("subtract", {"a": nums[0] // 10,
                                                               "b": nums[1]})])
    return ModelResponse("I cannot answer that.")


def arith_agent(fn: Any = arith) -> Agent:
    return Agent(model=FunctionModel(fn), tools=[add, subtract])


SUITE = {
    "cases": [
        {"name": "plus", "input": "What is 17 plus 25?",
         "tool_calls": [{"name": "add", "args": {"a": 17, "b": 25}}],
         "output": {"contains": "42"}, "state": "completed"},
        {"name": "minus", "input": "What is 1234 minus 234?",
         "tool_calls": [{"name": "subtract", "args": {"a": 1234, "b": 234}}],
         "output": {"contains": "1000"}},
        {"name": "unknown", "input": "What is Ada's email?", "max_tool_calls": 0,
         "output": {"regex": "(?i)cannot"}},
    ]
}


def _t(*calls: tuple[str, dict[str, Any]], output: str = "", state: str = "completed",
       iterations: int = 1) -> Transcript:
    return Transcript(("q",), [CallRecord(n, a) for n, a in calls], output, state, iterations)


# -- cases -----------------------------------------------------------------------------------
def test_load_suite_reads_yaml_with_defaults_and_turns(tmp_path: Path) -> None:
    f = tmp_path / "cases.yaml"
    f.write_text("""
agent: {tools: [tools.py:TOOLS], max_iterations: 4}
judge: {model: "openai:gpt-4o-mini"}
defaults: {max_tool_calls: 3}
cases:
  - name: one
    input: [first turn, second turn]
    tool_calls: [add]
    order: any_order
  - name: two
    input: hello
    max_tool_calls: 0
""")
    suite = load_suite(f)
    assert suite.name == "cases" and suite.base_dir == tmp_path.resolve()
    assert suite.agent == {"tools": ["tools.py:TOOLS"], "max_iterations": 4}
    assert suite.judge_model == "openai:gpt-4o-mini"
    one, two = suite.cases
    assert one.input == ("first turn", "second turn") and one.order == "any_order"
    assert one.tool_calls[0].name == "add" and one.max_tool_calls == 3
    assert two.max_tool_calls == 0  # a case's own value wins over the defaults


@pytest.mark.parametrize(("case", "message"), [
    ({"input": "x"}, "needs a 'name'"),
    ({"name": "a", "input": "x", "ouput": {}}, "'ouput' (did you mean 'output'?)"),
    ({"name": "a", "input": "x", "order": "sorted"}, "order must be one of exact, in_order"),
    ({"name": "a", "input": ""}, "'input' must be the user's message"),
    ({"name": "a", "input": "x", "state": "done"}, "state must be one of completed"),
    ({"name": "a", "input": "x", "max_tool_calls": -1}, "at least 0"),
    ({"name": "a", "input": "x", "output": {"regex": "("}}, "output.regex '(' is invalid"),
    ({"name": "a", "input": "x", "tool_calls": [{"args": {}}]}, "needs the tool's 'name'"),
    ({"name": "a", "input": "x", "tool_calls": [{"name": "f", "args": {"x": {"regex": "a",
                                                                               "approx": 1}}}]},
     "args.x: give exactly one of"),
    ({"name": "a", "input": "x", "tool_calls": [{"name": "f", "args": {"x": {"approx": "1"}}}]},
     "approx must be a number"),
])
def test_invalid_cases_say_where_and_how_to_fix(case: dict[str, Any], message: str) -> None:
    with pytest.raises(EvalConfigError) as err:
        parse_suite({"cases": [case]}, source="f.yaml")
    assert message in str(err.value)
    assert str(err.value).startswith("f.yaml: cases[0]")


def test_duplicate_names_and_unreadable_files_are_errors(tmp_path: Path) -> None:
    with pytest.raises(EvalConfigError, match="two cases are named 'a'"):
        parse_suite([{"name": "a", "input": "x"}, {"name": "a", "input": "y"}])
    with pytest.raises(EvalConfigError, match="cannot read cases file"):
        load_suite(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("cases: [\n")
    with pytest.raises(EvalConfigError, match="is not valid YAML"):
        load_suite(bad)


# -- matchers --------------------------------------------------------------------------------
@pytest.mark.parametrize(("spec", "good", "bad", "why"), [
    (17, 17.0, 17.5, "got 17.5, want 17"),
    ({"equals": "Paris"}, "Paris", "paris", "got 'paris', want 'Paris'"),
    ({"regex": "^[A-Z]{3}$"}, "CDG", "cdg", "got 'cdg', want /^[A-Z]{3}$/"),
    ({"approx": 6.21, "tol": 0.01}, 6.2137, 6.3, "got 6.3, want ~6.21±0.01"),
    ({"approx": 100, "rel": 0.05}, "104", 106, "want ~100±5%"),
    ({"text": "New York"}, "  new york. ", "York", "(any case)"),
    ({"contains": "york"}, "New York City", "Boston", "text containing 'york'"),
    ({"one_of": ["km", "kilometres"]}, "km", "miles", "one of 'km', 'kilometres'"),
])
def test_matchers_accept_and_explain(spec: Any, good: Any, bad: Any, why: str) -> None:
    m = parse_matcher(spec)
    assert m.check(good) is None
    reason = m.check(bad)
    assert reason is not None and why in reason


def test_equals_does_not_confuse_booleans_with_numbers() -> None:
    assert parse_matcher(1).check(True) is not None
    assert parse_matcher({"ignore": True}).check(object()) is None


# -- scoring ---------------------------------------------------------------------------------
def _case(**kw: Any) -> Case:
    return parse_case({"name": "c", "input": "q", **kw})


def test_in_order_allows_calls_between_but_not_reordering() -> None:
    case = _case(tool_calls=["a", "b"])
    ok = score(case, _t(("a", {}), ("x", {}), ("b", {})))[0]
    assert ok.passed and ok.reason == "2/2 expected calls made (in_order)"
    wrong = score(case, _t(("b", {}), ("a", {})))[0]
    assert not wrong.passed and wrong.score == 0.5
    assert "b() was called, but not in the expected order" in wrong.reason


def test_any_order_finds_a_matching_even_where_greedy_would_not() -> None:
    # the first call fits both expectations; only assigning it to the second one works
    case = _case(order="any_order", tool_calls=[
        {"name": "f", "args": {"x": {"ignore": True}}}, {"name": "f", "args": {"x": 1}}])
    crit = score(case, _t(("f", {"x": 1}), ("f", {"x": 2})))[0]
    assert crit.passed, crit.reason


def test_exact_order_reports_the_first_difference_and_extra_calls() -> None:
    case = _case(order="exact", tool_calls=[{"name": "add", "args": {"a": 1}}])
    same = score(case, _t(("add", {"a": 1})))[0]
    assert same.passed and same.score == 1.0  # an exact match scores 1, not 0
    extra = score(case, _t(("add", {"a": 1}), ("add", {"a": 2})))[0]
    assert not extra.passed and "1 extra call(s): add(a=2)" in extra.reason
    assert extra.score == 0.5
    wrong = score(case, _t(("add", {"a": 3})))[0]
    assert "call 1: expected add(a=1), got add(a=3): a: got 3, want 1" in wrong.reason


def test_a_near_miss_names_the_closest_call_and_the_argument() -> None:
    case = _case(tool_calls=[{"name": "subtract", "args": {"a": 1234, "b": 234}}])
    crit = score(case, _t(("add", {"a": 1, "b": 2}), ("subtract", {"a": 123, "b": 234})))[0]
    assert crit.reason == ("0/1 expected calls made: expected subtract(a=1234, b=234); closest "
                           "call subtract(a=123, b=234): a: got 123, want 1234")
    none = score(case, _t())[0]
    assert "subtract was not called (no tool was called)" in none.reason


def test_strict_calls_reject_unlisted_arguments() -> None:
    case = _case(tool_calls=[{"name": "f", "args": {"x": 1}, "strict": True}])
    assert "y: not expected" in score(case, _t(("f", {"x": 1, "y": 2})))[0].reason
    assert score(_case(tool_calls=[{"name": "f", "args": {"x": 1}}]),
                 _t(("f", {"x": 1, "y": 2})))[0].passed


def test_output_state_and_limits() -> None:
    case = _case(output={"contains": ["1,000", "km"], "not_contains": "error",
                         "regex": r"\d+", "equals": "About 1000 km."},
                 state="completed", max_tool_calls=1, max_iterations=2)
    good = {c.name: c for c in score(case, _t(("f", {}), output="about 1000 KM",
                                              iterations=2))}
    assert all(c.passed for c in good.values()), good
    assert set(good) == {"output.contains", "output.not_contains", "output.regex",
                         "output.equals", "state", "max_tool_calls", "max_iterations"}
    bad = {c.name: c for c in score(case, _t(("f", {}), ("f", {}), output="an error",
                                             state="max_iterations", iterations=3))}
    assert not any(c.passed for c in bad.values())
    assert bad["output.contains"].reason == "'1,000', 'km' not in the answer 'an error'"
    assert bad["state"].reason == "ended max_iterations, want completed"
    assert bad["max_tool_calls"].reason == "2 tool calls (at most 1)"


def test_numbers_in_the_answer_match_whole_numbers_only() -> None:
    case = _case(output={"contains": "42"})
    for answer, ok in (("It is 42.", True), ("42.0", True), ("-42", True), ("420", False),
                       ("4.2", False), ("1,042", False)):
        assert score(case, _t(output=answer))[0].passed is ok, answer


def test_a_failed_run_fails_the_case_with_its_error() -> None:
    crit = score(_case(), Transcript(("q",), state="error", error="ModelError: boom"))
    assert [(c.name, c.passed) for c in crit] == [("run", False)]
    assert "ModelError: boom" in crit[0].reason


# -- running ---------------------------------------------------------------------------------
def test_evaluate_scores_from_the_agents_events() -> None:
    agent = arith_agent()
    report = evaluate_sync(agent, parse_suite(SUITE))
    by = {c.name: c for c in report.cases}
    assert by["plus"].status == "PASS" and by["unknown"].status == "PASS"
    minus = by["minus"].runs[0]
    assert not minus.passed
    assert [c.name for c in minus.failures] == ["tool_calls", "output.contains"]
    assert minus.transcript.calls[0].result == "-111.0"  # the tool really ran
    assert report.pass_rate == pytest.approx(2 / 3)
    plus = by["plus"].runs[0].transcript
    assert (plus.input_tokens, plus.output_tokens, plus.iterations) == (30, 13, 2)
    assert report.model == "function"
    assert agent.model.name == "function"  # the caller's agent is left as it was


def test_multi_turn_cases_keep_the_conversation() -> None:
    seen: list[int] = []

    def fn(request: ModelRequest) -> str | ToolCall:
        seen.append(len(request.messages))
        if request.messages[-1].role == "tool":
            return "done"
        return ToolCall("add", {"a": 1, "b": 2}) if "add" in request.messages[-1].content \
            else "hi"

    case = parse_case({"name": "turns", "input": ["hello", "now add"], "tool_calls": ["add"],
                       "output": "done"})
    run = run_case_sync(Agent(model=FunctionModel(fn), tools=[add]), case)
    assert run.passed, run.explain()
    assert seen == [1, 3, 5]  # the second turn saw the first
    assert [c.turn for c in run.transcript.calls] == [1]


def test_repeats_give_the_spread_of_the_pass_rate() -> None:
    calls = {"n": 0}

    def flaky(request: ModelRequest) -> str:
        calls["n"] += 1
        return "yes" if calls["n"] % 3 else "no"  # every third answer is wrong

    suite = parse_suite([{"name": f"c{i}", "input": "?", "output": "yes"} for i in range(3)])
    report = evaluate_sync(Agent(model=FunctionModel(flaky)), suite, repeat=3)
    assert report.repeat_rates() == pytest.approx([2 / 3, 2 / 3, 2 / 3])
    assert [c.status for c in report.cases] == ["PASS", "PASS", "FAIL"]
    assert "per repeat 66.7–66.7 %, sd 0.0 points" in report.to_text()


def test_concurrency_runs_cases_at_the_same_time() -> None:
    barrier = asyncio.Barrier(3)

    async def together(request: ModelRequest) -> str:
        async with asyncio.timeout(10):  # only passes if three runs wait here at once
            await barrier.wait()
        return "ok"

    suite = parse_suite([{"name": f"c{i}", "input": "?", "output": "ok"} for i in range(3)])
    report = evaluate_sync(Agent(model=FunctionModel(together)), suite, concurrency=3)
    assert report.pass_rate == 1.0, report.to_text()


def test_progress_is_reported_after_each_run() -> None:
    seen: list[tuple[int, int, str]] = []
    evaluate_sync(arith_agent(), parse_suite(SUITE),
                  on_progress=lambda p: seen.append((p.done, p.total, p.run.case)))
    assert seen == [(1, 3, "plus"), (2, 3, "minus"), (3, 3, "unknown")]


def test_assert_pass_rate_explains_failures_for_pytest() -> None:
    report = evaluate_sync(arith_agent(), parse_suite(SUITE))
    report.assert_pass_rate(0.6)
    with pytest.raises(AssertionError) as err:
        report.assert_pass_rate(0.9)
    assert "pass rate 66.7 % is below 90.0 %" in str(err.value)
    assert "minus (run 1) failed:\n  tool_calls:" in str(err.value)


# -- cassettes -------------------------------------------------------------------------------
def _broken(request: ModelRequest) -> str:
    raise AssertionError("the model must not be called on replay")


def test_replay_rescores_without_calling_the_model(tmp_path: Path) -> None:
    cassette = Cassette()
    first = evaluate_sync(arith_agent(), parse_suite(SUITE), record=cassette, repeat=2)
    cassette.save(tmp_path / "c.json")
    assert sorted(cassette.runs) == ["minus#0", "minus#1", "plus#0", "plus#1", "unknown#0",
                                     "unknown#1"]
    replayed = evaluate_sync(arith_agent(_broken), parse_suite(SUITE),
                             replay=Cassette.load(tmp_path / "c.json"), repeat=2)
    assert [r.passed for r in replayed.runs] == [r.passed for r in first.runs]
    assert replayed.totals()["input_tokens"] == first.totals()["input_tokens"]
    # a changed evaluator applies to the old runs
    lenient = json.loads(json.dumps(SUITE))
    lenient["cases"][1]["tool_calls"][0]["args"]["a"] = {"ignore": True}
    lenient["cases"][1]["output"] = {"contains": "-111"}
    rescored = evaluate_sync(arith_agent(_broken), parse_suite(lenient),
                             replay=Cassette.load(tmp_path / "c.json"))
    assert rescored.pass_rate == 1.0, rescored.to_text()


def test_replay_notices_a_changed_agent() -> None:
    cassette = Cassette()
    evaluate_sync(arith_agent(), parse_suite(SUITE), record=cassette)

    @tool(name="add")
    def other_add(a: float, b: float) -> float:
        """Add two numbers, differently described."""
        return a + b

    changed = Agent(model=FunctionModel(_broken), tools=[other_add, subtract])
    report = evaluate_sync(changed, parse_suite(SUITE), replay=cassette)
    plus = report.cases[0].runs[0]
    assert plus.failures[0].name == "run"
    assert "the cassette has no response to this request in run plus#0" in plus.failures[0].reason
    assert "record it again with --record" in plus.failures[0].reason
    more = evaluate_sync(arith_agent(_broken), parse_suite(SUITE), replay=cassette, repeat=2)
    assert "this run was not recorded" in more.cases[0].runs[1].failures[0].reason


def test_cassette_files_are_validated(tmp_path: Path) -> None:
    f = tmp_path / "c.json"
    f.write_text("{}")
    with pytest.raises(EvalConfigError, match="not a version-1 reactloop cassette"):
        Cassette.load(f)
    f.write_text("{")
    with pytest.raises(EvalConfigError, match="invalid JSON"):
        Cassette.load(f)


# -- the judge -------------------------------------------------------------------------------
def _judge_fn(verdicts: list[str]) -> Any:
    def fn(request: ModelRequest) -> ToolCall:
        verdicts.append(request.messages[-1].content)
        assert request.settings.tool_choice == "required"
        ok = "42" in request.messages[-1].content.split("Final answer:")[1]
        return ToolCall("verdict", {"passed": ok, "reason": "the answer gives 42" if ok
                                    else "no 42 in the answer"})
    return fn


RUBRIC = [{"name": "plus", "input": "What is 17 plus 25?", "rubric": "Is the sum given?"},
          {"name": "minus", "input": "What is 1234 minus 234?", "rubric": "Is it right?"}]


def test_the_judge_grades_rubrics_and_its_reason_is_kept() -> None:
    asked: list[str] = []
    report = evaluate_sync(arith_agent(), parse_suite(RUBRIC),
                           judge=FunctionModel(_judge_fn(asked)))
    plus, minus = (c.runs[0].criteria[-1] for c in report.cases)
    assert (plus.name, plus.passed, plus.reason) == ("rubric", True, "judge: the answer gives 42")
    assert (minus.passed, minus.reason) == (False, "judge: no 42 in the answer")
    assert "Question: Is the sum given?" in asked[0]
    assert "add(a=17, b=25) -> '42.0'" in asked[0]


def test_judge_calls_are_replayed_and_a_changed_rubric_is_judged_again() -> None:
    cassette, asked = Cassette(), []
    evaluate_sync(arith_agent(), parse_suite(RUBRIC), judge=FunctionModel(_judge_fn(asked)),
                  record=cassette)
    assert len(asked) == 2
    evaluate_sync(arith_agent(_broken), parse_suite(RUBRIC),
                  judge=FunctionModel(_judge_fn(asked)), replay=cassette)
    assert len(asked) == 2  # nothing was asked again
    changed = [{**RUBRIC[0], "rubric": "Is 42 in the answer?"}, RUBRIC[1]]
    evaluate_sync(arith_agent(_broken), parse_suite(changed),
                  judge=FunctionModel(_judge_fn(asked)), replay=cassette)
    assert len(asked) == 3 and "Question: Is 42 in the answer?" in asked[-1]


def test_a_rubric_needs_a_judge_and_a_judge_without_verdict_fails() -> None:
    with pytest.raises(EvalConfigError, match=r"cases with a rubric \(plus, minus\) need a judge"):
        evaluate_sync(arith_agent(), parse_suite(RUBRIC))
    report = evaluate_sync(arith_agent(), parse_suite(RUBRIC[:1]),
                           judge=Judge(FunctionModel(lambda r: "Maybe, hard to say.")))
    crit = report.cases[0].runs[0].criteria[-1]
    assert not crit.passed and crit.reason.startswith("the judge gave no verdict")
    text = evaluate_sync(arith_agent(), parse_suite(RUBRIC[:1]),
                         judge=FunctionModel(lambda r: "Yes. The sum is there."))
    assert text.pass_rate == 1.0


# -- reports ---------------------------------------------------------------------------------
def test_report_json_round_trip_and_baseline_comparison(tmp_path: Path) -> None:
    report = evaluate_sync(arith_agent(), parse_suite(SUITE))
    report.save(tmp_path / "r.json")
    loaded = Report.load(tmp_path / "r.json")
    assert [(c.name, c.pass_rate) for c in loaded.cases] == \
           [(c.name, c.pass_rate) for c in report.cases]
    assert loaded.runs[1].failures[0].reason == report.runs[1].failures[0].reason
    # now the agent is fixed for 'minus' but broken for 'plus', and a case was renamed
    def better(request: ModelRequest) -> ModelResponse:
        if request.messages[-1].role == "user" and "plus" in request.messages[-1].content:
            return ModelResponse("no idea")
        if request.messages[-1].role == "user" and "minus" in request.messages[-1].content:
            return ModelResponse(tool_calls=[ToolCall("subtract", {"a": 1234, "b": 234})])
        return arith(request)

    cases = json.loads(json.dumps(SUITE))
    cases["cases"][2]["name"] = "unknown-2"
    now = evaluate_sync(arith_agent(better), parse_suite(cases))
    cmp = now.compare(loaded, "r.json")
    assert cmp.fixed == (("minus", 0.0, 1.0),)
    assert cmp.regressed == (("plus", 1.0, 0.0),)
    assert (cmp.new, cmp.removed) == (("unknown-2",), ("unknown",))
    text = now.to_text()
    assert "vs baseline r.json (66.7 %): +0.0 points; 1 fixed, 1 regressed, 1 new, 1 removed" \
        in text
    assert "regressed  plus (100.0 % → 0.0 %)" in text
    md = now.to_markdown()
    assert "| minus | PASS | 1/1 |" in md and "| plus | FAIL | 0/1 |" in md
    assert now.to_dict()["comparison"]["fixed"] == [{"case": "minus", "before": 0.0,
                                                     "after": 1.0}]


def test_the_markdown_report_gives_seconds_per_case_and_the_slowest_case() -> None:
    from reactloop.evals import CaseReport, CaseRun

    def run(case: str, repeat: int, seconds: float) -> CaseRun:
        return CaseRun(case, repeat, [], Transcript(("q",), [], "ok", "completed", 1,
                                                    seconds=seconds))

    report = Report("timing", "m", 2, [CaseReport("quick", [run("quick", 0, 1.0),
                                                            run("quick", 1, 3.0)]),
                                       CaseReport("slow", [run("slow", 0, 9.5),
                                                           run("slow", 1, 4.5)])], 18.0)
    md = report.to_markdown()
    header = next(line for line in md.splitlines() if line.startswith("| case "))
    assert [c.strip() for c in header.strip("|").split("|")][6] == "seconds"
    assert "| quick | PASS | 2/2 | 1.0 | 0.0 | 0 | 2.0 |" in md  # the mean of its runs
    assert "| slow | PASS | 2/2 | 1.0 | 0.0 | 0 | 7.0 |" in md
    assert "- slowest case slow: 9.5 s (run 1)" in md  # its longest run
    assert "slowest case slow: 9.5 s (run 1)" in report.to_text()
    one = Report("one", "m", 1, [CaseReport("only", [run("only", 0, 2.4)])], 2.4)
    assert "- slowest case only: 2.4 s\n" in one.to_markdown()
    assert "slowest" not in Report("none", "m", 1, [], 0.0).to_markdown()


def test_reports_load_only_reports(tmp_path: Path) -> None:
    f = tmp_path / "x.json"
    f.write_text('{"cases": []}')
    with pytest.raises(EvalConfigError, match="not a reactloop eval report"):
        Report.load(f)


def test_evaluate_is_usable_inside_async_code(arun: Any) -> None:
    report = arun(evaluate(arith_agent(), parse_suite(SUITE).cases))
    assert report.name == "eval" and len(report.runs) == 3
