"""The command line: errors, tool loading, and the chat REPL on the embedded model."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def reactloop(*args: str, stdin: str | None = None, cwd: Path | None = None,
              pythonpath: str = "") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200"}
    if pythonpath:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (pythonpath, env.get("PYTHONPATH")) if p)
    return subprocess.run([sys.executable, "-m", "reactloop", *args], input=stdin,
                          stdin=None if stdin is not None else subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=600, check=False,
                          cwd=cwd, env=env)


def test_help_lists_the_commands() -> None:
    proc = reactloop("--help")
    assert proc.returncode == 0
    assert "run" in proc.stdout and "chat" in proc.stdout


def test_bad_model_is_a_one_line_error_and_non_zero_exit() -> None:
    proc = reactloop("run", "--model", "gpt-4", "hi")
    assert proc.returncode == 1
    assert proc.stderr.strip().startswith("reactloop: unknown model 'gpt-4'")
    assert "Traceback" not in proc.stderr


def test_tools_option_reports_bad_specs(tmp_path: Path) -> None:
    (tmp_path / "mytools.py").write_text("def helper(x: int) -> int:\n    return x\n")
    proc = reactloop("run", "--tools", "mytools:nothere", "hi", cwd=tmp_path)
    assert proc.returncode == 2
    assert "has no attribute 'nothere'" in proc.stderr and "helper" in proc.stderr
    proc = reactloop("run", "--tools", "no_colon", "hi", cwd=tmp_path)
    assert proc.returncode == 2 and "module:attr" in proc.stderr


def test_tools_option_loads_functions_and_lists(tmp_path: Path) -> None:
    from reactloop.cli._load import load_tools

    (tmp_path / "cli_tools_mod.py").write_text(
        "def one() -> int:\n    return 1\n\n"
        "def two() -> int:\n    return 2\n\n"
        "TOOLS = [one, two]\n"
    )
    sys.path.insert(0, str(tmp_path))
    try:
        tools = load_tools(("cli_tools_mod:one", "cli_tools_mod:TOOLS"))
    finally:
        sys.path.remove(str(tmp_path))
    assert [t.__name__ for t in tools] == ["one", "one", "two"]


def test_chat_keeps_the_conversation_and_exits_cleanly(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp")
    store = str(tmp_path / "s.sqlite3")
    proc = reactloop("chat", "-n", "3", "--store", store,
                     stdin="What is 17 + 25?\nAnd what is 2 + 2?\n/exit\n")
    assert proc.returncode == 0, proc.stderr
    import json

    runs = json.loads(reactloop("logs", "--store", store, "--json").stdout)
    assert [r["prompt"] for r in runs] == ["And what is 2 + 2?", "What is 17 + 25?"]
    assert len({r["session_id"] for r in runs}) == 1  # one conversation
    assert all(r["output"].strip() in proc.stdout for r in runs)  # answers on stdout


def test_chat_session_persists_across_processes(tmp_path: Path) -> None:
    store = str(tmp_path / "s.sqlite3")
    agent = ("--agent", "cli_agents:echo")
    env_path = str(Path(__file__).parent)
    first = reactloop("chat", *agent, "--new-session", "demo", "--store", store,
                      stdin="What is 17 + 25?\n/exit\n", pythonpath=env_path)
    assert first.returncode == 0, first.stderr
    second = reactloop("chat", *agent, "--session", "demo", "--store", store,
                       stdin="And 2 + 2?\n/exit\n", pythonpath=env_path)
    assert second.returncode == 0, second.stderr
    assert second.stdout == "turn 2: And 2 + 2?\n"
    shown = reactloop("sessions", "show", "demo", "--store", store)
    assert shown.returncode == 0, shown.stderr
    assert "What is 17 + 25?" in shown.stdout and "And 2 + 2?" in shown.stdout
    again = reactloop("chat", *agent, "--new-session", "demo", "--store", store, stdin="",
                      pythonpath=env_path)
    assert again.returncode == 1 and "exists already" in again.stderr


def test_base_url_needs_a_provider_model() -> None:
    proc = reactloop("run", "--base-url", "http://127.0.0.1:9/v1", "--model", "local", "hi")
    assert proc.returncode == 1
    assert "base_url cannot be used with the embedded model" in proc.stderr
    assert "'openai:<name>'" in proc.stderr


def test_text_protocol_wrapping_the_embedded_model_ends_with_an_answer() -> None:
    pytest.importorskip("llama_cpp")
    proc = reactloop("run", "--text-tools", "--json", "-n", "3", "What is 17 + 25?")
    import json

    data = json.loads(proc.stdout)
    expected = {"completed": {0, 5, 6}, "max_iterations": {2, 5}}[data["state"]]
    assert proc.returncode in expected, proc.stderr  # 5 cut off, 6 last tool step failed
    assert data["output"].strip()
    assert data["messages"][0]["content"] == "What is 17 + 25?"
