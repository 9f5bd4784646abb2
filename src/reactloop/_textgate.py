"""The one gate streamed text passes on its way out of a run.

Every ``text_delta`` event the loop emits (and so every SSE ``text_delta`` and AG-UI
``TEXT_MESSAGE_CONTENT`` of ``reactloop serve``) carries text this gate released. Redacting
each delta on its own would let a key through that arrives a few characters at a time, so the
gate redacts over the text accumulated so far and holds back its end while it may be the start
of a secret or of a credential still arriving (:func:`reactloop._redact.hold_back`: the length
of the longest registered secret, at most ``MAX_PATTERN_HOLD`` characters for key-shaped
patterns). Two guarantees, for any split of a response into deltas:

- the concatenation of everything released never contains a registered secret;
- once :meth:`TextGate.flush` ran, it equals ``redact(whole text)``.

The interface is small on purpose, so other holders can join the same gate:
``feed(delta) -> text to release now`` and ``flush() -> the rest``, one gate per streamed
model response. Guardrails (:mod:`reactloop.controls`) join it with ``hold=True``: nothing is
released while the response streams, and ``flush(final)`` releases the response's text as the
guardrails passed it (possibly replaced), redacted — a trip never reaches ``flush``, so nothing
refused goes out.
"""

from __future__ import annotations

from reactloop._redact import hold_back, redact

__all__ = ["TextGate"]


class TextGate:
    """Holds back and redacts one streamed response's text (see the module docstring)."""

    __slots__ = ("_pending", "hold")

    def __init__(self, hold: bool = False) -> None:
        self._pending = ""
        self.hold = hold
        """Release nothing until :meth:`flush` (guardrails check the whole text first)."""

    @property
    def held(self) -> str:
        """The text received but not released yet (raw: never send it anywhere)."""
        return self._pending

    def feed(self, delta: str) -> str:
        """Take the next piece of text; return what may go out now (maybe ``""``)."""
        text = self._pending + delta
        if self.hold:
            self._pending = text
            return ""
        cut = hold_back(text)
        self._pending = text[cut:]
        return redact(text[:cut]) if cut else ""

    def flush(self, final: str | None = None) -> str:
        """The response ended: release the rest, redacted. A holding gate releases ``final``
        instead when given (the response's text as the guardrails passed it)."""
        text, self._pending = self._pending, ""
        if self.hold and final is not None:
            text = final
        return redact(text) if text else ""
