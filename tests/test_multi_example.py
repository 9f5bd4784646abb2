"""examples/multi_agent.py: the triage agent hands a traveller to the booking specialist, which
runs the book-flight skill's scripts and asks the airport specialist (an agent as a tool)."""

from __future__ import annotations

import asyncio
import datetime
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

from reactloop import ModelResponse, RunState, ToolCall
from reactloop.events import Event, HandoffEvent
from reactloop.testing import ScriptedModel

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "examples" / "skills" / "book-flight" / "scripts"


def example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("multi_agent", ROOT / "examples" / "multi_agent.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["multi_agent"] = module
    spec.loader.exec_module(module)
    return module


def call(tool_name: str, **arguments: object) -> ModelResponse:
    return ModelResponse(tool_calls=[ToolCall(tool_name, arguments)])


def test_triage_hands_off_and_the_specialist_asks_the_airport_agent(capsys: object) -> None:
    day = (datetime.date.today() + datetime.timedelta(days=7)).isoformat()
    model = ScriptedModel([
        call("transfer_to_booking"),                                       # triage
        call("load_skill", name="book-flight"),                            # booking
        call("run_command", command=f"python {SCRIPTS / 'search_flights.py'} --from Beijing "
                                    f"--to Tokyo --date {day}"),
        call("airport", task="Where is gate B12?"),
        call("load_skill", name="airport"),                                # airport, nested
        call("search_pois", term="gate", building="Terminal B", limit=1),
        "Gate B12 is in Terminal B.",
        "CA925 leaves at 08:30; your gate is in Terminal B.",              # booking again
    ])
    agent = example().build(model)

    async def main() -> list[Event]:
        return [e async for e in agent.stream("A flight from Beijing to Tokyo next week?")]

    events = asyncio.run(main())
    result = events[-1].result  # type: ignore[attr-defined]
    assert result.state is RunState.COMPLETED and result.agent == "booking"
    assert [e.to_agent for e in events if isinstance(e, HandoffEvent)] == ["booking"]
    flights = json.loads(json.loads(result.steps[2].results[0].content)["stdout"])
    assert flights["count"] > 0
    nested = [e for e in events if e.agent == "airport"]
    assert {e.type for e in nested} >= {"run_start", "tool_call", "tool_result", "run_end"}
    assert [e.call.name for e in nested if e.type == "tool_call"] == [  # type: ignore[attr-defined]
        "load_skill", "search_pois"]
    assert set(result.metrics_by_agent) == {"triage", "booking", "airport"}  # each its own
    assert model.remaining == 0
    for e in events:
        example().show(e)
    err = capsys.readouterr().err  # type: ignore[attr-defined]
    assert "→ handed to booking" in err and "[airport] → search_pois" in err
