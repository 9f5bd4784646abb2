"""The front door: README examples run, the public API is curated, imports stay light."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import reactloop

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README, flags=re.S)


def test_all_is_sorted_and_complete() -> None:
    assert list(reactloop.__all__) == sorted(reactloop.__all__)
    for name in reactloop.__all__:
        assert hasattr(reactloop, name), name


def test_import_does_not_pull_sdks_or_native_libraries() -> None:
    code = (
        "import sys, reactloop, reactloop.testing\n"
        "heavy = [m for m in ('openai', 'anthropic', 'google.genai', 'llama_cpp', 'mcp', "
        "'duckdb', 'rich', 'pydantic', 'opentelemetry', 'temporalio', 'a2a', 'starlette') "
        "if m in sys.modules]\n"
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == ""


def test_readme_starts_with_exactly_two_commands() -> None:
    bash = _blocks("bash")
    assert len(bash) >= 2
    install_and_run, install_and_test = bash[0].strip(), bash[1].strip()
    assert "reactloop run" in install_and_run and "[local]" in install_and_run
    assert "pytest" in install_and_test and "[test]" in install_and_test
    # the test set-up is a step of the command, not a side effect of pytest
    assert install_and_test.endswith(" && python scripts/test_setup.py && python -m pytest")
    ci = (ROOT / ".ci" / "run").read_text()
    assert install_and_test in ci.splitlines(), ".ci/run must call the README's test command"


@pytest.mark.parametrize("index", range(len(_blocks("python"))))
def test_readme_python_examples_run(index: int, monkeypatch: pytest.MonkeyPatch) -> None:
    from reactloop import _instrument

    monkeypatch.chdir(ROOT)  # examples use paths relative to the repository
    code = _blocks("python")[index]
    before = _instrument.active()  # an example may turn tracing on for every agent
    try:
        exec(compile(code, f"README.md[python {index}]", "exec"), {"__name__": "__readme__"})
    finally:
        _instrument.set_active(before)


def test_readme_main_command_runs_the_embedded_model() -> None:
    pytest.importorskip("llama_cpp")
    command = _blocks("bash")[0].split("&&", 1)[1].strip()
    assert command.startswith("reactloop run ")
    task = command.removeprefix("reactloop run ").strip().strip('"')
    proc = subprocess.run([sys.executable, "-m", "reactloop", "run", task],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "→ add" in proc.stderr or "→ calculate" in proc.stderr  # a tool was called
    assert "✓ completed" in proc.stderr and proc.stdout.strip()  # the answer alone on stdout
