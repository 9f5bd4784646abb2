"""The config file checked when it is read, and keys refused when they hold a control
character: one line naming the cause, on every command (the real CLI in a subprocess)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from _cli import reactloop

READING = [
    ("run", "--agent", "cli_agents:completed", "hello"),
    ("chat", "--agent", "cli_agents:completed"),
    ("logs",),
    ("logs", "show"),
    ("sessions", "list"),
    ("sessions", "show", "abc"),
    ("models",),
]


def _config(home: Path, text: str) -> Path:
    path = home / "config" / "reactloop" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _one_line(proc: subprocess.CompletedProcess[str]) -> str:
    stderr = proc.stderr
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert proc.returncode == 1, stderr
    assert "Traceback" not in stderr and len(lines) == 1, stderr
    return lines[0]


@pytest.mark.parametrize("command", READING, ids=lambda c: " ".join(c[:2]))
def test_a_value_of_the_wrong_type_is_one_line_naming_it(command: tuple[str, ...],
                                                         tmp_path: Path) -> None:
    path = _config(tmp_path, "store = 5\n")
    line = _one_line(reactloop(tmp_path, *command, stdin="hello\n"))
    assert line == (f"reactloop: config file {path}: store = 5 is a whole number; it must be a "
                    "string; fix it with: reactloop config set store VALUE (or reactloop "
                    "config unset store)")


def test_a_model_table_value_is_checked_too_and_config_can_fix_the_file(tmp_path: Path) -> None:
    path = _config(tmp_path, '[models."openai:x"]\ntemperature = "hot"\n')
    line = _one_line(reactloop(tmp_path, "run", "--agent", "cli_agents:completed", "hi"))
    assert f'config file {path}: [models."openai:x"] temperature = "hot" is a string; it must ' \
           "be a number" in line
    assert "reactloop config set -m openai:x temperature VALUE" in line
    # the config command reads the file as it is, so that it can repair it
    assert reactloop(tmp_path, "config", "get", "-m", "openai:x", "temperature").stdout == "hot\n"
    assert reactloop(tmp_path, "config", "set", "-m", "openai:x", "temperature",
                     "0.5").returncode == 0
    assert reactloop(tmp_path, "run", "--agent", "cli_agents:completed", "hi").returncode == 0


def test_a_negative_number_is_named_with_the_rule(tmp_path: Path) -> None:
    _config(tmp_path, '[models."openai:x"]\nmax_tokens = -3\n')
    line = _one_line(reactloop(tmp_path, "models"))
    assert "max_tokens = -3 must be a whole number of at least 1" in line


@pytest.mark.parametrize("value", ["sk-abc\ndef", "sk-abc\r", "sk-\tabc", "sk-a\x1bbc"])
def test_keys_set_refuses_a_key_with_a_control_character(value: str, tmp_path: Path) -> None:
    line = _one_line(reactloop(tmp_path, "keys", "set", "openai", "--value", value))
    assert line.startswith("reactloop: the key for OPENAI_API_KEY contains ")
    assert "set the key again without it" in line and "sk-" not in line
    assert reactloop(tmp_path, "keys", "list").stdout == ""  # nothing was stored


def test_a_key_in_the_environment_with_a_line_break_is_one_line(tmp_path: Path) -> None:
    proc = reactloop(tmp_path, "run", "-m", "openai:gpt-4o-mini", "--base-url",
                     "http://127.0.0.1:9/v1", "hi", OPENAI_API_KEY="sk-abc\n")
    line = _one_line(proc)
    assert "the API key of OpenAIModel (OPENAI_API_KEY) contains a line break" in line
    assert "could not reach" not in line


def test_api_key_with_a_line_break_is_refused() -> None:
    pytest.importorskip("openai")
    from reactloop.errors import UserError
    from reactloop.models.openai import OpenAIModel

    with pytest.raises(UserError, match=r"\(api_key=\.\.\.\) contains a line break"):
        OpenAIModel("gpt-4o-mini", api_key="sk-abc\n")
