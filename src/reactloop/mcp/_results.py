"""MCP tool results → reactloop's uniform tool result.

* text blocks are joined; images, audio and binary resources become short placeholders such as
  ``[image: image/png, 1234 bytes]`` (a model cannot read base64, and it would fill the context);
* ``structuredContent`` is returned as the value when the text merely repeats it (the spec asks
  servers to mirror it as JSON text), so the model sees compact JSON and programs get a dict;
  otherwise the text is kept and the structured content appended;
* ``isError`` raises :class:`~reactloop.errors.ToolRetry`, which the registry turns into an
  error result carrying exactly the server's message.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types

from reactloop.errors import ToolRetry

__all__ = ["describe_block", "tool_output"]

EMPTY = "(the tool returned no content)"


def tool_output(result: types.CallToolResult) -> Any:
    """The value a reactloop tool returns for ``result``; raises ToolRetry for ``isError``."""
    text = "\n".join(part for part in map(describe_block, result.content) if part)
    structured = result.structured_content
    if result.is_error:
        message = text or (_dumps(structured) if structured is not None else "")
        raise ToolRetry(message or "the tool reported an error without a message")
    if structured is not None:
        if not text or _mirrors(text, structured):
            return structured
        if isinstance(structured, dict) and len(structured) == 1:
            # SDK servers wrap a plain return value as {"result": value} and send it as text too
            (value,) = structured.values()
            if text == value or _mirrors(text, value):
                return value
        return f"{text}\n\nstructured content: {_dumps(structured)}"
    return text if text else EMPTY


def describe_block(block: Any) -> str:
    """One content block as text the model can read."""
    if isinstance(block, types.TextContent):
        return block.text
    if isinstance(block, types.ImageContent):
        return f"[image: {block.mime_type}, {_b64_size(block.data)} bytes]"
    if isinstance(block, types.AudioContent):
        return f"[audio: {block.mime_type}, {_b64_size(block.data)} bytes]"
    if isinstance(block, types.ResourceLink):
        extra = f", {block.mime_type}" if block.mime_type else ""
        return f"[resource link: {block.uri} ({block.name}{extra})]"
    if isinstance(block, types.EmbeddedResource):
        res = block.resource
        if isinstance(res, types.TextResourceContents):
            return f"[resource: {res.uri}]\n{res.text}"
        if isinstance(res, types.BlobResourceContents):
            mime = res.mime_type or "application/octet-stream"
            return f"[resource: {res.uri}, {mime}, {_b64_size(res.blob)} bytes]"
    kind = getattr(block, "type", type(block).__name__)
    return f"[{kind} content]"


def _b64_size(data: str) -> int:
    """Decoded size of base64 ``data`` without decoding it."""
    data = data.strip()
    return max(0, len(data) * 3 // 4 - data[-2:].count("="))


def _mirrors(text: str, structured: Any) -> bool:
    try:
        return bool(json.loads(text) == structured)
    except ValueError:
        return False


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
