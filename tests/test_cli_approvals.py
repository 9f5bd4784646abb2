"""The command line's approvals and typed answers (issue 14), against an OpenAI-compatible
server on loopback that replays recorded streams.

``run`` asks y / n (with a reason) / e (edited JSON) on a terminal (a pseudo-terminal driven by
pexpect); without one, ``--approve-all`` / ``--deny-all`` decide, and with neither the run ends
waiting (exit 7) and a stored session keeps the calls: ``sessions show`` lists them and
``run --session ID`` (no TASK) decides them later, from another process. ``chat`` reads the
answers as the next lines of piped input and decides a reopened session's waiting calls
first. ``run --output-schema`` prints validated JSON."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from _cli import cli_env, reactloop
from _recorded_server import RecordedServer, payload, recorded_server
from conftest import need, require

TOOLS = '''
from pathlib import Path
from reactloop import tool

@tool(requires_approval=True)
def transfer(amount: int, to: str) -> str:
    """Move money to an account.

    Args:
        amount: how much
        to: the account
    """
    with Path("ran.log").open("a") as f:
        f.write(f"transfer {amount} {to}\\n")
    return f"sent {amount} to {to}"
'''


@pytest.fixture
def server() -> Iterator[RecordedServer]:
    need("openai", "pip install 'reactloop[openai]'")
    with recorded_server() as s:
        yield s


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "banktools.py").write_text(TOOLS)
    return tmp_path


def agent_args(server: RecordedServer) -> list[str]:
    return ["--model", "openai:gpt-4o-mini", "--base-url", server.url + "/v1",
            "--tools", "banktools:transfer", "--store", "s.sqlite3"]


def cli(work: Path, server: RecordedServer, command: str, *args: str,
        stdin: str | None = None) -> Any:
    if command in ("run", "chat"):
        args = (*agent_args(server), *args)
    else:  # sessions show ID --store PATH
        args = (*args, "--store", "s.sqlite3")
    return reactloop(work, command, *args, stdin=stdin, cwd=work,
                     OPENAI_API_KEY="sk-test-not-a-real-key")


def transfer_then_done(server: RecordedServer) -> None:
    server.queue(payload("openai", "transfer_stream.sse"), payload("openai", "done_stream.sse"))


def tool_result_sent(server: RecordedServer) -> dict[str, Any]:
    """The tool message of the latest request (what the model saw for the call)."""
    return next(m for m in server.requests[-1].body["messages"] if m["role"] == "tool")


def ran(work: Path) -> list[str]:
    log = work / "ran.log"
    return log.read_text().splitlines() if log.exists() else []


# -- on a terminal: y / n / e ---------------------------------------------------------------------

def terminal(work: Path, server: RecordedServer, *args: str) -> Any:
    try:
        import pexpect
    except ImportError:
        pexpect = None
    require(pexpect is not None, "pip install pexpect (in the 'test' extra)")
    return pexpect.spawn(sys.executable, ["-m", "reactloop", "run", *agent_args(server), *args],
                         encoding="utf-8", timeout=60, dimensions=(50, 200), cwd=str(work),
                         env=cli_env(work, TERM="xterm", PROMPT_TOOLKIT_NO_CPR="1",
                                     OPENAI_API_KEY="sk-test-not-a-real-key"))


def finish(child: Any) -> int:
    import pexpect

    child.expect(pexpect.EOF)
    child.close()
    return int(child.exitstatus)


def test_run_on_a_terminal_asks_and_y_approves(work: Path, server: RecordedServer) -> None:
    transfer_then_done(server)
    child = terminal(work, server, "Send 50 to bob")
    child.expect_exact('transfer({"amount": 50, "to": "bob"}) needs your approval.')
    child.expect_exact("approve? [y]es / [n]o / [e]dit:")
    assert ran(work) == []  # nothing ran before the answer
    child.sendline("y")
    child.expect_exact("transfer: approved")
    child.expect_exact("Handled the transfer.")
    assert finish(child) == 0
    assert ran(work) == ["transfer 50 bob"]
    assert tool_result_sent(server)["content"] == "sent 50 to bob"


def test_run_on_a_terminal_n_denies_with_a_reason(work: Path, server: RecordedServer) -> None:
    transfer_then_done(server)
    child = terminal(work, server, "Send 50 to bob")
    child.expect_exact("approve? [y]es / [n]o / [e]dit:")
    child.sendline("n")
    child.expect_exact("reason:")
    child.sendline("bob is not a payee")
    child.expect_exact("transfer: denied: bob is not a payee")
    assert finish(child) == 0
    assert ran(work) == []
    assert tool_result_sent(server)["content"] == \
        "The user denied this tool call. Reason: bob is not a payee"


def test_run_on_a_terminal_e_edits_the_json_arguments(work: Path,
                                                      server: RecordedServer) -> None:
    transfer_then_done(server)
    child = terminal(work, server, "Send 50 to bob")
    child.expect_exact("approve? [y]es / [n]o / [e]dit:")
    child.sendline("x")
    child.expect_exact("answer y, n or e")
    child.expect_exact("approve? [y]es / [n]o / [e]dit:")
    child.sendline("e")
    child.expect_exact("arguments (JSON, was")
    child.sendline("{broken")
    child.expect_exact("not JSON")
    child.expect_exact("approve? [y]es / [n]o / [e]dit:")
    child.sendline("e")
    child.expect_exact("arguments (JSON, was")
    child.sendline('{"amount": 5, "to": "bob"}')
    child.expect_exact('transfer: approved, with the arguments edited to {"amount": 5')
    assert finish(child) == 0
    assert ran(work) == ["transfer 5 bob"]
    assert "edited the arguments" in str(tool_result_sent(server)["content"])


# -- scripts: --approve-all / --deny-all, exit 7, a session decided later ------------------------

def test_approve_all_and_deny_all_decide_without_asking(work: Path,
                                                        server: RecordedServer) -> None:
    transfer_then_done(server)
    proc = cli(work, server, "run", "--approve-all", "Send 50 to bob")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "Handled the transfer.\n"  # the answer alone on stdout
    assert "transfer: approved" in proc.stderr and "needs your approval" not in proc.stderr
    assert ran(work) == ["transfer 50 bob"]

    transfer_then_done(server)
    proc = cli(work, server, "run", "--deny-all", "Send 50 to bob")
    assert proc.returncode == 0, proc.stderr
    assert ran(work) == ["transfer 50 bob"]  # no second transfer
    assert "denied by --deny-all" in str(tool_result_sent(server)["content"])

    proc = cli(work, server, "run", "--approve-all", "--deny-all", "x")
    assert proc.returncode == 2 and "exclude each other" in proc.stderr


def test_without_a_terminal_the_run_waits_exit_7_and_the_session_decides_later(
        work: Path, server: RecordedServer) -> None:
    server.queue(payload("openai", "transfer_stream.sse"))
    proc = cli(work, server, "chat", "--new-session", "bank", stdin="Send 50 to bob\n")
    assert proc.returncode == 0, proc.stderr
    assert "no decision: the calls keep waiting" in proc.stderr and ran(work) == []

    shown = cli(work, server, "sessions", "show", "bank")
    assert shown.returncode == 0, shown.stderr
    assert "1 tool call(s) waiting for approval" in shown.stdout
    assert 'transfer({"amount": 50, "to": "bob"})' in shown.stdout

    # a new task is not sent while calls wait and nobody decides them
    proc = cli(work, server, "run", "--session", "bank", "And 10 to eve")
    assert proc.returncode == 7, proc.stderr
    assert "still wait for approval; the task was not sent" in proc.stderr
    assert "Traceback" not in proc.stderr and len(server.requests) == 1

    # another process decides: no TASK, --approve-all
    server.queue(payload("openai", "done_stream.sse"))
    proc = cli(work, server, "run", "--session", "bank", "--approve-all")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "Handled the transfer.\n"
    assert ran(work) == ["transfer 50 bob"]
    shown = cli(work, server, "sessions", "show", "bank")
    assert "waiting for approval" not in shown.stdout
    proc = cli(work, server, "run", "--session", "bank")
    assert proc.returncode == 2 and "no tool calls waiting for approval" in proc.stderr


def test_a_run_left_waiting_exits_7_with_one_line(work: Path, server: RecordedServer) -> None:
    server.queue(payload("openai", "transfer_stream.sse"))
    proc = cli(work, server, "run", "Send 50 to bob")
    assert proc.returncode == 7, proc.stderr
    assert proc.stdout == ""  # no answer yet
    assert "tool calls wait for approval: transfer (" in proc.stderr
    assert "--approve-all / --deny-all" in proc.stderr
    assert "Traceback" not in proc.stderr and ran(work) == []


def test_chat_reads_the_answers_from_piped_input(work: Path, server: RecordedServer) -> None:
    transfer_then_done(server)
    proc = cli(work, server, "chat", "--new-session", "piped",
               stdin="Send 50 to bob\nn\nnot today\n")
    assert proc.returncode == 0, proc.stderr
    assert "approve? [y]es / [n]o / [e]dit:" in proc.stderr
    assert "Handled the transfer." in proc.stdout and ran(work) == []
    assert tool_result_sent(server)["content"] == \
        "The user denied this tool call. Reason: not today"

    server.queue(payload("openai", "transfer_stream.sse"))
    left = cli(work, server, "chat", "--new-session", "later", stdin="Send 50 to bob\n")
    assert "the calls keep waiting" in left.stderr
    server.queue(payload("openai", "done_stream.sse"))
    reopened = cli(work, server, "chat", "--session", "later", stdin="y\n")
    assert reopened.returncode == 0, reopened.stderr
    assert "Handled the transfer." in reopened.stdout  # decided as the session opened
    assert ran(work) == ["transfer 50 bob"]


# -- typed answers -------------------------------------------------------------------------------

def test_run_output_schema_prints_validated_json(work: Path, server: RecordedServer) -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"},
              "country": {"type": "string"}, "population": {"type": "integer"}},
              "required": ["city", "country", "population"]}
    (work / "city.json").write_text(json.dumps(schema))
    server.queue(payload("openai", "typed_stream.sse"))
    proc = cli(work, server, "run", "--output-schema", "city.json", "Paris?")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"city": "Paris", "country": "France",
                                       "population": 2102650}
    fmt = server.requests[0].body["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["schema"]["required"] == \
        ["city", "country", "population"]
    (work / "bad.json").write_text("{nope")
    proc = cli(work, server, "run", "--output-schema", "bad.json", "x")
    assert proc.returncode == 2 and "is not a JSON file" in proc.stderr
    assert "Traceback" not in proc.stderr
    proc = reactloop(work, "run", "--agent", "banktools:transfer", "--output-schema",
                     "city.json", "x", cwd=work)
    assert proc.returncode == 2 and "drop --output-schema" in proc.stderr
