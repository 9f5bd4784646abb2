"""Running the real ``reactloop`` command in a subprocess, each test in its own user dirs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def cli_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment of a CLI process: its own config/data dirs, the test agents importable,
    wide output, no provider keys from the developer's shell."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    path = os.pathsep.join(p for p in (str(TESTS), env.get("PYTHONPATH", "")) if p)
    env.update({"XDG_CONFIG_HOME": str(home / "config"), "XDG_DATA_HOME": str(home / "data"),
                "XDG_STATE_HOME": str(home / "state"), "PYTHONPATH": path, "COLUMNS": "200",
                "NO_COLOR": "1"})
    env.pop("REACTLOOP_CONFIG_DIR", None)
    env.update(extra)
    return env


def reactloop(home: Path, *args: str, stdin: str | None = None, cwd: Path | None = None,
              **env: str) -> subprocess.CompletedProcess[str]:
    """``reactloop ARGS`` with ``stdin`` (default: none, like /dev/null)."""
    return subprocess.run([sys.executable, "-m", "reactloop", *args],
                          input=stdin, stdin=None if stdin is not None else subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=600, check=False,
                          cwd=cwd, env=cli_env(home, **env))
