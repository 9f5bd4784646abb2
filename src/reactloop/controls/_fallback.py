"""``FallbackModel``: when a model fails, the next one takes the same request."""

from __future__ import annotations

import contextvars
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import replace

from reactloop.errors import ModelHTTPError, UserError
from reactloop.messages import ModelRequest, ModelResponse, OutputMode, TextDelta
from reactloop.models._base import Model

__all__ = ["FallbackListener", "FallbackModel", "fallback_listener"]

FallbackListener = Callable[[str, str, BaseException], None]
"""``listener(failed_model, next_model, error)``."""

fallback_listener: contextvars.ContextVar[FallbackListener | None] = contextvars.ContextVar(
    "reactloop_fallback_listener", default=None)
"""Set by the run around each model call, so a fallback becomes a ``fallback`` event."""

FallbackOn = Sequence[type[BaseException]] | Callable[[BaseException], bool]


class FallbackModel(Model):
    """A model that tries ``primary``, then each of ``fallbacks`` in order, with the same
    request.

    A model is left for the next one when it fails with a retryable error after its own
    retries are spent (``ModelHTTPError`` with ``retryable``: 429, 5xx, connection errors,
    timeouts), or with one of the errors listed in ``fallback_on``. Any other error — a bad
    request, a missing key — is raised at once: the next model would fail the same way or
    hide a bug. A stream falls back only before its first piece of text. The model that
    answered is on each step (``Step.model``) and each switch is a ``fallback`` event.

    Args:
        primary: a :class:`Model` or a model string (``"openai:gpt-4o"``).
        *fallbacks: more models or strings, tried in order (strings are resolved on first
            use, so a fallback's SDK and key are needed only when it is used).
        fallback_on: more exception classes that move on to the next model, or a predicate
            ``fn(error) -> bool`` deciding it.
    """

    def __init__(self, primary: Model | str, *fallbacks: Model | str,
                 fallback_on: FallbackOn = ()) -> None:
        from reactloop.models._resolve import resolve_model

        if not fallbacks:
            raise UserError("FallbackModel needs at least one fallback: "
                            "FallbackModel(primary, fallback, ...)")
        for m in (primary, *fallbacks):
            if not isinstance(m, Model | str):
                raise UserError(f"FallbackModel takes Model objects or model strings, got "
                                f"{type(m).__name__}")
        if not callable(fallback_on) and not all(
                isinstance(t, type) and issubclass(t, BaseException) for t in fallback_on):
            raise UserError("fallback_on must be exception classes or fn(error) -> bool")
        self._models: list[Model | str] = [resolve_model(primary), *fallbacks]
        self._on = fallback_on
        first = self._models[0]
        assert isinstance(first, Model)
        self.name = first.name
        self.provider = first.provider
        self.context_window = first.context_window
        # attachments every model given as an object reads (one given as a string is resolved
        # only when needed, so it is assumed to read what the primary reads)
        self.accepts = frozenset.intersection(
            *(m.accepts for m in self._models if isinstance(m, Model)))

    @property
    def models(self) -> list[Model]:
        """The models in order (resolving any still given as strings)."""
        return [self._model(i) for i in range(len(self._models))]

    def _model(self, i: int) -> Model:
        m = self._models[i]
        if isinstance(m, str):
            from reactloop.models._resolve import resolve_model

            m = self._models[i] = resolve_model(m)
        return m

    def _falls_back(self, exc: BaseException) -> bool:
        if isinstance(exc, ModelHTTPError) and exc.retryable:
            return True
        if callable(self._on):
            return bool(self._on(exc))
        return isinstance(exc, tuple(self._on))

    def _switch(self, i: int, exc: Exception) -> None:
        """Model ``i`` failed: raise, or report the switch to model ``i + 1``."""
        if i + 1 >= len(self._models) or not self._falls_back(exc):
            raise exc
        listener = fallback_listener.get()
        if listener is not None:
            listener(self._model(i).name, _name(self._models[i + 1]), exc)

    async def request(self, request: ModelRequest) -> ModelResponse:
        i = 0
        while True:
            model = self._model(i)
            try:
                response = await model.request(request)
            except Exception as exc:
                self._switch(i, exc)
                i += 1
                continue
            return response if response.model_name else replace(response, model_name=model.name)

    async def stream(self, request: ModelRequest) -> AsyncIterator[TextDelta | ModelResponse]:
        i = 0
        while True:
            model, started = self._model(i), False
            try:
                async for item in model.stream(request):
                    if isinstance(item, ModelResponse):
                        yield item if item.model_name else replace(item, model_name=model.name)
                        return
                    started = True
                    yield item
                return
            except Exception as exc:
                if started:  # text already went out: a second model cannot take it back
                    raise
                self._switch(i, exc)
                i += 1

    def output_mode(self, *, tools: bool) -> OutputMode:
        return self._model(0).output_mode(tools=tools)

    async def aclose(self) -> None:
        for m in self._models:
            if isinstance(m, Model):
                await m.aclose()

    def __repr__(self) -> str:
        return f"FallbackModel({', '.join(_name(m) for m in self._models)})"


def _name(m: Model | str) -> str:
    return m if isinstance(m, str) else m.name
