"""Splitting a ``SKILL.md`` into its YAML front matter and its Markdown body."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from reactloop.errors import UserError

__all__ = ["split_front_matter"]

_FENCE = re.compile(r"^---[ \t]*$")
# a top-level ``key: value`` line whose plain (unquoted) value holds ": " — valid for humans and
# for many real SKILL.md files, invalid YAML ("mapping values are not allowed here")
_PLAIN_WITH_COLON = re.compile(r"^([A-Za-z0-9_-]+):[ \t]+([^'\"\s|>&*!%@`{\[#][^\n]*:\s[^\n]*)$")
# a top-level field line, for front matter read line by line when it is not valid YAML
_KEY_LINE = re.compile(r"^([A-Za-z0-9_-]+):(?:[ \t]+(.*))?$")


def split_front_matter(text: str, path: Path, notes: list[str] | None = None
                       ) -> tuple[dict[str, Any], str]:
    """The front matter as a dict and the body after it.

    Front matter that is not valid YAML is read line by line (top-level ``key: value`` lines,
    indented lines continuing the value), and a sentence saying so is appended to ``notes``.
    Raises :class:`UserError` naming ``path`` when there is no front matter, it is not closed,
    or it is not a mapping (nor readable line by line).
    """
    lines = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if not lines or not _FENCE.match(lines[0]):
        raise UserError(
            f"{path}: no YAML front matter. Start the file with a line '---', then "
            "'name: <skill-name>' and 'description: <what it does and when to use it>', "
            "then a closing '---' line"
        )
    end = next((i for i in range(1, len(lines)) if _FENCE.match(lines[i])), None)
    if end is None:
        raise UserError(
            f"{path}: the YAML front matter is not closed. Add a line '---' after the "
            "last front matter field"
        )
    yaml_text = "\n".join(lines[1:end])
    body = "\n".join(lines[end + 1 :]).strip("\n")
    data = _parse_yaml(yaml_text, path, [] if notes is None else notes)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise UserError(
            f"{path}: the front matter must be a YAML mapping of fields (name: ..., "
            f"description: ...), got {type(data).__name__}"
        )
    return {str(k): v for k, v in data.items()}, body


def _parse_yaml(text: str, path: Path, notes: list[str]) -> Any:
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        first_error = exc
    # we accept `description: Use when: ...` (an unquoted colon), which real skills contain
    # and other loaders tolerate, by quoting such values and trying once more
    repaired = "\n".join(_quote_plain_colon(line) for line in text.split("\n"))
    if repaired != text:
        try:
            return yaml.safe_load(repaired)
        except yaml.YAMLError:
            pass
    where = ""
    mark = getattr(first_error, "problem_mark", None)
    if mark is not None:
        where = f" (front matter line {mark.line + 1}, column {mark.column + 1})"
    problem = getattr(first_error, "problem", None) or str(first_error)
    # hand-written front matter often breaks YAML's quoting rules ("a "quoted" word", a
    # stray bracket) while its fields are plain to read: read those rather than give up
    lines = _read_lines(text)
    if lines:
        notes.append(f"the front matter is not valid YAML{where}: {problem}; it was read line "
                     "by line")
        return lines
    raise UserError(
        f"{path}: the front matter is not valid YAML{where}: {problem}. Quote values that "
        "contain ': ' or start with a special character, e.g. description: \"...\""
    ) from None


def _read_lines(text: str) -> dict[str, str]:
    """Top-level ``key: value`` lines; indented lines continue the previous value."""
    data: dict[str, str] = {}
    key = None
    for line in text.split("\n"):
        m = _KEY_LINE.match(line)
        if m is not None:
            key = m.group(1)
            data[key] = (m.group(2) or "").strip()
        elif key is not None and line[:1] in (" ", "\t") and line.strip():
            data[key] = (data[key] + " " + line.strip()).strip()
        elif line.strip() and not line.lstrip().startswith("#"):
            return {}  # not a simple list of fields after all
    return {k: _unquote(v) for k, v in data.items()}


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _quote_plain_colon(line: str) -> str:
    m = _PLAIN_WITH_COLON.match(line)
    if m is None:
        return line
    value = m.group(2).rstrip().replace("\\", "\\\\").replace('"', '\\"')
    return f'{m.group(1)}: "{value}"'
