"""Turn a model string (``"local"``, ``"openai:gpt-4o-mini"``, …) into a :class:`Model`.

Only the adapter that is named gets imported, and only its SDK.
"""

from __future__ import annotations

import importlib.util

from reactloop.errors import ModelNotAvailable, UserError
from reactloop.models._base import Model

__all__ = ["KNOWN_PREFIXES", "require_extra", "resolve_model"]

KNOWN_PREFIXES = ("local", "openai", "anthropic", "gemini", "ollama")

OLLAMA_BASE_URL = "http://localhost:11434/v1"


def require_extra(module: str, extra: str, what: str) -> None:
    """Raise :class:`ModelNotAvailable` naming the extra when ``module`` is not installed."""
    if importlib.util.find_spec(module) is None:
        raise ModelNotAvailable(
            f"{what} needs the '{module}' package, which is not installed; "
            f"install it with: pip install 'reactloop[{extra}]'"
        )


def resolve_model(model: Model | str | None) -> Model:
    if isinstance(model, Model):
        return model
    if model is None:
        model = "local"
    if not isinstance(model, str):
        raise UserError(
            f"model must be a reactloop Model or a string such as 'local' or "
            f"'openai:gpt-4o-mini', got {type(model).__name__}"
        )
    prefix, _, name = model.partition(":")
    prefix = prefix.strip().lower()
    if prefix == "local":
        require_extra("llama_cpp", "local", "the embedded model")
        from reactloop.models.local import LocalModel

        return LocalModel(name or None)
    if prefix in ("openai", "ollama"):
        if not name:
            raise UserError(f"model {model!r} names no model; write e.g. '{prefix}:<model-name>'")
        require_extra("openai", "openai", f"model {model!r}")
        from reactloop.models.openai import OpenAIModel

        if prefix == "ollama":
            return OpenAIModel(name, base_url=OLLAMA_BASE_URL, api_key="ollama")
        return OpenAIModel(name)
    if prefix == "anthropic":
        if not name:
            raise UserError("model 'anthropic' names no model; write e.g. 'anthropic:<model-name>'")
        require_extra("anthropic", "anthropic", f"model {model!r}")
        from reactloop.models.anthropic import AnthropicModel

        return AnthropicModel(name)
    if prefix == "gemini":
        if not name:
            raise UserError("model 'gemini' names no model; write e.g. 'gemini:<model-name>'")
        require_extra("google.genai", "gemini", f"model {model!r}")
        from reactloop.models.gemini import GeminiModel

        return GeminiModel(name)
    raise UserError(
        f"unknown model {model!r}: use 'local', 'local:/path/to/model.gguf', "
        "'openai:<name>', 'anthropic:<name>', 'gemini:<name>', 'ollama:<name>' or a Model object"
    )
