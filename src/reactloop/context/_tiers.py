"""The compaction tiers (feature M3, seed 003), cheapest first.

Each tier is a plain ``list[Message] -> list[Message]`` function on the neutral messages, so
it works the same for every provider and can be tested on its own. A tier returns its input
list unchanged (the same object) when it has nothing to do; that is how the caller knows the
history — and so the request prefix — did not change.

1. :func:`shorten_tool_results` — old tool results become a head/tail excerpt with a marker.
2. :func:`unload_skills` — skill instructions not mentioned recently become a stub saying how
   to read them again.
3. :class:`Summarize` — old steps are summarized by a model into one message; the last steps
   stay whole.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace

from reactloop.context._units import units
from reactloop.messages import Message

__all__ = ["LOAD_SKILL", "LOAD_SKILL_REFERENCE", "shorten_tool_results", "unload_skills"]

# the names reactloop.skills gives its tools; repeated here so that compaction does not import
# the skills package
LOAD_SKILL = "load_skill"
LOAD_SKILL_REFERENCE = "load_skill_reference"
SKILL_TOOLS = frozenset({LOAD_SKILL, LOAD_SKILL_REFERENCE})
KEEP_WHOLE = frozenset({*SKILL_TOOLS, "update_plan"})
"""Tool results tier 1 leaves alone: skills have their own tier, plans are small and current."""


def _recent_start(messages: Sequence[Message], keep_last: int) -> int:
    """Index of the first message of the last ``keep_last`` units (len when 0)."""
    all_units = units(messages)
    if keep_last <= 0:
        return len(messages)
    if keep_last >= len(all_units):
        return 0
    return all_units[-keep_last].start


def excerpt(text: str, head: int, tail: int) -> str:
    """``text`` cut to its first ``head`` and last ``tail`` characters with a marker between."""
    omitted = len(text) - head - tail
    return (f"{text[:head]}\n[… {omitted} characters omitted to save context; call the tool "
            f"again if you need them …]\n{text[len(text) - tail:] if tail else ''}")


def shorten_tool_results(messages: list[Message], *, keep_last: int = 4, head: int = 800,
                         tail: int = 400) -> list[Message]:
    """Tier 1: tool results older than the last ``keep_last`` steps, longer than
    ``head + tail`` characters (plus room for the marker), become a head/tail excerpt."""
    limit = head + tail + 200  # an excerpt is about head + tail + 120; never grow a message
    stop = _recent_start(messages, keep_last)
    out: list[Message] | None = None
    for i in range(stop):
        m = messages[i]
        if m.role != "tool" or m.name in KEEP_WHOLE or len(m.content) <= limit:
            continue
        if out is None:
            out = list(messages)
        out[i] = replace(m, content=excerpt(m.content, head, tail),
                         metadata={**m.metadata, "compacted": "excerpt"})
    return messages if out is None else out


def _skill_calls(messages: Sequence[Message], stop: int
                 ) -> dict[int, tuple[str, dict[str, object]]]:
    """Index of each skill tool result before ``stop`` -> (tool, arguments) of its call.

    Matched within each unit, because call ids need not be unique across a conversation."""
    out: dict[int, tuple[str, dict[str, object]]] = {}
    for u in units(messages[:stop]):
        calls = {c.id: c for c in messages[u.start].tool_calls if c.name in SKILL_TOOLS}
        for i in range(u.start + 1, u.stop):
            call = calls.get(messages[i].tool_call_id)
            if call is not None:
                out[i] = (call.name, dict(call.arguments))
    return out


def _mentions(messages: Sequence[Message]) -> str:
    parts: list[str] = []
    for m in messages:
        parts.append(m.content)
        for c in m.tool_calls:
            parts.append(c.name + " " + json.dumps(dict(c.arguments), default=str))
    return "\n".join(parts).lower()


def _markers(skill: str, content: str) -> list[str]:
    """What counts as a mention of a skill: its name, its folder (scripts run from there) and
    the tools it added (from the ``load_skill`` text: "Folder: …", "Tools now callable: …")."""
    out = [skill.lower()]
    for line in content.splitlines():
        if line.startswith("Folder: "):
            out.append(line[len("Folder: "):].split(" (", 1)[0].strip().lower())
        elif line.startswith("Tools now callable: ") and "none" not in line:
            out.extend(t.strip().lower() for t in line.split(": ", 1)[1].split(","))
    return [m for m in out if m]


def _stub(tool: str, arguments: dict[str, object]) -> str | None:
    if tool == LOAD_SKILL:
        name = arguments.get("name")
        if not isinstance(name, str):
            return None
        return (f"[The instructions of skill '{name}' were unloaded to save context. To read "
                f"them again, call {LOAD_SKILL_REFERENCE} with skill='{name}' and "
                "path='SKILL.md'. Its tools stay callable.]")
    skill, path = arguments.get("skill"), arguments.get("path")
    if not isinstance(skill, str) or not isinstance(path, str):
        return None
    return (f"[File '{path}' of skill '{skill}' was unloaded to save context. To read it "
            f"again, call {LOAD_SKILL_REFERENCE} with skill='{skill}' and path='{path}'.]")


def unload_skills(messages: list[Message], *, recent: int = 6) -> list[Message]:
    """Tier 2: skill instructions (``load_skill`` results) and skill files
    (``load_skill_reference`` results) whose skill is not mentioned in the last ``recent``
    steps are replaced by a stub that says how to read them again."""
    stop = _recent_start(messages, recent)
    mentioned = _mentions(messages[stop:])
    out: list[Message] | None = None
    for i, (tool, arguments) in _skill_calls(messages, stop).items():
        m = messages[i]
        if m.is_error or m.metadata.get("compacted") == "unloaded":
            continue
        skill = arguments.get("name" if tool == LOAD_SKILL else "skill")
        if not isinstance(skill, str):
            continue
        if any(marker in mentioned for marker in _markers(skill, m.content)):
            continue
        stub = _stub(tool, arguments)
        if stub is None or len(stub) >= len(m.content):
            continue
        if out is None:
            out = list(messages)
        out[i] = replace(m, content=stub, metadata={**m.metadata, "compacted": "unloaded"})
    return messages if out is None else out
