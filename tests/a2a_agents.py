"""The agents of the A2A tests: ``reactloop serve --agent a2a_agents:agent`` (and ``:typed``).

``agent``'s model is a :class:`FunctionModel` deciding from the request alone, by the words of
the turn's user message (it ends every run with a loop-control tool):

- ``ask``: asks the user for a name (``ask_question``: the run waits for the user); the next
  message ``my name is NAME`` answers ``Hello, NAME (after N messages)``;
- ``transfer N to NAME``: calls ``transfer``, which needs approval, then reports its result;
- ``crash``: calls ``crash``, which raises (a tool error with a traceback), then answers;
- ``slow``: waits until cancelled (a run to cancel);
- ``fail``: the model raises (the run ends ``error``);
- anything else: calls ``echo``, then answers ``echo: TEXT (turn N)`` (N: user messages in the
  session so far, so a continued conversation shows).

``typed`` answers every message with a :class:`Verdict` (a typed output: a data part).
``caller`` calls the agent served at ``$A2A_REMOTE_URL`` (agent B) as the tool ``ask_b``: B
asks a question, ``caller`` answers it, then reports B's answer (tests/test_a2a_call.py).
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

from pydantic import BaseModel

from reactloop import Agent, ToolCall, tool
from reactloop.a2a import A2AAgent
from reactloop.errors import ModelError
from reactloop.messages import Message, ModelRequest
from reactloop.testing import FunctionModel


@tool
def echo(text: str) -> str:
    """Return the text unchanged (not sk-serve-test-0123456789abcdef).

    Args:
        text: anything.
    """
    return text


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
    for i in range(len(request.messages) - 1, -1, -1):
        m = request.messages[i]
        if m.role == "user" and not m.metadata.get("kind"):
            return m.content, list(request.messages[i + 1:])
    return "", []


def _users(request: ModelRequest) -> int:
    return sum(1 for m in request.messages if m.role == "user" and not m.metadata.get("kind"))


def _done(text: str) -> ToolCall:
    return ToolCall("task_completion", {"result": text})


async def respond(request: ModelRequest) -> Any:
    text, after = _turn(request)
    words = text.lower().split()
    tools = [m for m in after if m.role == "tool"]
    if words[:1] == ["ask"]:
        return ToolCall("ask_question", {"question": "What is your name?"})
    if words[:3] == ["my", "name", "is"]:
        return _done(f"Hello, {text.split()[3]} (after {_users(request)} messages)")
    if words[:1] == ["transfer"]:
        if tools:
            return _done(f"Transfer {'refused' if tools[-1].is_error else 'done'}: "
                         f"{tools[-1].content}")
        _, amount, _, to = text.split()[:4]
        return ToolCall("transfer", {"amount": int(amount), "to": to})
    if words[:1] == ["crash"]:
        return ToolCall("crash", {}) if not tools else _done("The crash tool failed.")
    if words[:1] == ["slow"]:
        await asyncio.Event().wait()  # until the run is cancelled
    if words[:1] == ["fail"]:
        raise ModelError("the scripted model failed on purpose")
    if not tools:
        return ToolCall("echo", {"text": text})
    return _done(f"echo: {tools[-1].content} (turn {_users(request)})")


def _model(fn: Any, name: str) -> FunctionModel:
    model = FunctionModel(fn)
    model.name = name
    return model


agent = Agent(model=_model(respond, "scripted-a2a"), tools=[echo, crash, transfer], loop_control=True,
              name="a2a-test", instructions="Echoes, asks and transfers (a test agent).",
              max_iterations=6)


class Verdict(BaseModel):
    """A typed answer."""

    topic: str
    ok: bool
    score: int


def _verdict(request: ModelRequest) -> Any:
    text, _ = _turn(request)
    return json.dumps({"topic": text, "ok": True, "score": len(text)})


typed = Agent(model=_model(_verdict, "scripted-typed"), output_type=Verdict, name="a2a-typed")


def _delegate(request: ModelRequest) -> Any:
    """``caller``'s model: asks B for a greeting, answers B's question, reports B's answer."""
    _, after = _turn(request)
    tools = [m for m in after if m.role == "tool"]
    if not tools:
        return ToolCall("ask_b", {"task": "ask"})
    if "asks: What is your name?" in tools[-1].content:
        return ToolCall("ask_b", {"task": "my name is Ada"})
    return f"B said: {tools[-1].content}"


remote = A2AAgent(os.environ.get("A2A_REMOTE_URL", "http://127.0.0.1:9"), name="b",
                  description="Agent B (greets people).")
caller = Agent(model=_model(_delegate, "scripted-caller"), tools=[remote.as_tool(name="ask_b")],
               name="a2a-caller", max_iterations=6)
