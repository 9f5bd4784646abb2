"""An MCP server (the official SDK's FastMCP) whose tool asks the user in the *resumable* form
of elicitation: on a 2026-07-28 connection its question comes back as an input-required
result, and the client retries ``tools/call`` with the answer (SEP-2322).

Its request state is sealed with a fixed key (``RequestStateSecurity(keys=[...])``), as a
server behind a load balancer would do: a process started later (after a Temporal worker
died, taking its stdio server with it) accepts the state an earlier process sealed.

Every question asked and every answer received is appended, with the process id, to the file
named by ``REACTLOOP_TEST_LOG`` (how the tests see what reached the server).

    python mcp_input_server.py        # stdio
"""

from __future__ import annotations

import os
import warnings
from typing import Annotated

from mcp.server.elicitation import AcceptedElicitation, ElicitationResult
from mcp.server.mcpserver import Elicit, MCPServer, RequestStateSecurity, Resolve
from pydantic import BaseModel, Field

warnings.simplefilter("ignore")

KEY = "reactloop-test-request-state-key-0123456789abcdef"  # >= 32 bytes; tests only

server = MCPServer("input", log_level="WARNING",
                   request_state_security=RequestStateSecurity(keys=[KEY]))


def _log(line: str) -> None:
    path = os.environ.get("REACTLOOP_TEST_LOG")
    if path:
        with open(path, "a") as f:
            f.write(f"{line} {os.getpid()}\n")


class Traveller(BaseModel):
    name: str = Field(description="Your name")
    seats: int = Field(description="How many seats", ge=1, le=8)


def _ask() -> Elicit[Traveller]:
    _log("asked")
    return Elicit("Who is travelling?", Traveller)


@server.tool()
async def book(city: str, answer: Annotated[ElicitationResult[Traveller], Resolve(_ask)]
               ) -> str:
    """Book seats to a city, asking the user who travels (MCP elicitation, resumable)."""
    if isinstance(answer, AcceptedElicitation):
        _log(f"booked {city} {answer.data.name} {answer.data.seats}")
        return f"booked {answer.data.seats} to {city} for {answer.data.name}"
    _log(f"not-booked {city} {answer.action}")
    return f"not booked: {answer.action}"


@server.tool()
async def ping() -> str:
    """Answer pong (asks nothing)."""
    return "pong"


if __name__ == "__main__":
    server.run()
