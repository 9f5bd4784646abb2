"""The provider-agnostic model interface (feature P1).

A :class:`Model` turns one :class:`ModelRequest` (system prompt, history, tool specs,
volatile notes, settings) into one :class:`ModelResponse` (text, tool calls, usage). Those
values live in :mod:`reactloop.messages` (the bottom layer) and are imported from there;
:mod:`reactloop.models` is the public front door for both. Adapters translate these neutral
values to one wire API each and do nothing else.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from reactloop.messages import ModelRequest, ModelResponse, OutputMode, TextDelta, ToolSpec

__all__ = ["Model"]


class Model:
    """Base class of every model. Subclasses implement :meth:`request` (and may :meth:`stream`)."""

    name: str = "model"
    provider: str = "unknown"
    """Who serves the model, as OpenTelemetry's GenAI conventions name it
    (``gen_ai.provider.name``: ``openai``, ``anthropic``, ``gcp.gemini``…)."""
    context_window: int | None = None
    """Tokens the model can attend to, when known (used by compaction)."""
    accepts: frozenset[str] = frozenset()
    """Media types of attachments the model reads natively (``image/png``,
    ``application/pdf``…); empty for a text-only model. The loop converts or refuses the rest
    before any call (text documents always go as text; see ``reactloop._attach``)."""

    async def request(self, request: ModelRequest) -> ModelResponse:
        raise NotImplementedError

    async def stream(self, request: ModelRequest) -> AsyncIterator[TextDelta | ModelResponse]:
        """Yield :class:`TextDelta` pieces, then exactly one final :class:`ModelResponse`.

        The default streams nothing and yields the whole response at once.
        """
        response = await self.request(request)
        if response.text:
            yield TextDelta(response.text)
        yield response

    def output_mode(self, *, tools: bool) -> OutputMode:
        """The strongest way this model enforces a typed final answer
        (``Agent(output_type=...)`` with ``output_mode="auto"``): ``"native"`` when the adapter
        translates ``ModelRequest.output_schema`` into the provider's own enforcement,
        ``"tool"`` for a final-answer tool, ``"prompted"`` (the default) for the schema in the
        prompt. ``tools``: whether the agent also has tools."""
        return "prompted"

    def count_tokens(self, text: str) -> int:
        """Tokens in ``text``; the default is a documented estimate (4 characters a token)."""
        return (len(text) + 3) // 4

    def sent_tools(self, request: ModelRequest) -> tuple[ToolSpec, ...]:
        """The tool definitions this model puts in its prompt for ``request``, which the
        context manager counts against :attr:`context_window`. The default: the run's whole
        list (``request.all_tools``), as the provider adapters send it; a model that lists
        fewer (the embedded model's ranked offer) says which."""
        return request.all_tools

    async def aclose(self) -> None:
        """Release clients or weights. Safe to call more than once."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"
