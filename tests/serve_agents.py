"""The agent served by the ``reactloop serve`` tests: ``reactloop serve --agent serve_agents:agent``.

Its model is a :class:`FunctionModel` that decides from the request alone (no state shared
between sessions), by the words of the turn's user message:

- ``where is gate B12?`` / ``… coffee …``: the airport skill (seed 001): load it, search, then
  ``show_poi`` (a marker) or ``show_directions`` (a route), then answer;
- ``plan``: makes a two-step plan with ``update_plan``, completes a step, answers;
- ``burst N``: N tool calls in one response, then a long streamed answer (a 500-event run);
- ``wait NAME …``: holds the run until another session's message ``release NAME`` (to keep
  sessions busy on purpose), then goes on like the default below;
- ``secret``: a tool returns the value of ``SERVE_TEST_API_KEY`` and the model repeats it;
- ``fail``: the model raises, so the run ends ``error``;
- ``broken``: calls ``count`` with an invalid argument (a tool error), then answers;
- ``crash``: calls ``crash``, which raises (a tool error with a traceback), then answers;
- ``transfer N to NAME``: calls ``echo`` and ``transfer`` (which needs approval) in one
  response; once the transfer has a result (approved, edited or denied), answers with it;
- anything else: calls ``echo`` with the text, then answers with JSON describing what it saw
  (the turn's echo, every user message in the history, the tools offered).
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

from reactloop import Agent, ToolCall, tool
from reactloop.errors import ModelError
from reactloop.messages import Message, ModelRequest
from reactloop.testing import FunctionModel

SKILLS = Path(os.environ.get("SERVE_TEST_SKILLS")  # the UI test copies them to a neutral folder
              or Path(__file__).resolve().parents[1] / "examples" / "skills")
WAIT_LIMIT = 120.0  # a held session gives up after this many seconds


@tool
def echo(text: str) -> str:
    """Return the text unchanged.

    Args:
        text: anything.
    """
    return text


@tool
def read_secret() -> str:
    """Read the service's API key (a test of redaction: the value must never leave)."""
    key = os.environ.get("SERVE_TEST_API_KEY", "")
    return f'{key} (sent as Authorization: "Bearer {key}")'  # quotes: JSON escapes around it


@tool
def count(n: int) -> int:
    """Return n.

    Args:
        n: a number.
    """
    return n


@tool
def crash() -> str:
    """Fail with an exception (its traceback names this file)."""
    raise RuntimeError("the crash tool failed on purpose")


@tool(requires_approval=True)
def transfer(amount: int, to: str) -> str:
    """Send money (a person approves each call).

    Args:
        amount: how much.
        to: who gets it.
    """
    return f"sent {amount} to {to}"


def _turn(request: ModelRequest) -> tuple[str, list[Message]]:
    """The user text of the current turn and the messages after it."""
    for i in range(len(request.messages) - 1, -1, -1):
        m = request.messages[i]
        if m.role == "user" and not m.metadata.get("kind"):
            return m.content, list(request.messages[i + 1:])
    return "", []


def _last_tool(after: list[Message]) -> Message | None:
    tools = [m for m in after if m.role == "tool"]
    return tools[-1] if tools else None


def _airport(text: str, after: list[Message]) -> Any:
    last = _last_tool(after)
    done = last.name if last is not None else None
    if done is None:
        return ToolCall("load_skill", {"name": "airport"})
    if "coffee" in text.lower():
        if done == "load_skill":
            return ToolCall("show_directions", {"start": 111, "destination": 126})
        route = json.loads(last.content) if last is not None else {}
        return (f"From Gate 12 to the Plaza Coffee Bar it is {route.get('distance_m')} m, "
                f"about {route.get('walk_minutes')} minutes on foot: walk back along "
                "Terminal B to the Airside Plaza. The route is on your map.")
    if done == "load_skill":
        return ToolCall("search_pois", {"term": "gate 12", "building": "Terminal B"})
    if done == "search_pois" and last is not None:
        return ToolCall("show_poi", {"poi_id": json.loads(last.content)[0]["id"]})
    details = json.loads(last.content) if last is not None else {}
    return (f"{details.get('name')} is in {details.get('building')} "
            f"({details.get('location')}). I marked it on your map.")


def _plan(after: list[Message]) -> Any:
    updates = [m for m in after if m.role == "tool" and m.name == "update_plan"]
    if not updates:
        return ToolCall("update_plan", {"goal": "Answer with a plan",
                                        "steps": ["Think", "Answer"]})
    if len(updates) == 1:
        return ToolCall("update_plan", {"step": 1, "status": "completed", "result": "thought"})
    return "Planned and done."


def _burst(text: str, after: list[Message]) -> Any:
    n = int(text.split()[1])
    if not after:
        return [ToolCall("count", {"n": i}) for i in range(n)]
    return " ".join(f"word{i}" for i in range(n)) + " done."


_gates: dict[str, asyncio.Event] = {}  # wait/release: shared by design, across sessions


async def _wait(text: str) -> Any:
    gate = _gates.setdefault(text.split()[1], asyncio.Event())
    try:
        await asyncio.wait_for(gate.wait(), WAIT_LIMIT)
    except TimeoutError:
        return "gave up waiting"
    return ToolCall("echo", {"text": text})


def _release(text: str) -> str:
    name = text.split()[1]
    _gates.setdefault(name, asyncio.Event()).set()
    return f"released {name}"


def _transfer(text: str, after: list[Message]) -> Any:
    done = next((m for m in after if m.role == "tool" and m.name == "transfer"), None)
    if done is not None:
        return f"Transfer {'refused' if done.is_error else 'done'}: {done.content}"
    _, amount, _, to = text.split()[:4]
    return [ToolCall("echo", {"text": f"checking {to}"}),
            ToolCall("transfer", {"amount": int(amount), "to": to})]


def _echo(text: str, request: ModelRequest, after: list[Message]) -> Any:
    last = _last_tool(after)
    if last is None:
        return ToolCall("echo", {"text": text})
    seen = {"echo": last.content,
            "users": [m.content for m in request.messages
                      if m.role == "user" and not m.metadata.get("kind")],
            "tools": sorted(t.name for t in request.tools)}
    return json.dumps(seen)


async def respond(request: ModelRequest) -> Any:
    text, after = _turn(request)
    words = text.lower().split()
    if ("gate" in words and "b12" in " ".join(words)) or "coffee" in words:
        return _airport(text, after)
    if words[:1] == ["plan"]:
        return _plan(after)
    if words[:1] == ["burst"]:
        return _burst(text, after)
    if words[:1] == ["wait"] and not after:
        return await _wait(text)
    if words[:1] == ["release"]:
        return _release(text)
    if words[:1] == ["secret"]:
        last = _last_tool(after)
        return ToolCall("read_secret", {}) if last is None else f"The key is {last.content}"
    if words[:1] == ["broken"]:
        last = _last_tool(after)
        return ToolCall("count", {"n": "many"}) if last is None else "The count tool refused."
    if words[:1] == ["transfer"]:
        return _transfer(text, after)
    if words[:1] == ["crash"]:
        return ToolCall("crash", {}) if _last_tool(after) is None else "The crash tool failed."
    if words[:1] == ["fail"]:
        raise ModelError("the scripted model failed on purpose")
    return _echo(text, request, after)


def _model() -> FunctionModel:
    model = FunctionModel(respond)
    model.name = "scripted-airport"
    return model


agent = Agent(model=_model(), tools=[echo, read_secret, count, crash, transfer], skills=[SKILLS],
              planning=True, name="serve-test", max_iterations=8)
"""The agent the tests serve."""



# -- agents that work together (tests/test_multi_ui.py): ``reactloop serve --agent
# serve_agents:team``. The team agent hands every message to ``helper`` (an agent called as a
# tool), which echoes it with its own tool and answers; the team agent then answers with that.
def _helper_model(request: ModelRequest) -> Any:
    text, after = _turn(request)
    last = _last_tool(after)
    return ToolCall("echo", {"text": text}) if last is None else f"echoed: {last.content}"


def _team_model(request: ModelRequest) -> Any:
    text, after = _turn(request)
    last = _last_tool(after)
    return ToolCall("helper", {"task": text}) if last is None else f"The helper said {last.content}"


helper = Agent(FunctionModel(_helper_model), name="helper", tools=[echo])
team = Agent(FunctionModel(_team_model), name="team", tools=[helper.as_tool()])
