"""The ``reactloop`` command: ``run`` a task, ``chat`` interactively, and more.

Each command lives in the module named after it (``run.py``, ``chat.py``, ``logs.py``…) and
is imported only when it is used (or listed by ``--help``), so ``reactloop --help`` stays fast;
the table below names them all, and a command module that fails to import is an error, never a
command that silently goes missing. Heavy imports (the agent, rich, model SDKs) happen inside
the commands.

Every command fails the same way: a :class:`~reactloop.errors.ReactloopError` that reaches
this group (a config, key or store that cannot be used, a busy session…) is one line,
``reactloop: <what is wrong and how to fix it>``, on stderr and exit status 1; never a
traceback.
"""

from __future__ import annotations

import importlib
from typing import Any

import click

__all__ = ["COMMANDS", "main"]

COMMANDS = {
    "chat": "reactloop.cli.chat:chat_command",
    "config": "reactloop.cli.config:config_group",
    "eval": "reactloop.cli.eval:eval_command",
    "keys": "reactloop.cli.keys:keys_group",
    "logs": "reactloop.cli.logs:logs_group",
    "mcp": "reactloop.cli.mcp:mcp_group",
    "models": "reactloop.cli.models:models_command",
    "run": "reactloop.cli.run:run_command",
    "serve": "reactloop.cli.serve:serve_command",
    "sessions": "reactloop.cli.sessions:sessions_group",
    "worker": "reactloop.cli.worker:worker_command",
}
"""Each command's name and where it is defined (``module:attribute``)."""


class _Main(click.Group):
    """The commands of :data:`COMMANDS`, imported when used; one error path for all."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module, _, attr = target.partition(":")
        # no try: a command module that cannot be imported is a broken install, said loudly
        command = getattr(importlib.import_module(module), attr)
        if not isinstance(command, click.Command):
            raise TypeError(f"{target} is not a click command")
        return command

    def invoke(self, ctx: click.Context) -> Any:
        from reactloop.errors import ReactloopError

        try:
            return super().invoke(ctx)
        except ReactloopError as exc:
            from reactloop.cli._console import fail
            from reactloop.cli._outcome import explain_error

            fail(explain_error(exc))


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="reactloop")
def main() -> None:
    """reactloop: run LLM agent loops — the model picks tools, reactloop runs them.

    \b
    Answers go to stdout; the trace, progress and summary to stderr.
    Shell completion (bash; zsh and fish likewise):
      eval "$(_REACTLOOP_COMPLETE=bash_source reactloop)"
    """
