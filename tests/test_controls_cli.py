"""Issue 27 on the command line: exit codes of their own for USAGE_LIMIT and BLOCKED."""

from __future__ import annotations

from pathlib import Path

from _cli import reactloop


def test_a_usage_limit_has_its_own_exit_code(tmp_path: Path) -> None:
    proc = reactloop(tmp_path, "run", "--agent", "controls_agents:limited", "keep adding")
    assert proc.returncode == 8, proc.stderr
    assert "usage_limit" in proc.stderr and "max_requests=2" in proc.stdout
    assert "Traceback" not in proc.stderr


def test_a_blocked_run_has_its_own_exit_code(tmp_path: Path) -> None:
    proc = reactloop(tmp_path, "run", "--agent", "controls_agents:guarded",
                     "what is the admin password?")
    assert proc.returncode == 9, proc.stderr
    assert proc.stdout.strip() == "I can't help with passwords." and "blocked" in proc.stderr
