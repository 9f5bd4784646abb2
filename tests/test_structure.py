"""Structure: size budgets, one-way imports, no private reads (scripts/check_structure.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_structure_checks_pass() -> None:
    """Size budgets, one-way imports (no cycles, TYPE_CHECKING included) and no reads of
    another object's private attributes: scripts/check_structure.py, also run by .ci/run."""
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "check_structure.py")],
                         capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stdout
