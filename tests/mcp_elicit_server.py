"""An MCP server whose tools ask the user with ``ctx.elicit`` inside an open ``tools/call`` (the
classic, live form of MCP elicitation), written with the official SDK's FastMCP, for the
``reactloop serve`` elicitation tests (tests/test_serve_elicitation.py).

    python mcp_elicit_server.py        # stdio

``book`` asks "Who is travelling?" with a form of every field kind the dev UI draws (a string,
an integer with a range, a number, a boolean with a default, an enum); ``confirm`` asks one
yes/no question. Each returns what the answer was, so a test sees what the server received.
"""

from __future__ import annotations

import json
import warnings
from typing import Literal

import anyio
import mcp_types as types
from mcp.server.elicitation import AcceptedElicitation
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from pydantic import BaseModel, Field

warnings.simplefilter("ignore")

server = MCPServer("asker", log_level="WARNING")


class Booking(BaseModel):
    name: str = Field(description="Your name")
    seats: int = Field(description="How many seats", ge=1, le=8)
    budget: float = Field(default=100.0, description="Budget in euros")
    window: bool = Field(default=False, description="A window seat?")
    meal: Literal["none", "vegetarian", "vegan"] = Field(default="none", description="Meal")


@server.tool()
async def book(ctx: Context) -> str:
    """Book seats, asking the user for the details (MCP elicitation)."""
    answer = await ctx.elicit("Who is travelling?", Booking)
    if isinstance(answer, AcceptedElicitation):
        return "booked: " + json.dumps(answer.data.model_dump(), sort_keys=True)
    return f"not booked: {answer.action}"


class Confirm(BaseModel):
    sure: bool = Field(description="Go ahead?")


@server.tool()
async def confirm(ctx: Context) -> str:
    """Ask for a confirmation."""
    answer = await ctx.elicit("Really?", Confirm)
    if isinstance(answer, AcceptedElicitation):
        return f"confirmed: {answer.data.sure}"
    return f"not confirmed: {answer.action}"


async def serve_earlier_protocol() -> None:
    """Serve stdio as a server of the protocol's earlier versions: the client's
    ``server/discover`` probe is refused (method not found), so it falls back to the initialize
    handshake, where a tool may send requests to the client while it runs. (A 2026-07-28
    connection has no back-channel inside a call; its servers ask with input-required results,
    tests/mcp_features_server.py.)"""
    low = server._lowlevel_server
    async with stdio_server() as (read, write):
        send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](100)

        async def refuse_the_probe() -> None:
            async with send:
                async for item in read:
                    message = getattr(item, "message", None)
                    if isinstance(message, types.JSONRPCRequest) \
                            and message.method == "server/discover":
                        await write.send(SessionMessage(types.JSONRPCError(
                            jsonrpc="2.0", id=message.id, error=types.ErrorData(
                                code=types.METHOD_NOT_FOUND, message="Method not found"))))
                        continue
                    await send.send(item)

        async with anyio.create_task_group() as tg:
            tg.start_soon(refuse_the_probe)
            await low.run(receive, write, low.create_initialization_options())
            tg.cancel_scope.cancel()


if __name__ == "__main__":
    anyio.run(serve_earlier_protocol)
