"""MCP tool results → reactloop tool values (no server needed)."""

from __future__ import annotations

import base64

import mcp_types as types
import pytest

from reactloop import ToolRetry
from reactloop.mcp._results import EMPTY, tool_output


def result(
    *content: types.ContentBlock, structured: object = None, error: bool = False
) -> types.CallToolResult:
    return types.CallToolResult(
        content=list(content), structured_content=structured, is_error=error
    )


def text(value: str) -> types.TextContent:
    return types.TextContent(type="text", text=value)


def test_text_blocks_are_joined() -> None:
    assert tool_output(result(text("a"), text("b"))) == "a\nb"
    assert tool_output(result()) == EMPTY


def test_media_and_resources_become_placeholders() -> None:
    data = base64.b64encode(bytes(1000)).decode()
    out = tool_output(
        result(
            types.ImageContent(type="image", data=data, mime_type="image/jpeg"),
            types.AudioContent(type="audio", data=data, mime_type="audio/wav"),
            types.ResourceLink(
                type="resource_link", uri="file:///a.csv", name="a.csv", mime_type="text/csv"
            ),
            types.EmbeddedResource(
                type="resource",
                resource=types.BlobResourceContents(uri="file:///b.bin", blob=data, mime_type=None),
            ),
        )
    )
    assert out.splitlines() == [
        "[image: image/jpeg, 1000 bytes]",
        "[audio: audio/wav, 1000 bytes]",
        "[resource link: file:///a.csv (a.csv, text/csv)]",
        "[resource: file:///b.bin, application/octet-stream, 1000 bytes]",
    ]


def test_structured_content() -> None:
    data = {"city": "Lima", "n": 2}
    assert tool_output(result(text('{"city": "Lima", "n": 2}'), structured=data)) == data
    assert tool_output(result(structured=data)) == data
    assert tool_output(result(text("7"), structured={"result": 7})) == 7
    assert tool_output(result(text("hi"), structured={"result": "hi"})) == "hi"
    summary = tool_output(result(text("Lima has 2 airports."), structured=data))
    assert summary == 'Lima has 2 airports.\n\nstructured content: {"city": "Lima", "n": 2}'


def test_is_error_raises_tool_retry_with_the_servers_message() -> None:
    with pytest.raises(ToolRetry) as info:
        tool_output(result(text("Invalid timezone: 'X'"), error=True))
    assert info.value.message == "Invalid timezone: 'X'"
    with pytest.raises(ToolRetry, match="without a message"):
        tool_output(result(error=True))
    with pytest.raises(ToolRetry, match='"code": 3'):
        tool_output(result(structured={"code": 3}, error=True))
