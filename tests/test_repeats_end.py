"""Repeats end (issue 23): a call identical to one that failed is not run again, and after
the second identical failure the next reply must answer, with the failure on record."""

from __future__ import annotations

from reactloop import Agent, RunState, tool
from reactloop.errors import ToolRetry
from reactloop.messages import ModelResponse, ToolCall
from reactloop.testing import ScriptedModel

RUNS: list[str] = []


@tool(repeatable=True)  # even a tool whose identical calls normally run again
def clock(zone: str) -> str:
    """The time in a zone.

    Args:
        zone: an IANA zone name
    """
    RUNS.append(zone)
    raise ToolRetry(f"unknown timezone {zone!r}; use an IANA name like 'Europe/Paris'")


def _call(zone: str = "Paris") -> ModelResponse:
    return ModelResponse(tool_calls=[ToolCall("clock", {"zone": zone})])


def test_an_identical_failed_call_is_not_run_again_and_the_next_reply_must_answer() -> None:
    RUNS.clear()
    model = ScriptedModel([_call(), _call(), ModelResponse("The clock tool failed."),
                           _call()])  # the last one is never asked for
    result = Agent(model, tools=[clock]).run_sync("What time is it in Paris?")
    assert RUNS == ["Paris"]  # run once, not twice
    first, second = (s.results[0] for s in result.steps if s.results)
    assert first.error and second.error == first.error and second.cached
    assert "failed; it was not run again" in second.content
    # the third request offers no tool and says why: the reply must answer
    third = model.requests[2]
    assert [t.name for t in third.tools] == []
    assert any("clock failed twice" in n for n in third.notes)
    assert result.state is RunState.COMPLETED and result.output == "The clock tool failed."
    # the ending rests on a failed tool step (the CLI reports "tool_errors", not "completed")
    assert [r.error is not None for r in result.steps[-2].results] == [True]
    assert result.metrics.iterations == 3


def test_a_changed_call_after_a_failure_still_runs() -> None:
    RUNS.clear()
    model = ScriptedModel([_call("Paris"), _call("Europe/Paris"), ModelResponse("ok")])
    Agent(model, tools=[clock]).run_sync("What time is it in Paris?")
    assert RUNS == ["Paris", "Europe/Paris"]
    assert [t.name for t in model.requests[2].tools] == ["clock"]
