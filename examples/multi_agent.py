"""Agents that work together: a triage agent and two specialists built on the example skills.

    python examples/multi_agent.py "Where is the nearest restroom to gate B12?"
    python examples/multi_agent.py --model openai:gpt-4o-mini "Book me a flight London-Tokyo"
    python examples/multi_agent.py --session trip "I need a flight from Beijing to Tokyo"
    python examples/multi_agent.py --session trip "Tomorrow, economy, one person"

The triage agent only routes: it hands the conversation to the airport specialist (the
``airport`` skill: points of interest, walking directions) or to the flight-booking specialist
(the ``book-flight`` skill, whose scripts run in a workspace confined to the skill's folder).
The booking specialist can also ask the airport specialist a question as a tool
(``airport.as_tool()``), e.g. where its departure gate is. With ``--session ID`` the
conversation is stored (SQLite, the default store) and the next message starts with the agent
that spoke last, in any process.

``--model`` takes any model reactloop knows: ``local`` (the embedded model, the default),
``openai:<name>``, ``anthropic:<name>``, ``gemini:<name>``, ``ollama:<name>``. A small local
model routes less reliably than a large one; the structure is the same.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from reactloop import Agent, Model, RunResult
from reactloop.events import Event

SKILLS = Path(__file__).resolve().with_name("skills")


def build(model: Model | str = "local") -> Agent:
    """The triage agent with its two specialists (one model for all three)."""
    airport = Agent(
        model, name="airport", skills=[SKILLS / "airport"], max_iterations=6,
        instructions="You are the airport's information desk. Load the airport skill, then "
                     "answer questions about where things are and how to walk there.")
    booking = Agent(
        model, name="booking", skills=[SKILLS / "book-flight"],
        workspace=SKILLS / "book-flight", tools=[airport.as_tool(
            description="Ask the airport information desk where something is in the "
                        "airport (a gate, a check-in desk) or how to walk there.")],
        max_iterations=8,
        instructions="You search and book flights. Load the book-flight skill and follow it.")
    return Agent(
        model, name="triage", handoffs=[airport, booking], max_iterations=3,
        instructions="You route travellers. Questions about places in the airport go to the "
                     "airport agent; searching or booking flights goes to the booking agent. "
                     "Transfer at once; do not answer yourself.")


def show(event: Event) -> None:
    """One line per event worth seeing, indented under the agent that produced it."""
    who = f"[{event.agent}] " if event.agent else ""
    if event.type == "handoff":
        print(f"  → handed to {event.to_agent}", file=sys.stderr)  # type: ignore[attr-defined]
    elif event.type == "tool_call":
        call = event.call  # type: ignore[attr-defined]
        print(f"  {'  ' if event.agent else ''}{who}→ {call.name}({dict(call.arguments)})",
              file=sys.stderr)


async def ask(agent: Agent, text: str, session: str | None) -> RunResult[Any]:
    source = (agent.session(session).stream(text) if session is not None
              else agent.stream(text))
    result = None
    async for event in source:
        show(event)
        if event.type == "run_end" and event.agent is None:
            result = event.result  # type: ignore[attr-defined]
    assert result is not None
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("text", help="what the traveller says")
    parser.add_argument("--model", default="local", help="local, openai:<name>, ... ")
    parser.add_argument("--session", help="store the conversation under this id")
    args = parser.parse_args(argv)
    result = asyncio.run(ask(build(args.model), args.text, args.session))
    print(f"[{result.agent}] {result.output}")
    print(f"{result.state.value}; tokens by agent: "
          + ", ".join(f"{name} {m.input_tokens + m.output_tokens}"
                      for name, m in result.metrics_by_agent.items()), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
