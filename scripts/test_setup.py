"""Install what the test suite needs beyond ``pip install -e ".[test]"`` (the README's test
command runs this between pip and pytest; so does ``.ci/run``):

- the official AG-UI JavaScript client (``npm ci`` in ``tests/agui_client``; Node.js and npm
  from the system's package manager when missing) for ``tests/test_serve_agui.py``;
- the official A2A JavaScript SDK (``npm ci`` in ``tests/a2a_client``) for
  ``tests/test_serve_a2a.py``;
- MCP's reference server and the MCP Inspector CLI (``npm ci`` in ``tests/mcp_npm``) for
  ``tests/test_mcp_*.py``;
- Arize Phoenix, the real OTLP receiver of ``tests/test_otel_otlp.py``, in a virtualenv of its
  own (``$REACTLOOP_PHOENIX_VENV``, default ``~/.cache/reactloop/phoenix-venv``: its ~850 MB of
  dependencies would move the provider SDKs of reactloop's environment; about 3 minutes once);
- a Chromium for ``tests/test_serve_ui.py``: the system's when there is one, else
  ``playwright install chromium`` where it can download, else the Debian package when root;
- the PostgreSQL server binaries (``initdb``, ``pg_ctl``) for the PostgreSQL session stores.

Each step is skipped when what it installs is there, so a second run only checks. What cannot
be installed here (no network, not root) is reported in one line saying what to install; the
tests then skip with the same hint (under ``CI=1`` they fail instead). pytest itself installs
nothing.

Usage: python scripts/test_setup.py [--check]   (``--check``: report only, install nothing)
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import venv
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
AGUI_CLIENT = ROOT / "tests" / "agui_client"
A2A_CLIENT = ROOT / "tests" / "a2a_client"
MCP_NPM = ROOT / "tests" / "mcp_npm"
PHOENIX_VERSION = "20.26.1"
"""The Phoenix release the OTLP tests are written against (``tests/_phoenix.py``)."""
PHOENIX_VENV = Path(os.environ.get("REACTLOOP_PHOENIX_VENV")
                    or Path.home() / ".cache" / "reactloop" / "phoenix-venv")
CHROMIUM_CANDIDATES = ("/usr/lib/chromium/chromium", "/usr/bin/chromium",
                       "/usr/bin/chromium-browser", "/snap/bin/chromium")
"""Where a system Chromium lives (the order ``tests/test_serve_ui.py`` looks in)."""

Step = Callable[[bool], str]


def _run(command: Sequence[str], cwd: Path | None = None) -> bool:
    print(f"test setup: $ {' '.join(command)}", flush=True)
    try:
        return subprocess.run(list(command), cwd=cwd, check=False).returncode == 0
    except OSError as e:
        print(f"test setup: {command[0]}: {e}", flush=True)
        return False


def _as_root() -> list[str] | None:
    """The prefix that runs a command as root: nothing when root, ``sudo -n`` when sudo works
    without a password, else None."""
    if os.geteuid() == 0:
        return []
    sudo = shutil.which("sudo")
    if sudo and subprocess.run([sudo, "-n", "true"], capture_output=True,
                               check=False).returncode == 0:
        return [sudo, "-n"]
    return None


def _apt_install(*packages: str) -> bool:
    """Install Debian packages when this process may (root or password-less sudo)."""
    prefix = _as_root()
    if prefix is None or shutil.which("apt-get") is None:
        return False
    env = ["env", "DEBIAN_FRONTEND=noninteractive"]
    return (_run([*prefix, *env, "apt-get", "update", "-qq"])
            and _run([*prefix, *env, "apt-get", "install", "-y", "-qq", *packages]))


def _has_node() -> bool:
    return shutil.which("node") is not None and shutil.which("npm") is not None


def _npm_client(check: bool, what: str, folder: Path, package: str) -> str:
    """``npm ci`` in ``folder`` unless ``package`` is installed there (Node.js and npm from apt
    when missing)."""
    where = f"tests/{folder.name}"
    if (folder / "node_modules" / package).is_dir() and _has_node():
        return f"ok: {what} ({where}/node_modules)"
    if check:
        return f"missing: {what} (run `npm ci` in {where})"
    if not _has_node() and not _apt_install("nodejs", "npm"):
        return "missing: Node.js and npm (install them, e.g. apt-get install nodejs npm)"
    if not _run(["npm", "ci", "--no-audit", "--no-fund"], cwd=folder):
        return f"missing: {what} (`npm ci` in {where} failed, see above)"
    return f"installed: {what} ({where}/node_modules)"


def agui_client(check: bool) -> str:
    """``npm ci`` in tests/agui_client (Node.js and npm from apt when missing)."""
    return _npm_client(check, "the AG-UI client", AGUI_CLIENT, "@ag-ui/client")


def a2a_client(check: bool) -> str:
    """``npm ci`` in tests/a2a_client: the official A2A JavaScript SDK."""
    return _npm_client(check, "the A2A JavaScript SDK", A2A_CLIENT, "@a2a-js/sdk")


def mcp_npm(check: bool) -> str:
    """``npm ci`` in tests/mcp_npm: MCP's reference server (server-everything) and the MCP
    Inspector CLI (0.15.0, the last release that runs on Node 20)."""
    return _npm_client(check, "the MCP reference server and Inspector", MCP_NPM,
                       "@modelcontextprotocol/server-everything")


def phoenix(check: bool) -> str:
    """Arize Phoenix in its own virtualenv."""
    command = PHOENIX_VENV / "bin" / "phoenix"
    if command.is_file() and os.access(command, os.X_OK):
        return f"ok: Arize Phoenix ({PHOENIX_VENV})"
    hint = (f"python -m venv {PHOENIX_VENV} && "
            f"{PHOENIX_VENV}/bin/pip install 'arize-phoenix=={PHOENIX_VERSION}'")
    if check:
        return f"missing: Arize Phoenix ({hint})"
    venv.create(PHOENIX_VENV, with_pip=True)
    pip = str(PHOENIX_VENV / "bin" / "pip")
    if not _run([pip, "install", "-q", "--disable-pip-version-check",
                 f"arize-phoenix=={PHOENIX_VERSION}"]):
        return f"missing: Arize Phoenix (the install failed, see above; {hint})"
    return f"installed: Arize Phoenix ({PHOENIX_VENV})"


def system_chromium() -> str | None:
    """A system Chromium: ``$REACTLOOP_CHROMIUM``, a usual path, or ``chromium`` on PATH."""
    wanted = os.environ.get("REACTLOOP_CHROMIUM")
    if wanted:
        return wanted
    for path in CHROMIUM_CANDIDATES:
        if Path(path).is_file() and os.access(path, os.X_OK):
            return path
    return shutil.which("chromium")


def playwright_chromium() -> str | None:
    """The Chromium ``playwright install chromium`` downloaded, when it did."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    with sync_playwright() as p:
        path = p.chromium.executable_path
    return path if Path(path).is_file() else None


def chromium(check: bool) -> str:
    """A Chromium for the browser tests."""
    found = system_chromium() or playwright_chromium()
    if found:
        return f"ok: Chromium ({found})"
    hint = "python -m playwright install chromium, or apt-get install chromium"
    if check:
        return f"missing: Chromium ({hint})"
    if _run([sys.executable, "-m", "playwright", "install", "chromium"]) \
            and (found := playwright_chromium()):
        return f"installed: Chromium ({found})"
    if _apt_install("chromium") and (found := system_chromium()):
        return f"installed: Chromium ({found})"
    return f"missing: Chromium ({hint}; or set REACTLOOP_CHROMIUM to a Chromium binary)"


def _postgres_binary(name: str) -> str | None:
    return shutil.which(name) or next(iter(glob.glob(f"/usr/lib/postgresql/*/bin/{name}")),
                                      None)


def postgres(check: bool) -> str:
    """The PostgreSQL server binaries (tests/_postgres.py starts a throw-away cluster)."""
    if _postgres_binary("initdb") and _postgres_binary("pg_ctl"):
        return "ok: PostgreSQL server binaries"
    hint = "apt-get install postgresql (or your system's PostgreSQL server package)"
    if check:
        return f"missing: PostgreSQL server binaries ({hint})"
    if _apt_install("postgresql") and _postgres_binary("initdb"):
        return "installed: PostgreSQL server binaries"
    return f"missing: PostgreSQL server binaries ({hint})"


STEPS: tuple[Step, ...] = (agui_client, a2a_client, mcp_npm, phoenix, chromium, postgres)


def main(argv: Sequence[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    unknown = [a for a in args if a != "--check"]
    if unknown:
        print(f"test setup: unknown argument {unknown[0]!r}; usage: "
              "python scripts/test_setup.py [--check]", file=sys.stderr)
        return 2
    for step in STEPS:
        print(f"test setup: {step('--check' in args)}", flush=True)
    return 0  # what is missing makes its tests skip with the same hint (fail under CI)


if __name__ == "__main__":
    raise SystemExit(main())
