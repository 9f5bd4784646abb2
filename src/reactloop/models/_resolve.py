"""Turn a model string (``"local"``, ``"openai:gpt-4o-mini"``, …) into a :class:`Model`.

Only the adapter that is named gets imported, and only its SDK. This is the one place that
maps provider names to adapters; callers (the agent, the CLI) never branch on them.
"""

from __future__ import annotations

from reactloop.errors import UserError
from reactloop.models._base import Model
from reactloop.models._provider import require_extra

__all__ = ["KNOWN_PREFIXES", "OLLAMA_BASE_URL", "resolve_model"]

KNOWN_PREFIXES = ("local", "openai", "anthropic", "gemini", "ollama")

OLLAMA_BASE_URL = "http://localhost:11434/v1"


def resolve_model(model: Model | str | None, base_url: str | None = None) -> Model:
    """The model a string names (a :class:`Model` is returned as it is).

    Args:
        model: ``"local"``, ``"local:/path.gguf"``, ``"openai:<name>"``,
            ``"anthropic:<name>"``, ``"gemini:<name>"``, ``"ollama:<name>"``, or a Model.
        base_url: another endpoint for a provider model: an OpenAI-compatible server for
            ``openai:``/``ollama:``, a proxy for ``anthropic:``/``gemini:``.
    """
    if isinstance(model, Model):
        if base_url:
            raise UserError("base_url applies to a model string; give the Model object its "
                            "own base_url instead")
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
        if base_url:
            raise UserError(f"base_url cannot be used with the embedded model {model!r}; for a "
                            "local server use 'openai:<name>' with base_url")
        require_extra("llama_cpp", "local", "the embedded model")
        from reactloop.models.local import LocalModel

        return LocalModel(name or None)
    if prefix not in KNOWN_PREFIXES:
        raise UserError(
            f"unknown model {model!r}: use 'local', 'local:/path/to/model.gguf', "
            "'openai:<name>', 'anthropic:<name>', 'gemini:<name>', 'ollama:<name>' or a Model "
            "object"
        )
    if not name:
        raise UserError(f"model {model!r} names no model; write e.g. '{prefix}:<model-name>'")
    return _provider_model(prefix, name, model, base_url)


def _provider_model(prefix: str, name: str, spec: str, base_url: str | None) -> Model:
    if prefix in ("openai", "ollama"):
        require_extra("openai", "openai", f"model {spec!r}")
        from reactloop.models.openai import OpenAIModel

        if prefix == "ollama":
            # guided constraints go as a response_format JSON schema, Ollama's ``format``
            return OpenAIModel(name, base_url=base_url or OLLAMA_BASE_URL, api_key="ollama",
                               guided_format="json_schema")
        return OpenAIModel(name, base_url=base_url)
    if prefix == "anthropic":
        require_extra("anthropic", "anthropic", f"model {spec!r}")
        from reactloop.models.anthropic import AnthropicModel

        return AnthropicModel(name, base_url=base_url)
    require_extra("google.genai", "gemini", f"model {spec!r}")
    from reactloop.models.gemini import GeminiModel

    return GeminiModel(name, base_url=base_url)
