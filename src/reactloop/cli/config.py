"""``reactloop config``, ``reactloop keys`` and ``reactloop models``."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import click

__all__ = ["config_group", "keys_group", "models_command"]


def _fail(message: str) -> None:
    click.echo(f"reactloop: {message}", err=True)
    sys.exit(1)


def _load() -> Any:
    from reactloop.cli._config import load_config
    from reactloop.errors import UserError

    try:
        return load_config()
    except UserError as exc:
        _fail(str(exc))


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
    from reactloop.cli._config import config_dir

    click.echo(str(config_dir() / "config.toml"))


@config_group.command("get")
@click.argument("key", required=False)
@_model_option
def config_get(key: str | None, model: str | None) -> None:
    """Print KEY's value (nothing set: exit 1), or the whole file without KEY."""
    config = _load()
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
    from reactloop.cli._config import save_config
    from reactloop.errors import UserError

    config = _load()
    try:
        config.set(key, value, model)
    except UserError as exc:
        _fail(str(exc))
    save_config(config)


@config_group.command("unset")
@click.argument("key")
@_model_option
def config_unset(key: str, model: str | None) -> None:
    """Remove KEY from the file."""
    from reactloop.cli._config import save_config

    config = _load()
    if config.unset(key, model):
        save_config(config)


# -- keys -----------------------------------------------------------------------------------------
@click.group("keys")
def keys_group() -> None:
    """Store API keys (in a file only you can read; environment variables still win)."""


@keys_group.command("set")
@click.argument("name")
@click.option("--value", help="The key (default: prompted for, hidden, or read from stdin).")
def keys_set(name: str, value: str | None) -> None:
    """Store the key NAME: a provider (openai, anthropic, gemini) or a variable name."""
    from reactloop.cli._config import key_variable, load_keys, save_keys
    from reactloop.errors import UserError

    try:
        var = key_variable(name)
        keys = load_keys()
    except UserError as exc:
        _fail(str(exc))
    if value is None:
        if sys.stdin.isatty():
            value = click.prompt(f"{var}", hide_input=True)
        else:
            value = sys.stdin.readline().strip()
    if not value:
        _fail("the key is empty; nothing stored")
    keys[var] = value
    path = save_keys(keys)
    click.echo(f"stored {var} in {path}", err=True)


@keys_group.command("list")
def keys_list() -> None:
    """The stored keys' names (never their values)."""
    from reactloop.cli._config import load_keys

    for var in sorted(load_keys()):
        note = " (the environment variable is set and wins)" if os.environ.get(var) else ""
        click.echo(f"{var}{note}")


@keys_group.command("delete")
@click.argument("name")
def keys_delete(name: str) -> None:
    """Remove a stored key."""
    from reactloop.cli._config import key_variable, load_keys, save_keys
    from reactloop.errors import UserError

    try:
        var = key_variable(name)
        keys = load_keys()
    except UserError as exc:
        _fail(str(exc))
    if keys.pop(var, None) is None:
        _fail(f"no stored key {var}")
    save_keys(keys)


@keys_group.command("path")
def keys_path_command() -> None:
    """Print where the keys are stored."""
    from reactloop.cli._config import keys_path

    click.echo(str(keys_path()))


# -- models ---------------------------------------------------------------------------------------
_MODELS = [
    ("local", "the embedded SmolLM2-135M demo model (offline)", "local", "llama_cpp", None),
    ("local:/path/model.gguf", "any GGUF model file, run in-process", "local", "llama_cpp",
     None),
    ("openai:<name>", "OpenAI (e.g. openai:gpt-4o-mini)", "openai", "openai", "OPENAI_API_KEY"),
    ("openai:<name> --base-url URL", "an OpenAI-compatible server (vLLM, llama.cpp, LM Studio)",
     "openai", "openai", None),
    ("ollama:<name>", "Ollama at http://localhost:11434 (e.g. ollama:llama3.2)", "openai",
     "openai", None),
    ("anthropic:<name>", "Anthropic (e.g. anthropic:claude-3-5-haiku-latest)", "anthropic",
     "anthropic", "ANTHROPIC_API_KEY"),
    ("gemini:<name>", "Google Gemini (e.g. gemini:gemini-2.0-flash)", "gemini", "google.genai",
     "GEMINI_API_KEY"),
]


def _key_state(var: str | None, stored: dict[str, str]) -> str:
    if var is None:
        return "none needed"
    if os.environ.get(var) or (var == "GEMINI_API_KEY" and os.environ.get("GOOGLE_API_KEY")):
        return f"{var} (set)"
    if var in stored:
        return f"{var} (stored)"
    return f"{var} (missing: reactloop keys set {var.split('_')[0].lower()})"


def _installed(module: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


@click.command("models")
@click.option("--json", "as_json", is_flag=True, help="Print the list as JSON.")
def models_command(as_json: bool) -> None:
    """The model strings -m accepts, and the extra and key each needs."""
    from reactloop.cli._config import load_keys
    from reactloop.errors import UserError

    try:
        stored = load_keys()
    except UserError:
        stored = {}
    config = _load()
    rows = [{"model": spec, "what": what, "extra": extra, "installed": _installed(module),
             "key": var, "key_state": _key_state(var, stored)}
            for spec, what, extra, module, var in _MODELS]
    default = config.get("model") or "local"
    if as_json:
        click.echo(json.dumps({"default": default, "models": rows,
                               "configured": sorted(config.models)}, indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(box=None, pad_edge=False)
    table.add_column("model", no_wrap=True)
    table.add_column("what")
    table.add_column("extra")
    table.add_column("key")
    for r in rows:
        extra = (f"[green]{r['extra']} ✓[/]" if r["installed"]
                 else f"[red]missing: pip install 'reactloop[{r['extra']}]'[/]")
        table.add_row(str(r["model"]), str(r["what"]), extra, str(r["key_state"]))
    console = Console(highlight=False)
    console.print(table)
    console.print(f"default: {default}" + (f" · configured: {', '.join(sorted(config.models))}"
                                          if config.models else ""), markup=False)
