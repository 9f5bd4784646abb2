"""One error path for every command: a store that cannot be opened (a file that is not a
database, a PostgreSQL URL nobody answers) is one line on stderr and exit status 1 — on
``run``, ``chat``, ``logs``, ``logs show`` and the ``sessions`` commands alike, never a
traceback."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from _cli import reactloop

COMMANDS = [
    ("run", "--agent", "cli_agents:completed", "hello"),
    ("run", "--agent", "cli_agents:completed", "--json", "hello"),
    ("chat", "--agent", "cli_agents:completed"),
    ("logs",),
    ("logs", "show"),
    ("logs", "show", "abc"),
    ("sessions", "list"),
    ("sessions", "show", "abc"),
    ("sessions", "delete", "abc"),
]


def _closed_port() -> int:
    with socket.socket() as s:  # bound, then closed: nothing listens there
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(params=["not_a_database", "unreachable_postgres"])
def bad_store(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, str]:
    """A store that cannot be opened, and what its one line must name."""
    if request.param == "not_a_database":
        path = tmp_path / "notes.sqlite3"
        path.write_text("these are notes, not a database\n" * 200)
        return str(path), "not a SQLite database"
    url = f"postgresql://someone:hunter2secret@127.0.0.1:{_closed_port()}/db"
    return url, "cannot be reached"


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_a_store_that_cannot_be_opened_is_one_line(command: tuple[str, ...],
                                                   bad_store: tuple[str, str],
                                                   tmp_path: Path) -> None:
    store, reason = bad_store
    proc = reactloop(tmp_path, *command, "--store", store, stdin="hello\n")
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("reactloop: ") and reason in lines[0], lines[0]
    assert "hunter2secret" not in proc.stderr + proc.stdout


def test_every_command_of_the_table_is_a_command_of_its_module() -> None:
    import click

    from reactloop.cli import COMMANDS, main

    ctx = click.Context(main)
    for name in COMMANDS:
        command = main.get_command(ctx, name)
        assert isinstance(command, click.Command) and command.name == name


def test_a_command_module_that_fails_to_import_fails_loudly(tmp_path: Path) -> None:
    """Never a command that silently goes missing (the old ``__import__`` dropped it)."""
    import subprocess
    import sys

    code = ("from reactloop.cli import COMMANDS, main\n"
            "COMMANDS['broken'] = 'reactloop.cli.no_such_module:command'\n"
            "main(['--help'])\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=False, timeout=120)
    assert proc.returncode != 0
    assert "reactloop.cli.no_such_module" in proc.stderr


def test_listing_the_commands_imports_nothing_heavy() -> None:
    """``reactloop --help`` imports every command module: they import rich, SDKs and the
    agent only when they run."""
    import subprocess
    import sys

    code = ("import sys\nfrom reactloop.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print('heavy:' + ','.join(m for m in ('rich', 'prompt_toolkit', 'openai', 'llama_cpp', 'mcp', "
            "'opentelemetry', 'temporalio', 'pydantic') if m in sys.modules))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, timeout=120)
    assert proc.stdout.splitlines()[-1] == "heavy:", proc.stdout
