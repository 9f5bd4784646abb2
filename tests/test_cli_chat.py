"""The interactive parts through a pseudo-terminal (pexpect): the chat prompt's editing,
history, multi-line input, slash commands and Ctrl-C/Ctrl-D, and the live progress line."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from _cli import cli_env
from conftest import require

pexpect: Any
try:
    import pexpect
except ImportError:  # each test skips, or fails under CI (conftest.require)
    pexpect = None


@pytest.fixture(autouse=True)
def _needs_pexpect() -> None:
    require(pexpect is not None, "pip install pexpect (in the 'test' extra)")

LEFT, UP, ALT_ENTER = "\x1b[D", "\x1b[A", "\x1b\r"


def spawn(home: Path, *args: str, **env: str) -> pexpect.spawn:
    child = pexpect.spawn(sys.executable, ["-m", "reactloop", *args], encoding="utf-8",
                          timeout=30, dimensions=(50, 200),
                          env=cli_env(home, TERM="xterm", PROMPT_TOOLKIT_NO_CPR="1", **env))
    return child


@pytest.fixture
def chat(tmp_path: Path) -> Iterator[pexpect.spawn]:
    child = spawn(tmp_path, "chat", "--agent", "cli_agents:echo")
    child.expect("you>")
    yield child
    if child.isalive():
        child.terminate(force=True)


def _send(child: pexpect.spawn, text: str) -> None:
    child.send(text + "\r")


def _leave(child: pexpect.spawn) -> int:
    """Ctrl-D at the prompt; returns the exit status. Sent again until the process ends (a key
    that arrives while the prompt is being redrawn can be lost)."""
    for _ in range(50):
        child.sendeof()
        if child.expect([pexpect.EOF, pexpect.TIMEOUT], timeout=0.5) == 0:
            break
    child.close()
    return int(child.exitstatus)


def test_line_editing_with_arrow_keys(chat: pexpect.spawn) -> None:
    chat.send("helo")
    chat.send(LEFT)
    _send(chat, "l")
    chat.expect("turn 1: hello")
    chat.expect("you>")
    assert "^[[D" not in chat.before


def test_history_survives_the_process(tmp_path: Path) -> None:
    first = spawn(tmp_path, "chat", "--agent", "cli_agents:echo")
    first.expect("you>")
    _send(first, "remember me")
    first.expect("turn 1: remember me")
    first.expect("you>")
    assert _leave(first) == 0
    second = spawn(tmp_path, "chat", "--agent", "cli_agents:echo")
    second.expect("you>")
    for _ in range(100):  # the prompt loads its history file in the background: poll
        second.send(UP)
        if second.expect(["remember me", pexpect.TIMEOUT], timeout=0.2) == 0:
            break
    second.send("\r")
    second.expect("turn 1: remember me")  # a new session: the history is the prompt's
    second.expect("you>")
    assert _leave(second) == 0


def test_multi_line_input_with_alt_enter_and_backslash(chat: pexpect.spawn) -> None:
    chat.send("line one")
    chat.send(ALT_ENTER)
    chat.send("line two\\")
    _send(chat, "")
    _send(chat, "line three")
    chat.expect("turn 1: line one")
    chat.expect("line two")
    chat.expect("line three")
    chat.expect("you>")


def test_slash_commands_are_handled_locally(chat: pexpect.spawn) -> None:
    _send(chat, "/help")
    chat.expect("/clear")
    chat.expect("you>")
    _send(chat, "/nonsense")
    chat.expect("unknown command /nonsense")
    chat.expect("you>")
    _send(chat, "first")
    chat.expect("turn 1: first")  # /help and /nonsense never reached the model
    chat.expect("you>")
    _send(chat, "/session")
    chat.expect(r"session [0-9a-f]{32} · 2 messages")
    chat.expect("you>")
    _send(chat, "/tools")
    chat.expect("you>")
    _send(chat, "/model")
    chat.expect("model function")
    chat.expect("you>")
    _send(chat, "/clear")
    chat.expect("history cleared")
    chat.expect("you>")
    _send(chat, "//slash")
    chat.expect("turn 1: /slash")  # cleared: a fresh conversation; // sends a slash
    chat.expect("you>")
    _send(chat, "/exit")
    chat.expect(pexpect.EOF)
    chat.close()
    assert chat.exitstatus == 0


def test_ctrl_c_clears_the_line_and_ctrl_d_exits_zero(chat: pexpect.spawn) -> None:
    chat.send("garbage that is never sent")
    chat.sendintr()
    _send(chat, "real")
    chat.expect("turn 1: real")
    chat.expect("you>")
    assert "garbage" not in chat.before
    assert _leave(chat) == 0
    assert "Aborted" not in (chat.before or "")


def test_ctrl_c_while_the_model_works_cancels_that_turn_only(tmp_path: Path) -> None:
    child = spawn(tmp_path, "chat", "--agent", "cli_agents:hanging")
    child.expect("you>")
    _send(child, "please hang")
    child.expect("waiting for the model")  # the live line while the model "thinks"
    child.sendintr()
    child.expect(r"\(cancelled this turn\)")
    child.expect("you>")
    _send(child, "after")
    child.expect("you said: after")
    child.expect("you>")
    assert _leave(child) == 0


def test_run_shows_live_progress_and_ctrl_c_exits_130(tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    child = spawn(tmp_path, "run", "--agent", "cli_agents:gated", "What is 2 + 2?",
                  REACTLOOP_TEST_GATE=str(gate))
    child.expect(r"→ add")
    # the live line of the second call: iteration, phase, time, tokens so far
    child.expect(r"iteration 2/10 · waiting for the model · \d+s · \d+s in all · 120 tokens")
    gate.touch()
    child.expect("2 \\+ 2 = 4")
    child.expect(r"completed\S* · 2 iterations")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    hanging = spawn(tmp_path, "run", "--agent", "cli_agents:hanging", "hang")
    hanging.expect("waiting for the model")
    hanging.sendintr()
    hanging.expect("cancelled")
    hanging.expect(pexpect.EOF)
    hanging.close()
    assert hanging.exitstatus == 130
