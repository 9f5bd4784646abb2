"""Arize Phoenix on 127.0.0.1: a real OpenTelemetry receiver (OTLP/HTTP on ``/v1/traces``)
whose REST API gives the spans back (``GET /v1/projects/{project}/spans``).

Phoenix is heavy (about 850 MB of dependencies, some of which would move the provider SDKs of
reactloop's own environment), so it lives in a virtualenv of its own, made by ``scripts/test_setup.py``:
``$REACTLOOP_PHOENIX_VENV`` (default ``~/.cache/reactloop/phoenix-venv``). Measured on the
2-core machine: about 3 minutes to install, 20-45 s to start.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

VERSION = "20.26.1"
VENV = Path(os.environ.get("REACTLOOP_PHOENIX_VENV")
            or Path.home() / ".cache" / "reactloop" / "phoenix-venv")
INSTALL_HINT = (f"Arize Phoenix is needed as the OTLP receiver: python -m venv {VENV} && "
                f"{VENV}/bin/pip install 'arize-phoenix=={VERSION}' (what scripts/test_setup.py does)")
START_SECONDS = 300.0


def executable() -> str | None:
    """The ``phoenix`` command: in the virtualenv, else on PATH."""
    candidate = VENV / "bin" / "phoenix"
    if candidate.is_file() and os.access(candidate, os.X_OK):
        return str(candidate)
    return shutil.which("phoenix")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/healthz", timeout=2) as r:
            return r.status == 200
    except (urllib.error.URLError, OSError):
        return False


@contextmanager
def phoenix(workdir: Path) -> Iterator[str]:
    """A Phoenix server on loopback ports, storing in ``workdir``; yields its base URL."""
    command = executable()
    if command is None:
        raise FileNotFoundError(INSTALL_HINT)
    port = _free_port()
    env = {**os.environ, "PHOENIX_WORKING_DIR": str(workdir), "PHOENIX_HOST": "127.0.0.1",
           "PHOENIX_PORT": str(port), "PHOENIX_GRPC_PORT": str(_free_port()),
           "PHOENIX_TELEMETRY_ENABLED": "false"}
    env.pop("PYTHONPATH", None)  # its own virtualenv, not reactloop's sources
    log = (workdir / "phoenix.log").open("wb")
    proc = subprocess.Popen([command, "serve"], env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_SECONDS
        while not _healthy(url):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("Phoenix did not start: "
                                   + (workdir / "phoenix.log").read_text()[-2000:])
            time.sleep(0.25)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def all_spans(url: str, project: str = "default") -> list[dict[str, Any]]:
    """Every span Phoenix has stored in ``project``."""
    out: list[dict[str, Any]] = []
    cursor = None
    while True:
        query = "limit=1000" + (f"&cursor={cursor}" if cursor else "")
        with urllib.request.urlopen(f"{url}/v1/projects/{project}/spans?{query}",
                                    timeout=10) as r:
            page = json.load(r)
        out += page["data"]
        cursor = page.get("next_cursor")
        if not cursor:
            return out


def wait_for(url: str, keep: Callable[[dict[str, Any]], bool], count: int,
             timeout: float = 60) -> list[dict[str, Any]]:
    """Poll until Phoenix holds ``count`` spans that ``keep`` accepts (it ingests
    asynchronously); returns those found by the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        found = [s for s in all_spans(url) if keep(s)]
        if len(found) >= count or time.monotonic() > deadline:
            return found
        time.sleep(0.2)
