"""``reactloop models``: the model strings ``-m`` accepts, and the extra and key each needs."""

from __future__ import annotations

import json
import os

import click

__all__ = ["models_command"]

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
    from reactloop.cli._config_files import load_config, load_keys
    from reactloop.errors import UserError

    try:
        stored = load_keys()
    except UserError:
        stored = {}
    config = load_config()  # a wrong value: one line (the group's error path)
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
