"""Workspace file tools (T5): read_file, list_dir, grep, and confinement to the workspace.

Every call goes through ``ToolRegistry.execute``, as in a run, so errors are checked as the
model sees them: error results, never exceptions.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from reactloop import ToolCall
from reactloop.result import ToolResult
from reactloop.tools import ToolRegistry
from reactloop.tools import workspace as workspace_module
from reactloop.tools.workspace import Workspace, find_ripgrep

SECRET = "TOP-SECRET-OUTSIDE"


def execute(ws: Workspace, name: str, **arguments: Any) -> ToolResult:
    [result] = asyncio.run(ToolRegistry(ws.tools()).execute([ToolCall(name, arguments, "c1")]))
    return result


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A workspace next to an ``outside`` folder, with symlinks from one into the other."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(f"{SECRET}\n")
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "notes.txt").write_text("alpha\nbeta\ngamma\n")
    (ws / "src" / "app.py").write_text("def main():\n    return 'Needle'\n")
    (ws / "src" / "util.py").write_text("NEEDLE = 1\n")
    (ws / ".hidden").write_text("needle in a hidden file\n")
    (ws / "link_file").symlink_to(outside / "secret.txt")
    (ws / "link_dir").symlink_to(outside, target_is_directory=True)
    (ws / "inner_link").symlink_to(ws / "notes.txt")
    return ws


@pytest.fixture
def ws(root: Path) -> Workspace:
    return Workspace(root)


def assert_denied(result: ToolResult, ws: Workspace) -> None:
    assert result.error is not None, result.content
    assert result.error.startswith("Access denied")
    assert f"outside the workspace {ws.root}" in result.error  # names the root
    assert SECRET not in result.content


# -- confinement -----------------------------------------------------------------------------
ESCAPES = [
    pytest.param("../outside/secret.txt", "'..' climbs out", id="dotdot"),
    pytest.param("src/../../outside/secret.txt", "'..' climbs out", id="dotdot-nested"),
    pytest.param("link_file", "a symlink leads out", id="symlink-file"),
    pytest.param("link_dir/secret.txt", "a symlink leads out", id="through-symlink-dir"),
]


@pytest.mark.parametrize(("path", "why"), ESCAPES)
def test_read_file_refuses_escapes(ws: Workspace, path: str, why: str) -> None:
    result = execute(ws, "read_file", path=path)
    assert_denied(result, ws)
    assert why in result.content


def test_absolute_path_outside_is_refused(ws: Workspace, root: Path) -> None:
    target = root.parent / "outside" / "secret.txt"
    result = execute(ws, "read_file", path=str(target))
    assert_denied(result, ws)
    assert "an absolute path outside it" in result.content
    assert_denied(execute(ws, "read_file", path="/etc/passwd"), ws)


def test_absolute_path_inside_and_inner_symlink_are_fine(ws: Workspace, root: Path) -> None:
    assert "alpha" in execute(ws, "read_file", path=str(root / "notes.txt")).content
    assert "beta" in execute(ws, "read_file", path="inner_link").content
    assert "gamma" in execute(ws, "read_file", path="src/../notes.txt").content


@pytest.mark.parametrize("path", ["..", "/", "link_dir", "../outside"])
def test_list_dir_refuses_escapes(ws: Workspace, path: str) -> None:
    assert_denied(execute(ws, "list_dir", path=path), ws)


@pytest.mark.parametrize("path", ["..", "link_dir", "link_file", "../outside", "/tmp"])
def test_grep_refuses_escapes(ws: Workspace, path: str) -> None:
    assert_denied(execute(ws, "grep", pattern="SECRET", path=path), ws)


def test_symlink_created_in_a_subfolder_is_refused(ws: Workspace, root: Path) -> None:
    (root / "src" / "up").symlink_to(root.parent, target_is_directory=True)
    assert_denied(execute(ws, "read_file", path="src/up/outside/secret.txt"), ws)
    assert_denied(execute(ws, "list_dir", path="src/up"), ws)


# -- read_file -------------------------------------------------------------------------------
def test_read_file_numbers_lines(ws: Workspace) -> None:
    result = execute(ws, "read_file", path="notes.txt")
    assert result.error is None
    assert result.content == "     1\talpha\n     2\tbeta\n     3\tgamma"


def test_read_file_offset_limit_and_continuation_note(ws: Workspace) -> None:
    result = execute(ws, "read_file", path="notes.txt", offset=2, limit=1)
    assert result.content == ("     2\tbeta\n"
                              "[lines 2-2 of 3; call read_file with offset=3 for more]")
    plain = execute(ws, "read_file", path="notes.txt", offset=3, line_numbers=False)
    assert plain.content == "gamma"


def test_read_file_default_limit_comes_from_the_workspace(root: Path) -> None:
    (root / "long.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    result = execute(Workspace(root, read_limit=4), "read_file", path="long.txt")
    assert result.content.splitlines()[-2:] == [
        "     4\tline 4", "[lines 1-4 of 10; call read_file with offset=5 for more]"]


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        ({"path": "missing.txt"}, "'missing.txt' does not exist in the workspace"),
        ({"path": "src"}, "'src' is a folder; call list_dir"),
        ({"path": "notes.txt", "offset": 9}, "offset 9 is past the end of 'notes.txt', which "
                                             "has 3 lines"),
        ({"path": "notes.txt", "offset": 0}, "count lines from 1"),
        ({"path": "notes.txt", "limit": 0}, "count lines from 1"),
    ],
)
def test_read_file_errors_say_what_to_do(ws: Workspace, args: dict[str, Any],
                                          fragment: str) -> None:
    result = execute(ws, "read_file", **args)
    assert result.error is not None and fragment in result.error


def test_read_file_binary_and_empty(ws: Workspace, root: Path) -> None:
    (root / "blob.bin").write_bytes(b"\x89PNG\0\0\0data")
    (root / "empty.txt").write_text("")
    binary = execute(ws, "read_file", path="blob.bin")
    assert binary.error is not None and "binary file (11 bytes)" in binary.error
    assert execute(ws, "read_file", path="empty.txt").content == "(empty file)"


def test_read_file_refuses_special_files_and_odd_paths(ws: Workspace, root: Path) -> None:
    os.mkfifo(root / "pipe")
    fifo = execute(ws, "read_file", path="pipe")
    assert fifo.error is not None and "not a regular file" in fifo.error
    nul = execute(ws, "read_file", path="notes\0.txt")
    assert nul.error is not None and nul.error.startswith("Cannot resolve")
    (root / "loop").symlink_to(root / "loop")
    looped = execute(ws, "read_file", path="loop")
    assert looped.error is not None and "loop" in looped.error
    (root / "dangling").symlink_to(root / "gone")
    entries = execute(ws, "list_dir").result["entries"]
    assert {"name": "loop", "type": "symlink", "target": "(broken)"} in entries
    assert {"name": "dangling", "type": "symlink", "target": "(broken)"} in entries


def test_read_file_cuts_very_long_lines(ws: Workspace, root: Path) -> None:
    (root / "wide.txt").write_text("x" * 5000 + "\nshort\n")
    lines = execute(ws, "read_file", path="wide.txt").content.splitlines()
    assert lines[0].endswith("[... line cut at 2000 chars]") and len(lines[0]) < 2100
    assert lines[1] == "     2\tshort"


# -- list_dir --------------------------------------------------------------------------------
def test_list_dir_types_sizes_and_symlinks(ws: Workspace) -> None:
    result = execute(ws, "list_dir")
    assert result.error is None
    assert result.result == {"path": ".", "entries": [
        {"name": "inner_link", "type": "symlink", "target": "notes.txt"},
        {"name": "link_dir", "type": "symlink", "target": "(outside the workspace)"},
        {"name": "link_file", "type": "symlink", "target": "(outside the workspace)"},
        {"name": "notes.txt", "type": "file", "size": 17},
        {"name": "src", "type": "dir"},
    ]}


def test_list_dir_hidden_recursive_and_subfolder(ws: Workspace) -> None:
    names = [e["name"] for e in execute(ws, "list_dir", include_hidden=True).result["entries"]]
    assert names[0] == ".hidden"
    rec = execute(ws, "list_dir", recursive=True).result
    names = [e["name"] for e in rec["entries"]]
    assert "src/app.py" in names and "src/util.py" in names
    assert not any(n.startswith("link_dir/") for n in names)  # symlinked folders stay closed
    sub = execute(ws, "list_dir", path="src").result
    assert sub["path"] == "src"
    assert [e["name"] for e in sub["entries"]] == ["app.py", "util.py"]


def test_list_dir_caps_entries_and_refuses_files(root: Path) -> None:
    for i in range(5):
        (root / f"f{i}.txt").write_text("x")
    result = execute(Workspace(root, max_entries=3), "list_dir").result
    assert len(result["entries"]) == 3
    assert "only the first 3 entries are shown" in result["note"]
    error = execute(Workspace(root), "list_dir", path="notes.txt").error
    assert error is not None and "is a file, not a folder" in error


# -- grep ------------------------------------------------------------------------------------
def test_grep_finds_matches_with_paths_and_line_numbers(ws: Workspace) -> None:
    result = execute(ws, "grep", pattern="needle", ignore_case=True)
    assert result.error is None
    # sorted by path; hidden files and symlinks (inside or out) are not searched
    assert result.content == "src/app.py:2:     return 'Needle'\nsrc/util.py:1: NEEDLE = 1"


def test_grep_path_glob_and_case(ws: Workspace) -> None:
    assert execute(ws, "grep", pattern="Needle", path="src").content == (
        "src/app.py:2:     return 'Needle'")
    assert execute(ws, "grep", pattern="(?i)needle", glob="util*").content == (
        "src/util.py:1: NEEDLE = 1")
    assert execute(ws, "grep", pattern="^beta$", path="notes.txt").content == (
        "notes.txt:2: beta")


def test_grep_never_reads_outside_even_through_symlinks(ws: Workspace) -> None:
    result = execute(ws, "grep", pattern=SECRET)
    assert result.error is None
    assert result.content == f"No matches for '{SECRET}' in '.'."


def test_grep_caps_results(root: Path) -> None:
    (root / "many.txt").write_text("hit\n" * 30)
    result = execute(Workspace(root), "grep", pattern="hit", max_results=5)
    lines = result.content.splitlines()
    assert lines[:5] == [f"many.txt:{i}: hit" for i in range(1, 6)]
    assert lines[5].startswith("[only the first 5 matches are shown")
    assert len(lines) == 6


def test_grep_errors(ws: Workspace) -> None:
    bad = execute(ws, "grep", pattern="(unclosed")
    assert bad.error is not None and bad.error.startswith("grep failed:")
    assert "unclosed group" in bad.error
    too_many = execute(ws, "grep", pattern="x", max_results=0)
    assert too_many.error is not None and "between 1 and 1000" in too_many.error


def test_grep_without_ripgrep_says_how_to_install(ws: Workspace,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workspace_module, "find_ripgrep", lambda: None)
    result = execute(ws, "grep", pattern="needle")
    assert result.error is not None
    assert "ripgrep binary is not installed" in result.error
    assert "reactloop[workspace]" in result.error


def test_ripgrep_comes_from_the_package() -> None:
    rg = find_ripgrep()
    assert rg is not None and os.access(rg, os.X_OK)


# -- the workspace itself --------------------------------------------------------------------
def test_workspace_must_exist_and_describes_itself(tmp_path: Path) -> None:
    from reactloop import UserError

    with pytest.raises(UserError, match="not an existing folder"):
        Workspace(tmp_path / "nope")
    with pytest.raises(UserError, match="command_timeout must be a positive, finite number"):
        Workspace(tmp_path, command_timeout=0)
    text = Workspace(tmp_path).describe()
    assert text.startswith("## Workspace\n")
    assert f"the folder {tmp_path.name}." in text and str(tmp_path.resolve()) not in text
    for name in ("read_file", "list_dir", "grep", "run_command", "without a shell", "30 s"):
        assert name in text
    assert "through /bin/sh" in Workspace(tmp_path, allow_shell=True).describe()


def test_tools_are_repeatable_and_described(ws: Workspace) -> None:
    tools = ws.tools()
    assert [t.name for t in tools] == ["read_file", "list_dir", "grep", "run_command"]
    assert all(t.repeatable for t in tools)  # run_command may change files between reads
    for t in tools:
        assert t.description and t.parameters["type"] == "object"
