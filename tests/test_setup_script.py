"""The test set-up (scripts/test_setup.py): a step of the README's test command, not a side
effect of pytest. These tests only ever run it with ``--check``, which installs nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "test_setup.py"


def _check(env: dict[str, str]) -> list[str]:
    out = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True,
                         text=True, check=True, env={**os.environ, **env}, timeout=120)
    return out.stdout.splitlines()


def test_check_reports_one_line_per_prerequisite_and_installs_nothing(tmp_path: Path) -> None:
    venv = tmp_path / "phoenix-venv"
    lines = _check({"REACTLOOP_PHOENIX_VENV": str(venv)})
    assert len(lines) == 6  # AG-UI, A2A, MCP npm servers, Phoenix, Chromium, PostgreSQL
    assert all(line.startswith(("test setup: ok: ", "test setup: missing: ")) for line in lines)
    [phoenix] = [line for line in lines if "Phoenix" in line]
    assert phoenix == (f"test setup: missing: Arize Phoenix (python -m venv {venv} && "
                       f"{venv}/bin/pip install 'arize-phoenix==20.26.1')")
    assert not venv.exists()  # --check only reports


def test_a_present_prerequisite_is_skipped(tmp_path: Path) -> None:
    venv = tmp_path / "phoenix-venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "phoenix").write_text("#!/bin/sh\n")
    (venv / "bin" / "phoenix").chmod(0o755)
    chromium = tmp_path / "chromium"
    lines = _check({"REACTLOOP_PHOENIX_VENV": str(venv), "REACTLOOP_CHROMIUM": str(chromium)})
    assert f"test setup: ok: Arize Phoenix ({venv})" in lines
    assert f"test setup: ok: Chromium ({chromium})" in lines


def test_an_unknown_argument_is_one_line() -> None:
    out = subprocess.run([sys.executable, str(SCRIPT), "--chek"], capture_output=True,
                         text=True, check=False)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr == ("test setup: unknown argument '--chek'; usage: python "
                          "scripts/test_setup.py [--check]\n")


def test_the_tests_skip_with_the_set_up_command_as_hint() -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    import _phoenix
    import _postgres

    assert "scripts/test_setup.py" in _phoenix.INSTALL_HINT
    assert "scripts/test_setup.py" in _postgres.INSTALL_HINT
