"""A throw-away PostgreSQL cluster on 127.0.0.1 (tests and ``benchmarks/sessions_store.py``).

Why our own ``initdb`` + ``pg_ctl`` rather than pytest-postgresql or pgserver: the server binaries
are already on these machines (Debian ``postgresql-15``), the recipe is a dozen lines, and it
handles the one twist here — tests run as root, which PostgreSQL refuses — by running the
server as the ``postgres`` system user in a folder that user owns.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

INSTALL_HINT = ("PostgreSQL server binaries (initdb, pg_ctl) are needed: "
                "python scripts/test_setup.py, or apt-get install postgresql-15 (or your "
                "system's postgresql package)")


def find_binary(name: str) -> str | None:
    """``name`` on PATH, else in the newest /usr/lib/postgresql/*/bin."""
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"),
                        key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit()
                        else 0)
    return candidates[-1] if candidates else None


def missing() -> str | None:
    """Why a cluster cannot be started here, or ``None``."""
    if find_binary("initdb") is None or find_binary("pg_ctl") is None:
        return INSTALL_HINT
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError:
        return "psycopg is needed: pip install 'reactloop[postgres]'"
    if os.geteuid() == 0:
        import pwd

        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "as root, the server runs as the 'postgres' user, which does not exist"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def cluster(*, fast: bool = True) -> Iterator[str]:
    """Start a cluster; yield its base URL ``postgresql://postgres@127.0.0.1:PORT``; stop it.

    ``fast`` turns fsync off (tests); benchmarks pass ``fast=False`` for real durability.
    """
    initdb, pg_ctl = find_binary("initdb"), find_binary("pg_ctl")
    assert initdb and pg_ctl, INSTALL_HINT
    root = Path(tempfile.mkdtemp(prefix="reactloop-pg-"))
    as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    if as_user:
        shutil.chown(root, "postgres")
    data, port = root / "data", _free_port()
    options = f"-p {port} -c listen_addresses=127.0.0.1 -k {root} -c max_connections=300"
    if fast:
        options += " -c fsync=off -c full_page_writes=off"
    subprocess.run([*as_user, initdb, "-D", str(data), "-A", "trust", "-U", "postgres",
                    "-E", "UTF8", "--no-sync"], check=True, capture_output=True)
    try:
        subprocess.run([*as_user, pg_ctl, "-D", str(data), "-o", options, "-l",
                        str(root / "log"), "-w", "-t", "120", "start"],
                       check=True, capture_output=True)
        try:
            yield f"postgresql://postgres@127.0.0.1:{port}"
        finally:
            subprocess.run([*as_user, pg_ctl, "-D", str(data), "-m", "fast", "-w", "stop"],
                           check=False, capture_output=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def create_database(base_url: str, name: str) -> str:
    """A new empty database on the cluster; its URL."""
    import psycopg

    with psycopg.connect(f"{base_url}/postgres", autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return f"{base_url}/{name}"


def drop_database(base_url: str, name: str) -> None:
    import psycopg

    with psycopg.connect(f"{base_url}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
