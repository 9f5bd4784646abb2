"""A small MCP server for the MCP tests, built with the SDK's server side.

    python mcp_demo_server.py                 # stdio
    python mcp_demo_server.py --http PORT     # streamable HTTP on 127.0.0.1:PORT

With ``--fail-if-exists PATH`` it refuses to start (exit 3, a message on stderr) when PATH
exists, so a test can make a restart fail.
"""

from __future__ import annotations

import argparse
import base64
import os
import sys

import anyio
import mcp_types as types
from mcp.server.mcpserver import MCPServer

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(1226)).decode()  # 1234 bytes

server = MCPServer("demo", log_level="WARNING")


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool()
def pid() -> int:
    """The server's process id."""
    return os.getpid()


@server.tool()
def crash() -> str:
    """Exit the server process at once, without answering."""
    os._exit(1)


@server.tool()
async def slow(seconds: float) -> str:
    """Answer after some seconds."""
    await anyio.sleep(seconds)
    return "done"


@server.tool()
def fail(reason: str) -> str:
    """Always fails with the reason."""
    raise ValueError(reason)


@server.tool(name="picture.with-odd name")
def picture() -> list[types.ContentBlock]:
    """Some text, an image and a resource."""
    return [
        types.TextContent(type="text", text="a picture:"),
        types.ImageContent(type="image", data=PNG, mime_type="image/png"),
        types.EmbeddedResource(
            type="resource",
            resource=types.TextResourceContents(uri="file:///notes.txt", text="some notes"),
        ),
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int)
    parser.add_argument("--fail-if-exists")
    args = parser.parse_args()
    if args.fail_if_exists and os.path.exists(args.fail_if_exists):
        print(f"demo server: refusing to start, {args.fail_if_exists} exists", file=sys.stderr)
        sys.exit(3)
    print("demo server: starting", file=sys.stderr)
    if args.http:
        server.run("streamable-http", host="127.0.0.1", port=args.http)
    else:
        server.run()


if __name__ == "__main__":
    main()
