"""The demo tools accept what people type (issue 23): a city for ``current_time``, ``^`` and
``×`` for ``calculate``."""

from __future__ import annotations

import re

import pytest

from reactloop import Agent
from reactloop._demo_tools import DEMO_TOOLS, _zone, calculate, current_time
from reactloop.errors import ToolRetry
from reactloop.messages import ModelResponse, ToolCall
from reactloop.testing import ScriptedModel


@pytest.mark.parametrize(("typed", "zone"), [
    ("Europe/Paris", "Europe/Paris"), ("Paris", "Europe/Paris"), ("new york", "America/New_York"),
    ("Tokyo", "Asia/Tokyo"), ("New York, USA", "America/New_York"), ("UTC", "UTC"),
])
def test_current_time_takes_a_city_or_an_iana_name(typed: str, zone: str) -> None:
    assert str(_zone(typed)) == zone


def test_an_unknown_place_is_a_retry_naming_the_fix() -> None:
    assert _zone("Atlantis") is None
    with pytest.raises(ToolRetry, match="use an IANA name like 'Europe/Paris'"):
        current_time.fn("Atlantis")


@pytest.mark.parametrize(("expression", "value"), [
    ("2**10", 1024), ("3^4", 81), ("2 ^ 3 ^ 2", 512), ("6 × 7", 42), ("(17 + 25) * 2", 84),
])
def test_calculate_takes_the_usual_power_and_product_signs(expression: str, value: int) -> None:
    assert calculate.fn(expression) == value


def test_a_city_reaches_the_clock_through_a_run() -> None:
    model = ScriptedModel([
        ModelResponse(tool_calls=[ToolCall("current_time", {"timezone": "Tokyo"})]),
        ModelResponse("done"),
    ])
    result = Agent(model, tools=DEMO_TOOLS).run_sync("What time is it in Tokyo?")
    [step] = [s for s in result.steps if s.results]
    assert step.results[0].error is None
    assert re.search(r"\d\d:\d\d:\d\d JST$", step.results[0].content)
