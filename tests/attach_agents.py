"""Agents for the attachment CLI tests (``--agent attach_agents:NAME``)."""

from __future__ import annotations

from reactloop import Agent, ModelResponse
from reactloop.messages import ModelRequest
from reactloop.testing import FunctionModel


def _describe(request: ModelRequest) -> ModelResponse:
    last = [m for m in request.messages if m.role == "user"][-1]
    parts = " | ".join(f"{a.kind} {a.media_type} {len(a.data or b'')}"
                       for a in last.attachments)
    return ModelResponse(text=f"{last.content} || {parts or 'no parts'}")


def seeing() -> Agent:
    """A model that reads images and PDFs; answers with the text and the parts it got."""
    return Agent(model=FunctionModel(_describe))


def blind() -> Agent:
    """A text-only model (like the embedded one); answers the same way."""
    model = FunctionModel(_describe, accepts=())
    model.name = "text-only"
    return Agent(model=model)
