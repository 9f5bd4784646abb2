"""Skills: progressive disclosure through the tool registry (features K1, K2).

Level 1 is the catalog, level 2 ``load_skill`` (instructions, files, tools.py tools), level 3
``load_skill_reference`` (one file, confined to the skill's folder).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from reactloop import Message, Tool, ToolCall, ToolResult, UserError
from reactloop.skills import SkillSet, loaded_in
from reactloop.tools import ToolRegistry

TOOLS_PY = '''
from reactloop import ToolContext, tool

from .helpers import double


@tool
def triple(x: int) -> int:
    """Multiply by three.

    Args:
        x: the number
    """
    return x * 3


@tool(name="double_it")
def _double(x: int, ctx: ToolContext) -> int:
    """Multiply by two."""
    ctx.emit("progress", {"x": x})
    return double(x)


alias = triple  # the same Tool twice counts once


def not_a_tool() -> None:
    pass
'''


def make(root: Path, name: str, description: str = "Does things.", body: str = "Step 1.",
         tools_py: str | None = None) -> Path:
    d = root / name
    d.mkdir(parents=True)
    (d / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n{body}\n",
                                encoding="utf-8")
    if tools_py is not None:
        (d / "tools.py").write_text(tools_py, encoding="utf-8")
    return d


class Recorder:
    """Plays the loop's part: records what tools emit and add, and makes added tools callable."""

    def __init__(self, skills: SkillSet) -> None:
        self.registry = ToolRegistry(skills.tools())
        self.events: list[tuple[str, Any]] = []
        self.added: list[str] = []
        self.states: dict[str, dict[str, Any]] = {}  # each run's extension state

    def emit(self, name: str, data: Any = None) -> None:
        self.events.append((name, data))

    def add_tools(self, tools: Sequence[Tool]) -> None:
        for t in tools:
            self.added.append(t.name)
            if t.name not in self.registry:
                self.registry.add(t)

    def call(self, tool_name: str, /, run_id: str = "run-1", **arguments: Any) -> ToolResult:
        results = asyncio.run(self.registry.execute(
            [ToolCall(tool_name, arguments, "c1")], run_id=run_id, emit=self.emit,
            add_tools=self.add_tools, state=self.states.setdefault(run_id, {})))
        return results[0]


@pytest.fixture
def lib(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    calc = make(root, "calc", "Arithmetic helpers. Use for sums.", "# Calc\nUse triple.",
                tools_py=TOOLS_PY)
    (calc / "helpers.py").write_text("def double(x: int) -> int:\n    return 2 * x\n",
                                     encoding="utf-8")
    (calc / "references").mkdir()
    (calc / "references" / "guide.md").write_text("# Guide\nMultiply carefully.\n",
                                                  encoding="utf-8")
    make(root, "writer", "Writing help.\n  Use for prose.", "# Writer\nWrite well.")
    return root


# -- level 1 ---------------------------------------------------------------------------------
def test_catalog_lists_every_skill_sorted_and_is_stable(lib: Path) -> None:
    skills = SkillSet.discover([lib])
    text = skills.catalog_text()
    assert text.splitlines()[-2:] == ["- calc: Arithmetic helpers. Use for sums.",
                                      "- writer: Writing help. Use for prose."]
    assert "load_skill" in text and "load_skill_reference" in text
    assert "Multiply" not in text  # no instructions at level 1
    assert SkillSet.discover([lib]).catalog_text() == text


def test_tools_are_the_two_disclosure_tools(lib: Path) -> None:
    specs = [t.spec() for t in SkillSet.discover([lib]).tools()]
    assert [s.name for s in specs] == ["load_skill", "load_skill_reference"]
    assert list(specs[0].parameters["properties"]) == ["name"]  # ctx is not in the schema
    assert specs[1].parameters["required"] == ["skill", "path"]


# -- level 2 ---------------------------------------------------------------------------------
def test_load_skill_returns_body_files_and_registers_tools(lib: Path) -> None:
    rec = Recorder(SkillSet.discover([lib]))
    assert "triple" not in rec.registry
    r = rec.call("load_skill", name="calc")
    assert r.error is None
    text = r.result
    assert text.startswith("# Skill: calc\n")
    assert f"Folder: {(lib / 'calc').resolve()}" in text
    assert "# Calc\nUse triple." in text
    assert "SKILL.md, helpers.py, references/guide.md, tools.py" in text
    assert "Tools now callable: triple, double_it" in text
    assert rec.added == ["triple", "double_it"]
    assert rec.events == [("skill_loaded", {"skill": "calc", "tools": ["triple", "double_it"]})]
    # the new tools work, relative imports inside the skill included, and they get a context
    assert rec.call("triple", x=4).result == 12
    assert rec.call("double_it", x=4).result == 8
    assert rec.events[-1] == ("progress", {"x": 4})


def test_loading_again_in_the_same_run_answers_with_a_short_note(lib: Path) -> None:
    rec = Recorder(SkillSet.discover([lib]))
    full = rec.call("load_skill", name="calc").result
    again = rec.call("load_skill", name="calc").result
    assert "already loaded" in again and "triple, double_it" in again
    assert len(again) < len(full) and "Use triple." not in again
    assert rec.added == ["triple", "double_it"]  # not added twice
    # another run (a fresh conversation) gets the full body again
    assert rec.call("load_skill", run_id="run-2", name="calc").result == full


def test_unknown_skill_lists_the_available_ones(lib: Path) -> None:
    r = Recorder(SkillSet.discover([lib])).call("load_skill", name="calculator")
    assert r.error == "Unknown skill 'calculator'. Available skills: calc, writer."


def test_skill_without_tools_py(lib: Path) -> None:
    rec = Recorder(SkillSet.discover([lib]))
    text = rec.call("load_skill", name="writer").result
    assert "Write well." in text and "Tools now callable" not in text
    assert rec.added == []


def test_tools_py_is_imported_only_when_loaded_and_only_once(tmp_path: Path) -> None:
    d = make(tmp_path, "counted", tools_py=(
        "from pathlib import Path\nfrom reactloop import tool\n"
        "with Path(__file__).with_name('imports.log').open('a') as f:\n    f.write('x')\n\n"
        "@tool\ndef ping() -> str:\n    \"\"\"Ping.\"\"\"\n    return 'pong'\n"))
    log = d / "imports.log"
    skills = SkillSet.discover([tmp_path])
    skills.catalog_text()
    assert not log.exists()
    first = skills.skill_tools("counted")
    assert log.read_text() == "x"
    assert [t.name for t in first] == ["ping"]
    assert first[0] is skills.skill_tools("counted")[0]
    Recorder(skills).call("load_skill", name="counted")
    assert log.read_text() == "x"


def test_two_skills_with_the_same_file_names_get_separate_modules(tmp_path: Path) -> None:
    for name, factor in (("one", 1), ("two", 2)):
        d = make(tmp_path, name, tools_py=(
            "from reactloop import tool\nfrom .helpers import F\n\n@tool(name='f_"
            f"{name}')\ndef f() -> int:\n    \"\"\"F.\"\"\"\n    return F\n"))
        (d / "helpers.py").write_text(f"F = {factor}\n", encoding="utf-8")
    skills = SkillSet.discover([tmp_path])
    assert skills.skill_tools("one")[0]() == 1
    assert skills.skill_tools("two")[0]() == 2


def test_broken_tools_py_is_a_clear_error(tmp_path: Path) -> None:
    make(tmp_path, "broken", tools_py="x = 1 / 0\n")
    skills = SkillSet.discover([tmp_path])
    with pytest.raises(UserError, match=r"tools.py: importing the skill's tools failed with "
                                        r"ZeroDivisionError.*fix tools.py"):
        skills.skill_tools("broken")
    rec = Recorder(skills)
    r = rec.call("load_skill", name="broken")
    assert r.error is not None and "ZeroDivisionError" in r.error
    assert skills.loaded(rec.states["run-1"]) == []  # a failed load does not count


def test_tool_name_clash_between_skills_is_reported(tmp_path: Path) -> None:
    src = "from reactloop import tool\n\n@tool\ndef lookup() -> str:\n    \"\"\"L.\"\"\"\n    " \
          "return '{}'\n"
    make(tmp_path, "first", tools_py=src.format("first"))
    make(tmp_path, "second", tools_py=src.format("second"))
    rec = Recorder(SkillSet.discover([tmp_path]))
    rec.call("load_skill", name="first")
    text = rec.call("load_skill", name="second").result
    assert "Tools not added because of a name clash: lookup (name taken by first)" in text
    assert rec.call("lookup").result == "first"


def test_restore_brings_back_skills_loaded_in_earlier_turns(lib: Path) -> None:
    history = [
        Message.user("triple 3"),
        Message.assistant(tool_calls=[ToolCall("load_skill", {"name": "calc"}, "a"),
                                      ToolCall("load_skill", {"name": "nope"}, "b"),
                                      ToolCall("load_skill", {"name": "writer"}, "c")]),
        Message.tool("a", "load_skill", "# Skill: calc ..."),
        Message.tool("b", "load_skill", "Error: Unknown skill", is_error=True),
        # the writer call has no result (e.g. pruned): it does not count
        Message.assistant("9"),
    ]
    assert loaded_in(history) == ["calc"]
    skills = SkillSet.discover([lib])
    state: dict[str, Any] = {}
    restored = skills.restore(state, history)
    assert [t.name for t in restored] == ["triple", "double_it"]
    assert skills.loaded(state) == ["calc"]
    text, added = skills.load("calc", state)
    assert "already loaded" in text and added == []


# -- level 3 ---------------------------------------------------------------------------------
def test_reference_reads_one_file(lib: Path) -> None:
    rec = Recorder(SkillSet.discover([lib]))
    r = rec.call("load_skill_reference", skill="calc", path="references/guide.md")
    assert r.result == "# Guide\nMultiply carefully.\n"
    assert rec.call("load_skill_reference", skill="calc", path="./SKILL.md").result.startswith(
        "---\nname: calc")


@pytest.mark.parametrize(
    "path",
    ["references/missing.md", "../writer/SKILL.md", "references/../../writer/SKILL.md",
     "/etc/passwd", "references", "", "escape.md", "escape_dir/secret.txt"],
)
def test_reference_paths_are_confined(lib: Path, tmp_path: Path, path: str) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("TOP SECRET", encoding="utf-8")
    os.symlink(outside / "secret.txt", lib / "calc" / "escape.md")
    os.symlink(outside, lib / "calc" / "escape_dir", target_is_directory=True)
    rec = Recorder(SkillSet.discover([lib]))
    r = rec.call("load_skill_reference", skill="calc", path=path)
    assert r.error is not None and "TOP SECRET" not in r.content
    assert r.error.startswith(f"No file '{path}' in skill 'calc'")
    assert "cannot leave it" in r.error
    # the answer lists the files that exist, and not the links that lead out
    assert r.error.endswith("Files: SKILL.md, helpers.py, references/guide.md, tools.py.")


def test_symlink_inside_the_skill_is_allowed(lib: Path) -> None:
    os.symlink(lib / "calc" / "references" / "guide.md", lib / "calc" / "guide-link.md")
    rec = Recorder(SkillSet.discover([lib]))
    assert "Multiply" in rec.call("load_skill_reference", skill="calc",
                                  path="guide-link.md").result


def test_reference_of_unknown_skill(lib: Path) -> None:
    r = Recorder(SkillSet.discover([lib])).call("load_skill_reference", skill="x", path="a")
    assert r.error == "Unknown skill 'x'. Available skills: calc, writer."


def test_binary_and_long_files(lib: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (lib / "calc" / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0")
    (lib / "calc" / "big.txt").write_text("y" * 50, encoding="utf-8")
    from reactloop.skills import _set

    monkeypatch.setattr(_set, "MAX_REFERENCE_CHARS", 20)
    skills = SkillSet.discover([lib])
    assert "binary file (11 bytes)" in skills.read_reference("calc", "logo.png")
    assert skills.read_reference("calc", "big.txt") == "y" * 20 + (
        "\n\n[... 30 more characters not shown]")
