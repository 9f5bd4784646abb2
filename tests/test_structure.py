"""Structure: size budgets, one-way imports, no private reads (scripts/check_structure.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

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


def _check_structure() -> Any:
    return load_script("check_structure")


def _cycles_of(tmp_path: Path, files: dict[str, str]) -> list[list[str]]:
    """The import cycles of a package ``reactloop`` made of ``files``."""
    root = tmp_path / "reactloop"
    for name, text in {"__init__.py": "", **files}.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    check = _check_structure()
    cycles: list[list[str]] = check.cycles(check.imports(check.modules(root)))
    return cycles


def test_a_submodule_importing_back_from_its_lazy_parent_is_a_cycle(tmp_path: Path) -> None:
    """The old CLI's loop: cli/__init__ imports the command module inside a function, and the
    command module imports private helpers from cli/__init__."""
    cycles = _cycles_of(tmp_path, {
        "cli/__init__.py": "def run():\n    from reactloop.cli._run import go\n    go()\n"
                           "def _fail():\n    pass\n",
        "cli/_run.py": "from reactloop.cli import _fail\n\ndef go():\n    _fail()\n",
    })
    assert cycles == [["reactloop.cli", "reactloop.cli._run"]]


def test_a_package_re_exporting_its_submodules_is_no_cycle(tmp_path: Path) -> None:
    cycles = _cycles_of(tmp_path, {
        "tools/__init__.py": "from reactloop.tools._tool import Tool\n"
                             "from reactloop.tools import _registry\n",
        "tools/_tool.py": "class Tool:\n    pass\n",
        "tools/_registry.py": "from reactloop.tools._tool import Tool\n",
        "agent.py": "from reactloop.tools import Tool\n",
    })
    assert cycles == []


def test_an_edge_to_the_root_package_that_reaches_back_is_a_cycle(tmp_path: Path) -> None:
    """``from reactloop import __version__`` in a module the package ``__init__`` reaches."""
    cycles = _cycles_of(tmp_path, {
        "__init__.py": "from reactloop._otel import trace\n__version__ = '1'\n",
        "_otel.py": "def trace():\n    from reactloop import __version__\n    return __version__\n",
    })
    assert cycles == [["reactloop", "reactloop._otel"]]
