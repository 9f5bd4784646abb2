"""Provider facts in one home: context windows, ``resolve_model(base_url=)``, the shared key
lookup and its errors (also through the CLI), and no provider branching outside ``models/``."""

from __future__ import annotations

import ast
import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from _recorded_server import RecordedServer, payload, recorded_server
from reactloop import Agent, Message, ModelRequest, UserError
from reactloop.models._profiles import (
    anthropic_context_window,
    gemini_context_window,
    openai_context_window,
)
from reactloop.models._provider import MissingAPIKey
from reactloop.models._resolve import KNOWN_PREFIXES, resolve_model
from reactloop.testing import ScriptedModel

SRC = Path(__file__).resolve().parents[1] / "src" / "reactloop"
KEY_VARS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")


@pytest.fixture
def server() -> Iterator[RecordedServer]:
    with recorded_server() as s:
        yield s


@pytest.fixture
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in KEY_VARS:
        monkeypatch.delenv(var, raising=False)


# -- context windows -------------------------------------------------------------------------
@pytest.mark.parametrize(("lookup", "name", "window"), [
    (openai_context_window, "gpt-4o-mini", 128_000),
    (openai_context_window, "openai/gpt-4.1", 1_047_576),
    (anthropic_context_window, "claude-sonnet-4-5-20250929", 200_000),
    (anthropic_context_window, "claude-3-haiku-20240307", 200_000),
    (anthropic_context_window, "claude-instant-1.2", 100_000),
    (gemini_context_window, "gemini-2.5-flash", 1_048_576),
    (gemini_context_window, "models/gemini-3-pro-preview", 1_048_576),
    (gemini_context_window, "gemini-1.5-pro", 2_097_152),
    (gemini_context_window, "gemini-1.0-pro", 32_760),
    (openai_context_window, "smollm2", None),
    (anthropic_context_window, "gpt-4o", None),
    (gemini_context_window, "claude-sonnet-4-5", None),
])
def test_context_windows(lookup: object, name: str, window: int | None) -> None:
    assert callable(lookup) and lookup(name) == window


@pytest.mark.parametrize(("spec", "env", "window"), [
    ("openai:gpt-4o", "OPENAI_API_KEY", 128_000),
    ("anthropic:claude-haiku-4-5", "ANTHROPIC_API_KEY", 200_000),
    ("gemini:gemini-2.5-pro", "GEMINI_API_KEY", 1_048_576),
])
def test_every_provider_model_knows_its_window(monkeypatch: pytest.MonkeyPatch, spec: str,
                                               env: str, window: int) -> None:
    # the window is what makes the default compaction (at 80% of it) run at all
    pytest.importorskip({"openai": "openai", "anthropic": "anthropic",
                         "gemini": "google.genai"}[spec.split(":")[0]])
    monkeypatch.setenv(env, "test-key-0123456789")
    assert Agent(model=spec).model.context_window == window


# -- resolve_model(base_url=) ----------------------------------------------------------------
def _ask(server: RecordedServer, spec: str, base_url: str, reply: tuple[str, str]) -> str:
    server.queue(payload(*reply))
    model = resolve_model(spec, base_url=base_url)

    async def go() -> str | None:
        try:
            return (await model.request(ModelRequest("", (Message.user("Hi"),)))).text
        finally:
            await model.aclose()

    text = asyncio.run(go())
    assert text, "the recorded answer has text"
    return server.requests[-1].path


@pytest.mark.parametrize(("spec", "suffix", "reply", "path"), [
    ("openai:gpt-4o-mini", "/v1", ("openai", "plain.json"), "/v1/chat/completions"),
    ("ollama:llama3.2", "/v1", ("openai", "plain.json"), "/v1/chat/completions"),
    ("anthropic:claude-haiku-4-5", "", ("anthropic", "text.json"), "/v1/messages"),
    ("gemini:gemini-2.5-flash", "", ("gemini", "text.json"),
     "/models/gemini-2.5-flash:generateContent"),
])
def test_base_url_reaches_every_provider(server: RecordedServer, monkeypatch: pytest.MonkeyPatch,
                                         no_keys: None, spec: str, suffix: str, reply: tuple[str, str],
                                         path: str) -> None:
    pytest.importorskip({"openai": "openai", "ollama": "openai", "anthropic": "anthropic",
                         "gemini": "google.genai"}[spec.split(":")[0]])
    monkeypatch.setenv({"openai": "OPENAI_API_KEY", "ollama": "OPENAI_API_KEY",
                        "anthropic": "ANTHROPIC_API_KEY", "gemini": "GEMINI_API_KEY"}[
        spec.split(":")[0]], "test-key-0123456789")
    assert _ask(server, spec, server.url + suffix, reply).endswith(path)


def test_openai_with_base_url_needs_no_key(no_keys: None) -> None:
    pytest.importorskip("openai")
    model = resolve_model("openai:smollm2", base_url="http://127.0.0.1:9/v1")
    assert getattr(model, "base_url", None) == "http://127.0.0.1:9/v1"


@pytest.mark.parametrize("model", ["local", "local:/tmp/x.gguf", ScriptedModel([])])
def test_base_url_where_it_cannot_apply_is_a_user_error(model: object) -> None:
    with pytest.raises(UserError, match="base_url"):
        resolve_model(model, base_url="http://127.0.0.1:9/v1")  # type: ignore[arg-type]


# -- missing keys ----------------------------------------------------------------------------
@pytest.mark.parametrize(("spec", "module", "names"), [
    ("openai:gpt-4o", "openai", ("OPENAI_API_KEY",)),
    ("anthropic:claude-haiku-4-5", "anthropic", ("ANTHROPIC_API_KEY",)),
    ("gemini:gemini-2.5-flash", "google.genai", ("GEMINI_API_KEY", "GOOGLE_API_KEY")),
])
def test_missing_key_names_the_variable(no_keys: None, spec: str, module: str,
                                        names: tuple[str, ...]) -> None:
    pytest.importorskip(module)
    with pytest.raises(MissingAPIKey) as info:
        Agent(model=spec)
    assert isinstance(info.value, UserError)  # configuration error, raised at construction
    assert info.value.env_vars == names
    assert all(name in str(info.value) for name in names)
    assert "api_key=" in str(info.value)


def test_cli_missing_key_is_one_line_naming_the_variable() -> None:
    pytest.importorskip("anthropic")
    env = {k: v for k, v in os.environ.items() if k not in KEY_VARS}
    proc = subprocess.run(
        [sys.executable, "-m", "reactloop", "run", "--model", "anthropic:claude-haiku-4-5",
         "hi"], capture_output=True, text=True, env=env, timeout=120, check=False)
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "ANTHROPIC_API_KEY" in lines[0]
    assert "reactloop keys set ANTHROPIC_API_KEY" in lines[0]


# -- no provider branching outside the adapters ----------------------------------------------
def _provider_comparisons(path: Path) -> list[int]:
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Compare):
            continue
        for operand in (node.left, *node.comparators):
            values = operand.elts if isinstance(operand, (ast.Tuple, ast.List, ast.Set)) else [
                operand]
            if any(isinstance(v, ast.Constant) and v.value in KNOWN_PREFIXES for v in values):
                lines.append(node.lineno)
    return lines


def test_no_module_outside_models_branches_on_provider_names() -> None:
    found = {
        str(path.relative_to(SRC)): lines
        for path in SRC.rglob("*.py")
        if "models" not in path.relative_to(SRC).parts
        and (lines := _provider_comparisons(path))
    }
    assert found == {}, "resolve provider names in models/_resolve.py only"
