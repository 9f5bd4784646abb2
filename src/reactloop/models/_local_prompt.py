"""The embedded model's prompt (:mod:`reactloop.models.local`): the chat messages llama.cpp
renders, the tool listing, and the answer's cleanup of sentences copied from the loop's notes.
Rendering depends only on the history and the tools listed for the turn, so each prompt extends
the previous one (the KV cache is reused)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from reactloop.messages import Message, ModelRequest, ToolCall, ToolSpec

__all__ = ["brief_skill", "render_messages", "strip_notes", "tool_section"]

_REPEAT_NOTE = re.compile(r"\n\(You already called .*\)\s*$", re.S)
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")
LEAK_SIMILARITY = 0.75


def _loop_texts(request: ModelRequest) -> list[str]:
    """Sentences the loop wrote: notes, reminders, and the note on a repeated call's result."""
    texts = [*request.notes, *(m.content for m in request.messages
                               if m.role == "user" and m.metadata.get("kind"))]
    texts += [found.group(0) for m in request.messages if m.role == "tool"
              if (found := _REPEAT_NOTE.search(m.content))]
    return [" ".join(s.split()).lower().strip("() ") for t in texts for s in _SENTENCE.findall(t)
            if len(s.split()) >= 4]


def strip_notes(answer: str, request: ModelRequest) -> str:
    """``answer`` without the sentences it copied (or nearly copied) from the loop's notes."""
    import difflib

    said = _loop_texts(request)
    if not said:
        return answer.strip()
    kept = []
    for sentence in _SENTENCE.findall(answer):
        text = " ".join(sentence.split()).lower().strip("() ")
        leaked = len(text.split()) >= 4 and any(
            text in note or difflib.SequenceMatcher(None, text, note).ratio() >= LEAK_SIMILARITY
            for note in said)
        if not leaked:
            kept.append(sentence)
    return "".join(kept).strip()


# -- prompt rendering ----------------------------------------------------------------------
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


_SKILL_HEAD = ("# Skill:", "Files (", "Tools now callable", "Tools not added")


def brief_skill(content: str) -> str:
    """A ``load_skill`` result as its head lines only: the skill's name, files and the tools it
    added, without its folder (an absolute path, different in every checkout) and its
    instructions (hundreds of tokens a guided model, steered by the ranked offer, does not
    follow, and which it must read again at every step of the turn)."""
    lines = [line for line in content.splitlines() if line.startswith(_SKILL_HEAD)]
    return "\n".join(lines) if lines and lines[0].startswith("# Skill:") else content


RESULT_CHARS = 1500
"""A guided model reads at most this much of a tool result (its head): a 135M model answers
from the first records, and a 50-row table read whole took 20 s of prompt on 2 cores."""


def _render_tool_result(m: Message, brief_skills: bool) -> str:
    status = "failed" if m.is_error else "returned"
    content = m.content
    if brief_skills and m.name == "load_skill" and not m.is_error:
        content = brief_skill(content)
    elif brief_skills and len(content) > RESULT_CHARS:
        content = (f"{content[:RESULT_CHARS]}\n[… {len(content) - RESULT_CHARS} characters "
                   "omitted]")
    return f"Tool {m.name} {status}: {content}"


def _follow_up(question: str | None, failed: bool) -> str:
    # restating the question right after the result is what makes a tiny model answer
    # instead of calling the same tool again (measured with benchmarks/tasks.py)
    if question is None:
        return "Now answer with this result."
    if failed:
        return f"Fix the call, or answer my question: {question}"
    return f"Now answer my question: {question}"


def render_messages(request: ModelRequest, listed: Sequence[ToolSpec] | None = None, *,
                    extra: Sequence[ToolSpec] = (), brief_skills: bool = False
                    ) -> list[dict[str, str]]:
    """Chat messages for llama.cpp. Rendering depends only on the history and the tools listed
    for the turn, never on the iteration, so each prompt extends the previous one. ``extra``
    tools (a follow-up step's) are listed after the latest message, not in the system
    message: the prefix llama.cpp's KV cache holds stays valid. With ``brief_skills`` a
    ``load_skill`` result shows only its head (:func:`brief_skill`)."""
    tools = request.all_tools if listed is None else listed
    system = "\n\n".join(p for p in (request.system, tool_section(tools)) if p)
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
            _merge_user(out, _render_tool_result(m, brief_skills))
            last_of_batch = i + 1 == len(messages) or messages[i + 1].role != "tool"
            if last_of_batch:
                _merge_user(out, _follow_up(question, m.is_error))
        else:
            if m.role == "user" and not m.metadata.get("kind"):
                question = m.content
            _merge_user(out, m.content)
    if extra:
        _merge_user(out, "You can call now:\n" + "\n".join(_signature(t) for t in extra))
    return out


def _merge_user(out: list[dict[str, str]], text: str) -> None:
    # consecutive user turns are merged: small chat models expect strict alternation
    if out and out[-1]["role"] == "user":
        out[-1]["content"] += "\n\n" + text
    else:
        out.append({"role": "user", "content": text})
