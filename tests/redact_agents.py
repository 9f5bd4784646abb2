"""The agent served by the streamed-redaction tests (tests/test_redact_serve.py).

Its model streams its answer three characters at a time, as real models do, and quotes the
secrets of the environment (``DB_PASSWORD``, ``GITHUB_PAT``, ``SERVICE_TOKEN``, set by the test
with ordinary-looking values): first through a tool that reads them, then in its own words.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator

from reactloop import Agent, ToolCall, tool
from reactloop.messages import ModelRequest, ModelResponse, TextDelta
from reactloop.testing import FunctionModel

NAMES = ("DB_PASSWORD", "GITHUB_PAT", "SERVICE_TOKEN")


@tool
def read_settings() -> str:
    """Read the service's settings (a test of redaction: the values must never leave)."""
    return "; ".join(f"{name}={os.environ.get(name, '')}" for name in NAMES)


def respond(request: ModelRequest) -> ModelResponse | ToolCall:
    if not any(m.role == "tool" for m in request.messages[-1:]):
        return ToolCall("read_settings", {})
    values = [os.environ.get(name, "") for name in NAMES]
    return ModelResponse(text=f"The database password is {values[0]}, the PAT is {values[1]} "
                              f"and the token is {values[2]}. Keep them safe.")


class ThreeCharModel(FunctionModel):
    """Streams the text of every answer in pieces of three characters."""

    async def stream(self, request: ModelRequest) -> AsyncIterator[TextDelta | ModelResponse]:
        response = await self.request(request)
        text = response.text or ""
        for i in range(0, len(text), 3):
            yield TextDelta(text[i:i + 3])
        yield response


agent = Agent(model=ThreeCharModel(respond), tools=[read_settings], name="redact-test")
"""The agent the tests serve."""
