"""An MCP server for the client-feature tests (sampling, elicitation, progress, logging,
roots, list changes, resources, prompts), written with the official SDK's FastMCP
(``mcp.server.mcpserver.MCPServer``) for what the reference server does not cover.

    python mcp_features_server.py                 # stdio
    python mcp_features_server.py --http PORT     # streamable HTTP on 127.0.0.1:PORT
"""

from __future__ import annotations

import argparse
import os
import warnings
from typing import Annotated

import anyio
import mcp_types as types
from mcp.server.elicitation import AcceptedElicitation, ElicitationResult
from mcp.server.mcpserver import Context, Elicit, ListRoots, MCPServer, Resolve, Sample
from pydantic import BaseModel, Field

warnings.simplefilter("ignore")  # the SDK marks sampling, logging and roots as deprecated

server = MCPServer("features", log_level="WARNING")


def _sample(text: str) -> Sample:
    return Sample([types.SamplingMessage(role="user",
                                         content=types.TextContent(type="text", text=text))],
                  max_tokens=50, system_prompt="Summarize in five words.")


@server.tool()
async def summarize(text: str,
                    sampled: Annotated[types.CreateMessageResult, Resolve(_sample)]) -> str:
    """Ask the client's model to summarize the text (MCP sampling)."""
    content = sampled.content
    return f"summary: {content.text}" if isinstance(content, types.TextContent) else "?"


class Booking(BaseModel):
    name: str = Field(description="Your name")
    seats: int = Field(description="How many seats", ge=1, le=8)
    window: bool = Field(default=False, description="A window seat?")


def _ask() -> Elicit[Booking]:
    return Elicit("Who is travelling?", Booking)


@server.tool()
async def book(answer: Annotated[ElicitationResult[Booking], Resolve(_ask)]) -> str:
    """Book seats, asking the user for the details (MCP elicitation)."""
    if isinstance(answer, AcceptedElicitation):
        return f"booked {answer.data.seats} for {answer.data.name} (window: {answer.data.window})"
    return f"not booked: {answer.action}"


def _roots() -> ListRoots:
    return ListRoots()


@server.tool()
async def wait_for(path: str, ctx: Context) -> str:
    """Report progress, then wait until the file ``path`` exists (the client creates it when
    it has seen the progress: the test that events stream while the tool runs)."""
    await ctx.report_progress(1, 2, "waiting for the file")
    for _ in range(3000):
        if await anyio.Path(path).exists():
            return "seen"
        await anyio.sleep(0.01)  # polling for the file, bounded
    return "never seen"


@server.tool()
async def roots(listed: Annotated[types.ListRootsResult, Resolve(_roots)]) -> str:
    """The client's roots."""
    return ", ".join(str(r.uri) for r in listed.roots)


@server.tool()
async def work(steps: int, ctx: Context) -> str:
    """Report progress for some steps and log each one."""
    for i in range(1, steps + 1):
        await ctx.report_progress(i, steps, f"step {i}")
        await ctx.log("warning", f"did step {i}", logger_name="worker")
    return f"worked {steps} steps"


@server.tool()
async def unlock(ctx: Context) -> str:
    """Add the tool 'secret' and tell the client its tools changed."""
    def secret() -> str:
        """The secret."""
        return "42"

    server.add_tool(secret, name="secret")
    await ctx.notify_tools_changed()  # subscriptions/listen (2026-07-28)
    return "unlocked"


@server.tool()
async def whoami(ctx: Context) -> str:
    """'authorized' when the request carries ``Authorization: Bearer $FEATURES_TOKEN``."""
    expected = os.environ.get("FEATURES_TOKEN")
    got = (ctx.headers or {}).get("authorization")
    return "authorized" if expected and got == f"Bearer {expected}" else "anonymous"


@server.tool()
async def touch(ctx: Context) -> str:
    """Tell subscribers that notes://today changed."""
    await ctx.notify_resource_updated("notes://today")
    return "touched"


@server.resource("notes://today", name="today", description="Today's notes", mime_type="text/plain")
def today() -> str:
    return "Buy milk. Call Ada."


@server.resource("notes://day/{day}", name="day", description="The notes of a day")
def day(day: str) -> str:
    return f"Notes of {day}: nothing."


@server.prompt(description="Review some code")
def review(code: str, focus: str = "bugs") -> str:
    return f"Review this code for {focus}:\n{code}"


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int)
    parser.add_argument("--sse", type=int)
    args = parser.parse_args()
    if args.http:
        server.run("streamable-http", host="127.0.0.1", port=args.http)
    elif args.sse:
        server.run("sse", host="127.0.0.1", port=args.sse)
    else:
        server.run("stdio")
