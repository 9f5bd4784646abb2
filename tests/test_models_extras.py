"""A provider whose SDK (optional extra) is missing: a clear error naming the extra to install.

``sys.modules[name] = None`` is how Python itself marks a module as not importable: both
``import name`` and ``importlib.util.find_spec(name)`` then behave as if it were not installed,
and monkeypatch restores the real module after each test.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest

from reactloop import Agent
from reactloop.errors import ModelNotAvailable, UserError
from reactloop.models._base import Model

SDK = {"openai": "openai", "ollama": "openai", "anthropic": "anthropic", "gemini": "google.genai"}
EXTRA = {"openai": "openai", "ollama": "openai", "anthropic": "anthropic", "gemini": "gemini"}


def _hide(monkeypatch: pytest.MonkeyPatch, module: str) -> None:
    monkeypatch.setitem(sys.modules, module, None)


@pytest.mark.parametrize("prefix", sorted(SDK))
def test_model_string_names_the_missing_extra(monkeypatch: pytest.MonkeyPatch,
                                              prefix: str) -> None:
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.setenv(var, "test-key")  # so only the missing SDK can be the problem
    _hide(monkeypatch, SDK[prefix])
    with pytest.raises(ModelNotAvailable) as info:
        Agent(model=f"{prefix}:some-model")
    message = str(info.value)
    assert f"pip install 'reactloop[{EXTRA[prefix]}]'" in message
    assert f"'{SDK[prefix]}'" in message
    assert isinstance(info.value, UserError)  # developer misuse, raised at construction


def _openai(name: str) -> Model:
    from reactloop.models.openai import OpenAIModel

    return OpenAIModel(name, api_key="test-key")


def _anthropic(name: str) -> Model:
    from reactloop.models.anthropic import AnthropicModel

    return AnthropicModel(name, api_key="test-key")


def _gemini(name: str) -> Model:
    from reactloop.models.gemini import GeminiModel

    return GeminiModel(name, api_key="test-key")


@pytest.mark.parametrize(("build", "module", "extra"), [
    (_openai, "openai", "openai"),
    (_anthropic, "anthropic", "anthropic"),
    (_gemini, "google.genai", "gemini"),
])
def test_adapter_class_names_the_missing_extra(monkeypatch: pytest.MonkeyPatch,
                                               build: Callable[[str], Any], module: str,
                                               extra: str) -> None:
    _hide(monkeypatch, module)
    with pytest.raises(ModelNotAvailable, match=rf"pip install 'reactloop\[{extra}\]'"):
        build("some-model")


@pytest.mark.parametrize("prefix", ["openai", "anthropic", "gemini", "ollama"])
def test_model_string_without_a_name_is_a_user_error(prefix: str) -> None:
    with pytest.raises(UserError, match=rf"'{prefix}:<model-name>'"):
        Agent(model=f"{prefix}:")


def test_unknown_prefix_lists_the_known_ones() -> None:
    with pytest.raises(UserError, match=r"'anthropic:<name>'.*'gemini:<name>'"):
        Agent(model="mistral:large")


def test_adapter_modules_import_without_their_sdk() -> None:
    # the adapters themselves import their SDK lazily: importing one with the SDK missing works,
    # only building a model says what to install
    code = (
        "import sys\n"
        "for name in ('openai', 'anthropic', 'google.genai', 'google'):\n"
        "    sys.modules[name] = None\n"
        "import reactloop.models.openai, reactloop.models.anthropic, reactloop.models.gemini\n"
        "import reactloop.models.text_protocol\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
