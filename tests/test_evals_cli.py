"""``reactloop eval`` through the real CLI in a subprocess (a scripted agent; one embedded run)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOY = ROOT / "examples" / "evals" / "toy_agent.py"
CASES = ROOT / "examples" / "evals" / "arithmetic.yaml"


def reactloop(*args: str, cwd: Path = ROOT, timeout: float = 120
              ) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "reactloop", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout, check=False)


def toy(*args: str) -> subprocess.CompletedProcess[str]:
    return reactloop("eval", str(CASES), "--agent", f"{TOY}:agent", *args)


def test_report_on_stdout_progress_on_stderr_and_exit_codes() -> None:
    proc = toy()
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("eval arithmetic — model function, 3 cases, 1 repeat")
    assert "FAIL   minus" in proc.stdout
    assert "closest call subtract(a=123, b=234): a: got 123, want 1234" in proc.stdout
    assert "pass rate 66.7 % (2 of 3 runs)" in proc.stdout
    assert "[1/3] PASS  plus" in proc.stderr and "[2/3] FAIL  minus" in proc.stderr
    assert "[" not in proc.stdout.split("\n", 1)[0]  # no progress lines in the report

    under = toy("--fail-under", "0.8")
    assert under.returncode == 1
    assert under.stderr.strip().endswith(
        "reactloop eval: pass rate 66.7 % is under --fail-under 80.0 %")
    assert toy("--fail-under", "60%").returncode == 0


def test_json_markdown_and_baseline(tmp_path: Path) -> None:
    base = tmp_path / "base.json"
    md = tmp_path / "report.md"
    assert toy("--json", str(base), "--markdown", str(md), "--repeat", "2").returncode == 0
    data = json.loads(base.read_text())
    assert data["summary"]["runs"] == 6 and data["summary"]["pass_rate"] == 0.6667
    assert data["summary"]["repeat_pass_rates"] == [0.6667, 0.6667]
    minus = next(c for c in data["cases"] if c["name"] == "minus")
    assert minus["runs"][0]["transcript"]["calls"][0]["arguments"] == {"a": 123, "b": 234}
    assert "| minus | FAIL | 0/2 |" in md.read_text()

    # the same agent against a stricter 'plus' case: a regression the baseline shows
    stricter = tmp_path / "arithmetic.yaml"
    stricter.write_text(CASES.read_text().replace('contains: "42"', 'contains: "forty-two"'))
    proc = reactloop("eval", str(stricter), "--agent", f"{TOY}:agent", "--baseline", str(base),
                     "--fail-on-regression")
    assert proc.returncode == 1
    assert "1 regressed" in proc.stdout and "regressed  plus (100.0 % → 0.0 %)" in proc.stdout
    assert "reactloop eval: regressed since the baseline: plus" in proc.stderr


def test_record_then_replay_without_the_model(tmp_path: Path) -> None:
    cassette = tmp_path / "run.cassette.json"
    recorded = toy("--record", str(cassette))
    assert recorded.returncode == 0 and cassette.is_file()
    # the same agent, except that its model now fails on any call
    broken = tmp_path / "broken_agent.py"
    broken.write_text(TOY.read_text().replace(
        "agent = Agent(model=FunctionModel(toy_model)",
        "def _fail(request):\n    raise RuntimeError('called')\n\n\n"
        "agent = Agent(model=FunctionModel(_fail)"))
    replayed = reactloop("eval", str(CASES), "--agent", f"{broken}:agent",
                         "--replay", str(cassette))
    assert replayed.returncode == 0, replayed.stderr
    strip = [line for line in replayed.stdout.splitlines()[2:] if " s" not in line]
    assert strip == [line for line in recorded.stdout.splitlines()[2:] if " s" not in line]
    assert f"(replayed from {cassette})" in replayed.stdout.splitlines()[0]
    only = reactloop("eval", str(CASES), "--agent", f"{broken}:agent", "--replay",
                     str(cassette), "--case", "min*")
    assert "1 case, 1 repeat" in only.stdout and "minus" in only.stdout


def test_bad_input_is_one_line_without_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("cases:\n  - name: x\n    input: hi\n    ouput: {contains: a}\n")
    proc = reactloop("eval", str(bad), "--agent", f"{TOY}:agent")
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        f"reactloop eval: {bad}: cases[0] ('x'): unknown key 'ouput' (did you mean 'output'?); "
        "allowed: name, input, tool_calls, order, max_tool_calls, max_iterations, output, state, "
        "rubric, tags, metadata, attachments")
    both = reactloop("eval", str(CASES), "--agent", f"{TOY}:agent", "--model", "local")
    assert both.returncode == 2 and "drop --model" in both.stderr
    assert "Traceback" not in both.stderr
    missing = reactloop("eval", str(CASES), "--agent", f"{TOY}:agent", "--replay",
                        str(tmp_path / "none.json"))
    assert missing.returncode == 2 and "cannot read cassette" in missing.stderr
    wrong = reactloop("eval", str(CASES), "--agent", f"{TOY}:add")
    assert wrong.returncode == 2 and "is a Tool, not a reactloop Agent" in wrong.stderr


@pytest.mark.parametrize("option", ["cases", "--baseline", "--replay"])
def test_a_file_that_is_not_utf8_is_one_line(option: str, tmp_path: Path) -> None:
    latin1 = tmp_path / "latin1.yaml"
    latin1.write_bytes("cases:\n  - name: caf\u00e9\n    input: hi\n".encode("latin-1"))
    args = [str(latin1)] if option == "cases" else [str(CASES), option, str(latin1)]
    proc = reactloop("eval", *args, "--agent", f"{TOY}:agent")
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    line = proc.stderr.strip().splitlines()[-1]
    assert line.startswith("reactloop eval: ") and "UTF-8" in line and str(latin1) in line


@pytest.mark.parametrize("option", ["--json", "--markdown"])
def test_an_output_in_a_missing_folder_stops_before_the_first_case(option: str,
                                                                   tmp_path: Path) -> None:
    out = tmp_path / "no" / "such" / "folder" / "report.out"
    proc = toy(option, str(out))
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "PASS" not in proc.stderr and "FAIL" not in proc.stderr  # no case ran
    assert proc.stdout == ""
    assert proc.stderr.strip() == (f"reactloop eval: {option} {out}: the folder {out.parent} "
                                   "does not exist; create it first (nothing was run)")


@pytest.mark.slow
def test_a_real_eval_on_the_embedded_model(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp")
    cases = tmp_path / "cases.yaml"
    cases.write_text("""
agent: {max_iterations: 4}
cases:
  - name: add
    input: What is 17 + 25?
    tool_calls: [{name: add, args: {a: 17, b: 25}}]
    output: {contains: "42"}
""")
    out = tmp_path / "r.json"
    proc = reactloop("eval", str(cases), "--json", str(out), "--record",
                     str(tmp_path / "c.json"), timeout=600)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(out.read_text())
    assert data["model"] == "local:SmolLM2-135M-Instruct.Q4_1.gguf"
    t = data["cases"][0]["runs"][0]["transcript"]
    assert t["iterations"] >= 1 and t["input_tokens"] > 0 and t["output_tokens"] > 0
    assert [c["name"] for c in data["cases"][0]["runs"][0]["criteria"]] == \
           ["tool_calls", "output.contains"]
    # the recording replays to the same verdicts without loading the model's weights
    again = reactloop("eval", str(cases), "--replay", str(tmp_path / "c.json"), "--json",
                      str(tmp_path / "r2.json"))
    assert again.returncode == 0, again.stderr
    replayed = json.loads((tmp_path / "r2.json").read_text())
    assert replayed["summary"]["pass_rate"] == data["summary"]["pass_rate"]
    assert replayed["model"] == data["model"]


def test_the_readme_sample_report_is_what_the_command_prints() -> None:
    readme = (ROOT / "README.md").read_text()
    start = readme.index("```bash\nreactloop eval ")
    command = readme[start:].split("\n")[1]
    sample = readme[start:].split("```text\n", 1)[1].split("```", 1)[0]
    proc = reactloop(*command.split()[1:])
    assert proc.returncode == 0, proc.stderr

    def timeless(text: str) -> str:
        import re

        text = re.sub(r"slowest case \S+:", "slowest case C:", text)  # which one is timing
        return re.sub(r"\d+\.\d s", "T s", text).strip()

    assert timeless(proc.stdout) == timeless(sample)
