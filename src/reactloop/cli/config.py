"""``reactloop config``: read and change the configuration file (see :mod:`reactloop.cli._config_files`)."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from reactloop.cli._console import fail

__all__ = ["config_group", "load_or_fail"]


def load_or_fail() -> Any:
    """The config (a broken file: one line, exit 1)."""
    from reactloop.cli._config_files import load_config
    from reactloop.errors import UserError

    try:
        return load_config(check=False)  # a wrong value must stay fixable from here
    except UserError as exc:
        fail(str(exc))


_model_option = click.option("--model", "-m", metavar="MODEL",
                             help="Read or write this model's own options "
                                  "([models.\"MODEL\"] in the file).")


@click.group("config")
def config_group() -> None:
    """Read and change the configuration file (TOML).

    \b
    Keys: model, base_url, notice, store, log; per model (-m MODEL):
    temperature, max_tokens, base_url, text_tools.
    """


@config_group.command("path")
def config_path() -> None:
    """Print where the configuration file is (it may not exist yet)."""
    from reactloop.cli._config_files import config_dir

    click.echo(str(config_dir() / "config.toml"))


@config_group.command("get")
@click.argument("key", required=False)
@_model_option
def config_get(key: str | None, model: str | None) -> None:
    """Print KEY's value (nothing set: exit 1), or the whole file without KEY."""
    config = load_or_fail()
    if key is None:
        if config.path.exists():
            click.echo(config.path.read_text(encoding="utf-8"), nl=False)
        return
    value = config.get(key, model)
    if value is None:
        sys.exit(1)
    click.echo(json.dumps(value) if isinstance(value, bool) else str(value))


@config_group.command("set")
@click.argument("key")
@click.argument("value")
@_model_option
def config_set(key: str, value: str, model: str | None) -> None:
    """Set KEY to VALUE (e.g. reactloop config set model openai:gpt-4o-mini)."""
    from reactloop.cli._config_files import save_config
    from reactloop.errors import UserError

    config = load_or_fail()
    try:
        config.set(key, value, model)
    except UserError as exc:
        fail(str(exc))
    save_config(config)


@config_group.command("unset")
@click.argument("key")
@_model_option
def config_unset(key: str, model: str | None) -> None:
    """Remove KEY from the file."""
    from reactloop.cli._config_files import save_config

    config = load_or_fail()
    if config.unset(key, model):
        save_config(config)
