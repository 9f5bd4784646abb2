"""Structure: size budgets, one-way imports, no private reads (scripts/check_structure.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from _scripts import load_script

ROOT = Path(__file__).resolve().parents[1]


def test_structure_checks_pass() -> None:
    """Size budgets, one-way imports (no cycles, TYPE_CHECKING included) and no reads of
    another object's private attributes: scripts/check_structure.py, also run by .ci/run."""
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "check_structure.py")],
                         capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stdout


def test_models_import_nothing_from_tools() -> None:
    """Models sit below tools: an import from ``reactloop.models.*`` into ``reactloop.tools.*``
    is reported (a neutral module, e.g. ``reactloop._ranking``, holds what both need), and so
    is an exception that no longer happens."""
    check = load_script("check_structure")
    graph = {"reactloop.models.fake": {"reactloop.tools._select", "reactloop.messages"},
             "reactloop.tools._select": {"reactloop._ranking"}, "reactloop._ranking": set(),
             "reactloop.messages": set()}
    assert check.layer_breaches(graph, set()) == [
        "reactloop.models.fake imports reactloop.tools._select: reactloop.models must import "
        "nothing from reactloop.tools (move what both need to a neutral module)"]
    assert check.layer_breaches(graph, {("reactloop.models.fake", "reactloop.tools._select")}) \
        == []
    gone = {("reactloop.models.gone", "reactloop.tools._tool")}
    assert check.layer_breaches(graph, {*gone, ("reactloop.models.fake",
                                                "reactloop.tools._select")}) == [
        "reactloop.models.gone no longer imports reactloop.tools._tool: remove the entry from "
        "LAYER_EXCEPTIONS"]
    real = check.imports(check.modules())
    assert check.layer_breaches(real) == []
    assert not any(t.startswith("reactloop.tools") for t in real["reactloop.models"])
