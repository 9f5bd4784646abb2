"""Message and tool content as the GenAI conventions shape it (``gen_ai.input.messages``,
``gen_ai.output.messages``, ``gen_ai.system_instructions``, ``gen_ai.tool.call.*``), recorded
only with ``include_content=True``.

Every string goes through the redaction hook before it is serialised: reactloop's key
redaction first, then the user's hook. Strings are redacted one by one (not the JSON text),
so a replacement can never break a JSON escape.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from reactloop.messages import Message, ModelRequest, ModelResponse

__all__ = ["Redact", "arguments_json", "input_json", "output_json", "scrub", "system_json"]

Redact = Callable[[str], str]


def scrub(value: Any, hook: Redact) -> Any:
    """``value`` as JSON data with every string passed through ``hook``."""
    if isinstance(value, str):
        return hook(value)
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, Mapping):
        return {hook(str(k)): scrub(v, hook) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [scrub(v, hook) for v in value]
    return hook(str(value))


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _parts(m: Message, hook: Redact) -> list[dict[str, Any]]:
    if m.role == "tool":
        return [{"type": "tool_call_response", "id": m.tool_call_id,
                 "response": hook(m.content)}, *_attachments(m)]
    parts: list[dict[str, Any]] = []
    if m.content:
        parts.append({"type": "text", "content": hook(m.content)})
    for c in m.tool_calls:
        parts.append({"type": "tool_call", "id": c.id, "name": c.name,
                      "arguments": scrub(c.arguments, hook)})
    return parts + _attachments(m)


def _attachments(m: Message) -> list[dict[str, Any]]:
    """Attachments as the conventions' ``uri`` (a URL) or ``file`` parts (the content hash as
    the file id): never the bytes."""
    out: list[dict[str, Any]] = []
    for a in m.attachments:
        part: dict[str, Any] = {"modality": a.kind, "mime_type": a.media_type}
        if a.url is not None:
            part.update(type="uri", uri=a.url)
        else:
            part.update(type="file", file_id=f"sha256:{a.sha256}", size=a.size)
        out.append(part)
    return out


def input_json(request: ModelRequest, hook: Redact) -> str:
    """The history sent, then the request's notes (sent last, as a user message)."""
    out = [{"role": m.role, "parts": _parts(m, hook)} for m in request.messages]
    if request.notes:
        out.append({"role": "user", "parts": [{"type": "text", "content": hook(n)}
                                              for n in request.notes]})
    return _dumps(out)


def system_json(system: str, hook: Redact) -> str:
    return _dumps([{"type": "text", "content": hook(system)}] if system else [])


def output_json(response: ModelResponse, hook: Redact) -> str:
    m = Message.assistant(response.text or "", response.tool_calls)
    return _dumps([{"role": "assistant", "parts": _parts(m, hook),
                    "finish_reason": response.finish_reason
                    or ("tool_calls" if response.tool_calls else "stop")}])


def arguments_json(arguments: Mapping[str, Any] | Sequence[Any], hook: Redact) -> str:
    return _dumps(scrub(arguments, hook))
