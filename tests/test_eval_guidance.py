"""``reactloop eval --guidance`` (issue 23): an eval of a small model behind llama.cpp's server
or Ollama steered as ``reactloop run --guidance`` steers it — through the real CLI, against a
loopback server replaying recorded replies (tests/payloads/ollama) and capturing what was
sent."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from _cli import reactloop
from _recorded_server import RecordedServer, payload, recorded_server
from conftest import need

CASE = """\
cases:
  - name: plus
    input: What is 17 plus 25?
    tool_calls:
      - name: add
        args: {a: 17, b: 25}
    output: {contains: "42"}
    state: completed
"""


@pytest.fixture
def server() -> Iterator[RecordedServer]:
    need("openai", "pip install 'reactloop[openai]'")
    with recorded_server() as s:
        yield s


def _cases(tmp_path: Path, agent: str = "") -> Path:
    path = tmp_path / "cases.yaml"
    path.write_text((f"agent:\n{agent}\n" if agent else "") + CASE)
    return path


def _guided_replies(server: RecordedServer) -> None:
    server.queue(payload("ollama", "guided_call.json"), payload("ollama", "guided_answer.json"))


def _eval(tmp_path: Path, cases: Path, *args: str) -> Any:
    return reactloop(tmp_path, "eval", str(cases), *args, OPENAI_API_KEY="sk-test",
                     ANTHROPIC_API_KEY="sk-ant-test")


@pytest.mark.parametrize(("model", "constraint"), [
    ("openai:smollm2", "grammar"),  # llama.cpp's server: a GBNF grammar
    ("ollama:qwen2.5:0.5b", "response_format"),  # Ollama: a JSON schema
])
def test_eval_guidance_full_sends_the_constraint_and_the_case_passes(
        tmp_path: Path, server: RecordedServer, model: str, constraint: str) -> None:
    _guided_replies(server)
    proc = _eval(tmp_path, _cases(tmp_path), "-m", model, "--base-url", server.url + "/v1",
                 "--guidance", "full", "--fail-under", "1")
    assert proc.returncode == 0, proc.stderr
    assert "PASS   plus" in proc.stdout and "pass rate 100.0 %" in proc.stdout
    first, second = (r.body for r in server.requests)
    assert constraint in first and "tools" not in first  # the ranked offer is in the prompt
    assert (first["temperature"], first["seed"]) == (0, 0)  # as the embedded model samples
    assert constraint in second


def test_without_guidance_the_eval_sends_the_plain_request(tmp_path: Path,
                                                           server: RecordedServer) -> None:
    server.queue(payload("openai", "plain.json"))
    proc = _eval(tmp_path, _cases(tmp_path), "-m", "openai:smollm2", "--base-url",
                 server.url + "/v1")
    assert proc.returncode == 0, proc.stderr
    sent = server.requests[0].body
    assert "grammar" not in sent and "response_format" not in sent and "tools" in sent


def test_the_flag_wins_over_the_files_entry_which_wins_over_the_models_profile(
        tmp_path: Path, server: RecordedServer) -> None:
    url = server.url + "/v1"
    # the cases file's agent: section says guidance: full
    _guided_replies(server)
    guided = _cases(tmp_path, f"  model: openai:smollm2\n  base_url: {url}\n  guidance: full")
    assert _eval(tmp_path, guided).returncode == 0
    assert "grammar" in server.requests[-1].body
    # --guidance off overrides it: the request is the plain one
    server.queue(payload("openai", "plain.json"))
    assert _eval(tmp_path, guided, "--guidance", "off").returncode == 0
    assert "grammar" not in server.requests[-1].body
    # a bare `off` in YAML (read as false) is off too, and beats the model's profile
    assert reactloop(tmp_path, "config", "set", "-m", "openai:smollm2", "guidance",
                     "full").returncode == 0
    server.queue(payload("openai", "plain.json"))
    off = _cases(tmp_path, f"  model: openai:smollm2\n  base_url: {url}\n  guidance: off")
    assert _eval(tmp_path, off).returncode == 0
    assert "grammar" not in server.requests[-1].body
    # with no flag and no entry in the file, the model's profile applies, as for `run`
    _guided_replies(server)
    proc = _eval(tmp_path, _cases(tmp_path), "-m", "openai:smollm2", "--base-url", url)
    assert proc.returncode == 0, proc.stderr
    assert "grammar" in server.requests[-1].body and "PASS   plus" in proc.stdout


def test_bad_guidance_is_one_line(tmp_path: Path) -> None:
    cases = _cases(tmp_path)
    proc = _eval(tmp_path, cases, "-m", "anthropic:claude-haiku-4-5", "--guidance", "full")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith(
        "reactloop eval: --guidance applies to the embedded model")
    bad = _cases(tmp_path, "  guidance: fast")
    proc = _eval(tmp_path, bad)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip() == ("reactloop eval: agent: guidance 'fast' is not one of full, "
                                   "caps, off")
    proc = _eval(tmp_path, cases, "--agent", "x.py:agent", "--guidance", "full")
    assert proc.returncode == 2 and "drop --guidance" in proc.stderr
    assert "--guidance [full|caps|off]" in reactloop(tmp_path, "eval", "--help").stdout


def test_a_report_records_the_requests_as_sent(tmp_path: Path, server: RecordedServer) -> None:
    # the JSON report of a guided eval is an ordinary report: seconds per case included
    _guided_replies(server)
    out = tmp_path / "r.json"
    proc = _eval(tmp_path, _cases(tmp_path), "-m", "openai:smollm2", "--base-url",
                 server.url + "/v1", "--guidance", "caps", "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "grammar" in server.requests[0].body  # caps: the size limits, still a grammar
    run = json.loads(out.read_text())["cases"][0]["runs"][0]
    assert run["transcript"]["seconds"] > 0


def test_run_reads_a_models_guidance_profile(tmp_path: Path, server: RecordedServer) -> None:
    # a guidance entry in the config file used to stop every command that read the file
    # with a KeyError traceback (the config check knew no type for it)
    assert reactloop(tmp_path, "config", "set", "-m", "openai:smollm2", "guidance",
                     "full").returncode == 0
    _guided_replies(server)
    proc = reactloop(tmp_path, "run", "-m", "openai:smollm2", "--base-url", server.url + "/v1",
                     "--no-log", "-q", "What is 17 plus 25?", OPENAI_API_KEY="sk-test")
    assert proc.returncode == 0, proc.stderr
    assert "42" in proc.stdout and "grammar" in server.requests[0].body
    config = tmp_path / "config" / "reactloop" / "config.toml"
    config.write_text(config.read_text().replace('"full"', "5"))
    proc = reactloop(tmp_path, "run", "-m", "openai:smollm2", "--no-log", "hi")
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert "guidance = 5 is a whole number; it must be a string" in proc.stderr
