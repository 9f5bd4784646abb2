"""Cassettes: every model call of an eval, recorded (request digest → response).

Recording wraps the agent's model; replaying puts a model in its place that answers from the
cassette, so a stored run is re-scored — with a changed scorer, rubric or report — without
calling the model again. Each run (case × repeat) has its own list of calls, so the spread of
``--repeat`` survives a replay. The digest covers everything the loop sends (system prompt,
messages, tools, notes, settings) except the per-run call ids, so a replay notices when the
agent, its tools or the case changed and says so instead of answering from a stale recording.
"""

from __future__ import annotations

import contextvars
import hashlib
import json
import time
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

from reactloop.errors import ModelError
from reactloop.evals._cases import EvalConfigError
from reactloop.messages import Message, ModelRequest, ModelResponse, TextDelta, ToolCall, Usage
from reactloop.models._base import Model

__all__ = ["Cassette", "CassetteMiss", "cassette_model", "request_digest"]

CASSETTE_VERSION = 1

current_slot: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "reactloop_eval_slot", default=None)
"""The run (``case#repeat``) whose model calls are being made; set by the runner."""


class CassetteMiss(ModelError):
    """A replayed request is not in the cassette."""


def _message(m: Message) -> dict[str, Any]:
    return {"role": m.role, "content": m.content, "name": m.name, "is_error": m.is_error,
            "calls": [[c.name, dict(c.arguments)] for c in m.tool_calls]}


def request_digest(request: ModelRequest) -> str:
    """A stable hash of what a request asks (call ids and metadata left out)."""
    s = request.settings
    data = {
        "system": request.system,
        "messages": [_message(m) for m in request.messages],
        "tools": [[t.name, t.description, dict(t.parameters)] for t in request.tools],
        "declared": [t.name for t in request.declared_tools],
        "notes": list(request.notes),
        "settings": [s.max_tokens, s.temperature, s.tool_choice, dict(s.extra)],
    }
    text = json.dumps(data, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def response_to_dict(r: ModelResponse) -> dict[str, Any]:
    return {"text": r.text, "tool_calls": [c.to_dict() for c in r.tool_calls],
            "usage": None if r.usage is None else [r.usage.input_tokens, r.usage.output_tokens],
            "finish_reason": r.finish_reason, "model_name": r.model_name,
            "provider_details": dict(r.provider_details) if r.provider_details else None}


def response_from_dict(d: Mapping[str, Any]) -> ModelResponse:
    usage = d.get("usage")
    return ModelResponse(
        d.get("text"),
        [ToolCall(c["name"], c.get("arguments") or {}, c.get("id"),
                  c.get("provider_details") or None) for c in d.get("tool_calls") or ()],
        Usage(int(usage[0]), int(usage[1])) if usage else None,
        d.get("finish_reason"), d.get("model_name"), d.get("provider_details") or None)


class Cassette:
    """Recorded model calls (the agent's and the judge's), by run slot (``case#repeat``).

    Args:
        data: the JSON form (what :meth:`to_dict` returns); empty for a new recording.
    """

    def __init__(self, data: Mapping[str, Any] | None = None) -> None:
        data = data or {}
        self.model: str = data.get("model") or ""
        self.context_window: int | None = data.get("context_window")
        self.runs: dict[str, list[dict[str, Any]]] = {
            k: list(v) for k, v in (data.get("runs") or {}).items()}
        self.other: dict[str, dict[str, Any]] = dict(data.get("other") or {})
        """Calls made outside an eval run (no slot), by digest."""
        self._used: dict[str, set[int]] = {}

    @classmethod
    def load(cls, path: str | Path) -> Cassette:
        p = Path(path)
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except OSError as exc:
            raise EvalConfigError(f"cannot read cassette {p}: {exc.strerror or exc}") from None
        except UnicodeDecodeError:
            raise EvalConfigError(f"{p} is not a cassette (not UTF-8 text); record one with "
                                  "--record") from None
        except json.JSONDecodeError as exc:
            raise EvalConfigError(f"{p} is not a cassette (invalid JSON: {exc.msg}); record "
                                  "one with --record") from None
        if not isinstance(data, dict) or data.get("version") != CASSETTE_VERSION:
            raise EvalConfigError(f"{p} is not a version-{CASSETTE_VERSION} reactloop cassette; "
                                  "record it again with --record")
        return cls(data)

    def to_dict(self) -> dict[str, Any]:
        return {"version": CASSETTE_VERSION, "model": self.model,
                "context_window": self.context_window, "runs": self.runs, "other": self.other}

    def save(self, path: str | Path) -> None:
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_name(p.name + ".tmp")
        tmp.write_text(json.dumps(self.to_dict(), ensure_ascii=False, indent=1) + "\n",
                       encoding="utf-8")
        tmp.replace(p)  # never leave a half-written cassette behind

    # -- recording and replaying -------------------------------------------------------------
    def record(self, slot: str | None, digest: str, response: ModelResponse,
               seconds: float) -> None:
        entry = {"digest": digest, "response": response_to_dict(response),
                 "seconds": round(seconds, 4)}
        if slot is None:
            self.other[digest] = entry
        else:
            self.runs.setdefault(slot, []).append(entry)

    def take(self, slot: str | None, digest: str) -> ModelResponse | None:
        """The recorded response to this request in this run (each entry is used once)."""
        if slot is None:
            entry = self.other.get(digest)
            return None if entry is None else response_from_dict(entry["response"])
        used = self._used.setdefault(slot, set())
        for i, entry in enumerate(self.runs.get(slot, ())):
            if i not in used and entry["digest"] == digest:
                used.add(i)
                return response_from_dict(entry["response"])
        return None

    def rewind(self) -> None:
        """Make every recorded call available again (each replay starts here)."""
        self._used.clear()

    def has_slot(self, slot: str) -> bool:
        return slot in self.runs


def cassette_model(inner: Model | None, *, replay: Cassette | None = None,
                   record: Cassette | None = None) -> Model:
    """A model that answers from ``replay`` (if given) and records every call into ``record``.

    With ``replay`` and ``inner`` both given, a request missing from the recording goes to
    ``inner`` (used for the judge: a changed rubric is judged afresh). Without ``inner`` a miss
    is a :class:`CassetteMiss`, which ends that run in ``ERROR`` with the reason.
    """
    if inner is None and replay is None:
        raise ValueError("cassette_model needs a model to record or a cassette to replay")
    return _CassetteModel(inner, replay, record)


class _CassetteModel(Model):
    def __init__(self, inner: Model | None, source: Cassette | None, sink: Cassette | None
                 ) -> None:
        self.inner, self.source, self.sink = inner, source, sink
        if inner is not None:
            self.name, self.context_window = inner.name, inner.context_window
        elif source is not None:
            self.name = source.model or "replay"
            self.context_window = source.context_window
        if sink is not None and inner is not None and not sink.model:
            sink.model, sink.context_window = inner.name, inner.context_window
        elif sink is not None and source is not None and not sink.model:
            sink.model, sink.context_window = source.model, source.context_window

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text) if self.inner is not None else super().count_tokens(
            text)

    def _replayed(self, slot: str | None, digest: str) -> ModelResponse | None:
        if self.source is None:
            return None
        response = self.source.take(slot, digest)
        if response is None and self.inner is None:
            where = f"run {slot}" if slot else "calls made outside a run"
            hint = ("the agent, its tools or the case changed since it was recorded"
                    if slot is None or self.source.has_slot(slot)
                    else "this run was not recorded (more --repeat or a new case?)")
            raise CassetteMiss(f"the cassette has no response to this request in {where}: "
                               f"{hint}; record it again with --record")
        return response

    async def request(self, request: ModelRequest) -> ModelResponse:
        slot, digest = current_slot.get(), request_digest(request)
        started = time.perf_counter()
        response = self._replayed(slot, digest)
        if response is None:
            assert self.inner is not None
            response = await self.inner.request(request)
        if self.sink is not None:
            self.sink.record(slot, digest, response, time.perf_counter() - started)
        return response

    async def stream(self, request: ModelRequest) -> AsyncIterator[TextDelta | ModelResponse]:
        slot, digest = current_slot.get(), request_digest(request)
        started = time.perf_counter()
        response = self._replayed(slot, digest)
        if response is None:
            assert self.inner is not None
            async for item in self.inner.stream(request):
                if isinstance(item, ModelResponse):
                    response = item
                else:
                    yield item
            assert response is not None
        elif response.text:
            yield TextDelta(response.text)
        if self.sink is not None:
            self.sink.record(slot, digest, response, time.perf_counter() - started)
        yield response

    async def aclose(self) -> None:
        if self.inner is not None:
            await self.inner.aclose()
