"""A set of skills as a tool source: the catalog (level 1), ``load_skill`` (level 2) and
``load_skill_reference`` (level 3) — progressive disclosure, features K1 and K2.

Nothing here rewrites the request prefix: the catalog is built once and goes in the stable
system prompt; a skill's instructions come back as the ``load_skill`` tool result (so they stay
in the conversation for later iterations and turns); its Python tools are *appended* to the
run's tools through :meth:`ToolContext.add_tools`.

Skills are trusted code. A skill's ``tools.py`` is imported into this process when the skill is
loaded, with the same rights as the program running the agent; only use skill folders you
would run yourself.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import importlib.util
import os
import re
import sys
import threading
import traceback
import types
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from reactloop.errors import ToolRetry, UserError
from reactloop.extensions import Extension
from reactloop.messages import Message, ToolSpec
from reactloop.result import ToolResult
from reactloop.run_context import RunContext
from reactloop.skills._documents import document_phrases, document_terms
from reactloop.skills._names import (
    NAMES_MARK,
    TERMS_MARK,
    WORDS_MARK,
    data_names,
    data_terms,
    data_words,
)
from reactloop.skills._skill import MAX_FILES_LISTED, Skill, discover_skills
from reactloop.tools._tool import Tool, ToolContext

__all__ = ["LOAD_SKILL", "LOAD_SKILL_REFERENCE", "SkillSet"]

LOAD_SKILL = "load_skill"
LOAD_SKILL_REFERENCE = "load_skill_reference"
MAX_REFERENCE_CHARS = 100_000
"""A file longer than this is cut (with a note saying so) when read with level 3."""

CATALOG_INTRO = (
    "## Skills\n"
    "Skills hold instructions, files and sometimes tools for specific tasks. When a request "
    f"matches a skill below, call {LOAD_SKILL} with its name before acting and follow the "
    f"instructions it returns; read one of the skill's files with {LOAD_SKILL_REFERENCE}."
)


def _run_state(state: dict[str, Any]) -> dict[str, Any]:
    """This run's skills state in ``state`` (the run's extension state): ``{"loaded": [skill
    names in load order], "owners": {tool name: skill}}``, JSON data so it saves with the run."""
    st = state.get(SkillSet.key)
    if not isinstance(st, dict):
        st = state[SkillSet.key] = {"loaded": [], "owners": {}}
    st.setdefault("loaded", [])
    st.setdefault("owners", {})
    return st


class SkillSet(Extension):
    """Skills an agent can use, and the two tools that disclose them.

    ``Agent(skills=[dir, ...])`` builds one with :meth:`discover`, puts :meth:`catalog_text` in
    the system prompt and registers :meth:`tools`. What a run has loaded is kept in the run's
    state (``ctx.state["skills"]``), never here. Skills are trusted code (see the module
    docstring).
    """

    key = "skills"

    def __init__(self, skills: Iterable[Skill]) -> None:
        self._skills: dict[str, Skill] = {}
        for s in sorted(skills, key=lambda s: s.name):
            other = self._skills.get(s.name)
            if other is not None and other.path != s.path:
                raise UserError(f"two skills are named {s.name!r}: {other.path} and {s.path}; "
                                "remove one of them or give it another name (and folder name)")
            self._skills[s.name] = s
        self._lock = threading.Lock()  # guards the import cache only
        self._skill_tools: dict[str, list[Tool]] = {}
        self._tools = [
            _LoadSkill(self._load_skill_tool(), self._choices, name=LOAD_SKILL,
                       repeatable=True, internal=True, origin="reactloop.skills"),
            Tool(self._reference_tool(), name=LOAD_SKILL_REFERENCE, repeatable=True,
                 internal=True, origin="reactloop.skills"),
        ]

    @classmethod
    def discover(cls, dirs: Iterable[str | os.PathLike[str]]) -> SkillSet:
        """Every skill folder under ``dirs`` (see :func:`discover_skills`)."""
        return cls(discover_skills(dirs))

    # -- the collection ----------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._skills)

    def __iter__(self) -> Iterator[Skill]:
        return iter(self._skills.values())

    def __contains__(self, name: object) -> bool:
        return name in self._skills

    @property
    def names(self) -> list[str]:
        """Skill names, sorted."""
        return list(self._skills)

    def get(self, name: str) -> Skill:
        """The skill called ``name``; :class:`ToolRetry` listing the skills if there is none."""
        skill = self._skills.get(name)
        if skill is None:
            raise ToolRetry(f"Unknown skill '{name}'. Available skills: "
                            f"{', '.join(self._skills) or '(none)'}.")
        return skill

    # -- level 1 -----------------------------------------------------------------------------
    def catalog_text(self) -> str:
        """Name and description of every skill, sorted by name, for the system prompt.

        The text depends only on the skills, so it is byte-identical across runs."""
        lines = [f"- {s.name}: {s.description}" for s in self._skills.values()]
        return CATALOG_INTRO + "\n\n" + "\n".join(lines)

    def tools(self) -> list[Tool]:
        """``load_skill`` and ``load_skill_reference``, bound to this set."""
        return list(self._tools)

    def system_sections(self) -> Mapping[str, str]:
        return {"skills": self.catalog_text()}

    def later_tools(self) -> list[Tool]:
        """Every skill's tools (what ``load_skill`` may add); a skill whose ``tools.py`` fails
        to import is left out here: loading it fails in the run, with the reason."""
        out: list[Tool] = []
        for skill in self:
            try:
                out += self.skill_tools(skill.name)
            except UserError:
                continue
        return out

    def _choices(self) -> tuple[tuple[str, str], ...]:
        """Each skill with what it brings: its description, its tools' names and summaries
        (imports every skill's ``tools.py``; a model that ranks skills like tools reads it), the
        headings and table labels of its documents, and the names its data files hold with the
        labels of two words or more of its documents (after ``NAMES_MARK``; all cached per
        skill)."""
        out = []
        for skill in self:
            try:
                tools = self.skill_tools(skill.name)
            except UserError:
                tools = []
            about = [f"{t.name}: {t.description.splitlines()[0] if t.description else ''}"
                     for t in tools]
            # what its documents are about ("carry-on" of fare_rules.md's table) ranks it too
            text = " ".join([skill.description, *about, *_document_sentences(skill.body),
                             *document_terms(skill.path)])
            # "Cafe Aroma" of its data, "checked bags" of its documents' tables: a question
            # naming one is this skill's
            names = data_names(skill.path) + document_phrases(skill.path)
            words = data_words(skill.path)  # "doctor": what its search finds, by name
            said = data_terms(skill.path)  # "fries" of a place's description
            out.append((skill.name, text + (NAMES_MARK + "; ".join(names) if names else "")
                        + (WORDS_MARK + "; ".join(words) if words or said else "")
                        + (TERMS_MARK + " ".join(said) if said else "")))
        return tuple(out)

    # -- the extension hooks -----------------------------------------------------------------
    async def start(self, ctx: RunContext) -> None:
        """Skills loaded earlier (in the history, or in a saved run's state) stay loaded:
        their tools are callable again without reloading."""
        st = _run_state(ctx.state)
        ctx.add_tools(self.restore(ctx.state, ctx.messages))
        for name in st["loaded"]:
            if name in self._skills:
                ctx.add_tools([t for t in self.skill_tools(name)
                               if st["owners"].get(t.name) == name])

    def after_tools(self, ctx: RunContext, results: Sequence[ToolResult]) -> None:
        """A ``load_skill`` that ran elsewhere (a workflow activity) is recorded here too."""
        for r in results:
            if r.name != LOAD_SKILL or r.error is not None or r.cached:
                continue
            name = r.arguments.get("name")
            if isinstance(name, str) and name in self._skills:
                _, added = self.load(name, ctx.state)
                ctx.add_tools(added)

    # -- level 2 -----------------------------------------------------------------------------
    def skill_tools(self, name: str) -> list[Tool]:
        """The ``@tool`` objects of the skill's ``tools.py`` (imported once, on first use).

        Raises :class:`UserError` when importing ``tools.py`` fails."""
        skill = self.get(name)
        with self._lock:
            cached = self._skill_tools.get(name)
            if cached is None:
                cached = self._skill_tools[name] = _import_tools(skill)
            return list(cached)

    def load(self, name: str, state: dict[str, Any]) -> tuple[str, list[Tool]]:
        """Level 2 for one run: the text ``load_skill`` answers and the tools to add.

        ``state`` is the run's extension state (``ctx.state``); a skill already loaded there
        answers with a short note and no tools."""
        skill = self.get(name)
        st = _run_state(state)
        if name in st["loaded"]:
            made = [t for t, owner in st["owners"].items() if owner == name]
            tools_note = f" Its tools are callable: {', '.join(made)}." if made else ""
            return (f"Skill '{name}' is already loaded; its instructions are earlier in this "
                    f"conversation.{tools_note}"), []
        tools = self.skill_tools(name)
        added, clashes = self._claim(st, name, tools)
        st["loaded"].append(name)
        return _describe_load(skill, added, clashes), added

    def restore(self, state: dict[str, Any], messages: Sequence[Message]) -> list[Tool]:
        """Mark the skills loaded earlier in ``messages`` as loaded in ``state`` (a run's
        extension state) and return their tools, so a later turn of a conversation can call
        them without reloading.

        A load counts when an assistant called ``load_skill`` and its tool result is no error.
        """
        st = _run_state(state)
        out: list[Tool] = []
        for name in loaded_in(messages, self._skills):
            if name in st["loaded"]:
                continue
            added, _ = self._claim(st, name, self.skill_tools(name))
            st["loaded"].append(name)
            out.extend(added)
        return out

    def loaded(self, state: Mapping[str, Any]) -> list[str]:
        """Names of the skills loaded in a run (``state``: its ``ctx.state``), in load order."""
        st = state.get(self.key)
        return list(st.get("loaded", ())) if isinstance(st, Mapping) else []

    # -- level 3 -----------------------------------------------------------------------------
    def read_reference(self, skill_name: str, path: str) -> str:
        """The text of one file of a skill, confined to the skill's folder.

        A path that is missing or leaves the folder raises :class:`ToolRetry` listing the
        files that exist."""
        skill = self.get(skill_name)
        target = skill.resolve_file(path.strip())
        if target is None:
            raise ToolRetry(
                f"No file '{path}' in skill '{skill_name}' (paths are relative to the skill's "
                f"folder and cannot leave it). Files: {_file_list(skill)}."
            )
        data = target.read_bytes()
        if b"\0" in data[:8192]:
            return (f"'{path}' is a binary file ({len(data)} bytes) and cannot be shown as "
                    "text; use it through the skill's scripts or tools.")
        text = data.decode("utf-8", errors="replace")
        if len(text) > MAX_REFERENCE_CHARS:
            cut = len(text) - MAX_REFERENCE_CHARS
            text = text[:MAX_REFERENCE_CHARS] + f"\n\n[... {cut} more characters not shown]"
        return text

    # -- internals ---------------------------------------------------------------------------
    def _claim(self, st: dict[str, Any], name: str, tools: Sequence[Tool]
               ) -> tuple[list[Tool], list[str]]:
        """Give ``name`` the tools whose names are free in this run; report the rest."""
        added: list[Tool] = []
        clashes: list[str] = []
        reserved = {t.name for t in self._tools}
        owners: dict[str, str] = st["owners"]
        for t in tools:
            owner = owners.get(t.name)
            if t.name in reserved or (owner is not None and owner != name):
                clashes.append(f"{t.name} (name taken by {owner or 'reactloop'})")
                continue
            owners[t.name] = name
            added.append(t)
        return added, clashes

    def _load_skill_tool(self) -> Callable[..., Any]:
        async def load_skill(name: str, ctx: ToolContext) -> str:
            """Load a skill's full instructions, its file list and the tools it provides.

            Call it before working on a task that matches a skill in the skills catalog.

            Args:
                name: the skill's name, exactly as in the skills catalog.
            """
            state = ctx.state if ctx is not None else {}
            # importing a skill's tools.py may block; keep the event loop free meanwhile
            text, added = await asyncio.to_thread(self.load, name, state)
            if added and ctx is not None:
                ctx.add_tools(added)
            if ctx is not None:
                ctx.emit("skill_loaded", {"skill": name, "tools": [t.name for t in added]})
            return text

        return load_skill

    def _reference_tool(self) -> Callable[..., Any]:
        def load_skill_reference(skill: str, path: str) -> str:
            """Read one file of a skill (a reference document, a script, a data file).

            Args:
                skill: the skill's name.
                path: the file's path relative to the skill's folder, as listed by
                    load_skill (e.g. 'references/guide.md').
            """
            return self.read_reference(skill, path)

        return load_skill_reference


class _LoadSkill(Tool):
    """``load_skill``, whose spec lists the skills as its choices (built on first use)."""

    def __init__(self, fn: Callable[..., Any], choices: Callable[[], tuple[tuple[str, str], ...]],
                 **kwargs: Any) -> None:
        super().__init__(fn, **kwargs)
        self._choices = choices
        self._with_choices: ToolSpec | None = None

    def spec(self) -> ToolSpec:
        if self._with_choices is None:
            self._with_choices = dataclasses.replace(super().spec(), choices=self._choices())
        return self._with_choices


def _file_list(skill: Skill) -> str:
    files = skill.files()
    shown = ", ".join(files[:MAX_FILES_LISTED])
    if len(files) > MAX_FILES_LISTED:
        shown += f", … and {len(files) - MAX_FILES_LISTED} more"
    return shown or "(none)"


def _describe_load(skill: Skill, added: Sequence[Tool], clashes: Sequence[str]) -> str:
    parts = [
        f"# Skill: {skill.name}",
        f"Folder: {skill.path} (relative paths in these instructions are relative to it)",
        "",
        skill.body.strip() or "(this skill has no instructions beyond its description)",
        "",
        f"Files (read one with {LOAD_SKILL_REFERENCE}): {_file_list(skill)}",
    ]
    if added:
        parts.append(f"Tools now callable: {', '.join(t.name for t in added)}")
    elif skill.tools_file is not None:
        parts.append("Tools now callable: none (tools.py defines no @tool objects)")
    if clashes:
        parts.append(f"Tools not added because of a name clash: {', '.join(clashes)}")
    return "\n".join(parts)


def loaded_in(messages: Sequence[Message], known: Mapping[str, Skill] | None = None
              ) -> list[str]:
    """Skill names that ``load_skill`` loaded successfully in ``messages``, in order."""
    calls: dict[str, str] = {}
    ok: set[str] = set()
    for m in messages:
        if m.role == "assistant":
            for c in m.tool_calls:
                name = c.arguments.get("name") if c.name == LOAD_SKILL else None
                if isinstance(name, str) and c.id is not None:
                    calls[c.id] = name
        elif m.role == "tool" and not m.is_error and m.tool_call_id in calls:
            ok.add(m.tool_call_id)
    out: list[str] = []
    for call_id, name in calls.items():
        if call_id in ok and name not in out and (known is None or name in known):
            out.append(name)
    return out


def _import_tools(skill: Skill) -> list[Tool]:
    """Import the skill's ``tools.py`` as ``<package>.tools`` of a package rooted at the skill's
    folder, so ``from .helpers import x`` works inside it; collect its :class:`Tool` objects."""
    path = skill.tools_file
    if path is None:
        return []
    digest = hashlib.sha256(str(skill.path).encode()).hexdigest()[:10]
    package = f"reactloop_skill_{skill.name.replace('-', '_')}_{digest}"
    if package not in sys.modules:
        pkg = types.ModuleType(package, f"Skill {skill.name!r} ({skill.path})")
        pkg.__path__ = [str(skill.path)]
        pkg.__package__ = package
        sys.modules[package] = pkg
    module_name = f"{package}.tools"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise UserError(f"{path}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[module_name]
        where = traceback.extract_tb(exc.__traceback__)[-1]
        raise UserError(
            f"{path}: importing the skill's tools failed with {type(exc).__name__}: {exc} "
            f"(at {where.filename}:{where.lineno}); fix tools.py"
        ) from exc
    tools: list[Tool] = []
    for value in vars(module).values():
        if isinstance(value, Tool) and all(value is not t for t in tools):
            tools.append(value)
    return tools


_DOC_SENTENCE = re.compile(r"[^.!?\n]*(?:\n(?!\n)[^.!?\n]*)*?[\w/-]+\.(?:md|txt|rst)\b"
                           r"(?:[^.!?\n]|\.(?=\w))*")


def _document_sentences(body: str) -> list[str]:
    """The sentences of a skill's instructions that name one of its documents ("For baggage,
    changes and refunds, read references/fare_rules.md"): what its documents answer, which a
    question about it ("the baggage allowance") matches."""
    return [" ".join(m.group(0).split()) for m in _DOC_SENTENCE.finditer(body)
            if "SKILL.md" not in m.group(0)]
