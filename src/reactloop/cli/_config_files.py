"""The files in the user's config directory: the CLI's configuration (``config.toml``, its
values checked by type when it is read) and stored API keys (``keys.json``, mode 0600).

Both live in the user's config directory (platformdirs; ``REACTLOOP_CONFIG_DIR`` overrides it)::

    model = "openai:gpt-4o-mini"        # the default for -m
    base_url = "http://localhost:1234/v1"  # the server of that default model
    notice = false                      # hide the embedded-model notice

    [models."openai:gpt-4o-mini"]
    temperature = 0.2
    max_tokens = 1024

Keys are handed to the model adapters through the environment of this process (an
environment variable that is already set wins), so the adapters need no CLI-specific code.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reactloop.errors import UserError

__all__ = ["KEY_PROVIDERS", "MODEL_KEYS", "TOP_KEYS", "Config", "apply_keys", "check_config",
           "config_dir",
           "key_variable", "load_config", "load_keys", "save_config", "save_keys"]


def _as_str(text: str) -> str:
    if not text.strip():
        raise ValueError("must not be empty")
    return text


def _as_bool(text: str) -> bool:
    low = text.strip().lower()
    if low in ("true", "yes", "on", "1"):
        return True
    if low in ("false", "no", "off", "0"):
        return False
    raise ValueError("must be true or false")


def _as_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not math.isfinite(value) or value < 0:
        raise ValueError("must be a number of at least 0")
    return value


def _as_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError("must be a whole number of at least 1")
    return value


def _as_guidance(text: str) -> str:
    low = text.strip().lower()
    if low not in ("full", "caps", "off"):
        raise ValueError("must be full, caps or off")
    return low


TOP_KEYS: dict[str, tuple[Callable[[str], Any], str]] = {
    "model": (_as_str, "the default model for run and chat (e.g. openai:gpt-4o-mini)"),
    "base_url": (_as_str, "the server of the default model (e.g. an OpenAI-compatible one)"),
    "notice": (_as_bool, "show the one-line notice about the embedded demo model"),
    "store": (_as_str, "the session store (a SQLite path or postgresql:// URL) of run, chat "
                       "and logs"),
    "log": (_as_bool, "store every run and chat (false: like --no-log)"),
}
MODEL_KEYS: dict[str, tuple[Callable[[str], Any], str]] = {
    "temperature": (_as_float, "sampling temperature"),
    "max_tokens": (_as_int, "the most tokens one reply may use"),
    "base_url": (_as_str, "the server of this model (openai:<name> and ollama:<name>)"),
    "text_tools": (_as_bool, "use the text tool protocol (like --text-tools)"),
    "guidance": (_as_guidance, "steer this model like the embedded one: full, caps or off "
                               "(like --guidance)"),
}
KEY_PROVIDERS = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY",
                 "gemini": "GEMINI_API_KEY"}
_VAR = re.compile(r"^[A-Z][A-Z0-9_]{0,99}$")


def config_dir() -> Path:
    """``REACTLOOP_CONFIG_DIR``, else the user's config directory for reactloop."""
    from reactloop._keys import config_dir as shared

    return shared()


@dataclass
class Config:
    """The parsed ``config.toml``."""

    path: Path
    values: dict[str, Any] = field(default_factory=dict)
    models: dict[str, dict[str, Any]] = field(default_factory=dict)

    def get(self, key: str, model: str | None = None) -> Any:
        if model is not None:
            return self.models.get(model, {}).get(key)
        return self.values.get(key)

    def set(self, key: str, text: str, model: str | None = None) -> Any:
        """Parse ``text`` for ``key`` and store it; raises :class:`UserError` when invalid."""
        known = MODEL_KEYS if model is not None else TOP_KEYS
        if key not in known:
            where = f"for model {model!r} " if model else ""
            raise UserError(f"unknown config key {key!r} {where}— use one of: "
                            f"{', '.join(known)}" + ("" if model else
                                                     " (per model: config set -m MODEL KEY VALUE)"))
        try:
            value = known[key][0](text)
        except ValueError as exc:
            raise UserError(f"config key {key!r}: {text!r} {_reason(exc)}") from None
        (self.models.setdefault(model, {}) if model else self.values)[key] = value
        return value

    def unset(self, key: str, model: str | None = None) -> bool:
        table = self.models.get(model, {}) if model else self.values
        found = table.pop(key, None) is not None
        if model and not table:
            self.models.pop(model, None)
        return found

    def model_options(self, model: str) -> dict[str, Any]:
        return dict(self.models.get(model, {}))


def _reason(exc: ValueError) -> str:
    text = str(exc)
    return text if text.startswith("must") else "is not valid here"


_TYPES: dict[type, str] = {str: "a string", bool: "true or false", float: "a number",
                           int: "a whole number"}
_EXPECTED: dict[Callable[[str], Any], type] = {_as_str: str, _as_bool: bool, _as_float: float,
                                               _as_int: int, _as_guidance: str}


def _type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "a whole number"
    return {float: "a number", str: "a string", dict: "a table", list: "an array"}.get(
        type(value), type(value).__name__)


def _check_value(path: Path, key: str, value: Any, parse: Callable[[str], Any],
                 model: str | None) -> None:
    """``value`` (as read from the file) is what ``parse`` accepts, of the right type."""
    expected = _EXPECTED[parse]
    ok = isinstance(value, expected) and not (expected is not bool and isinstance(value, bool))
    if expected is float and isinstance(value, int) and not isinstance(value, bool):
        ok = True  # temperature = 1 is a number too
    problem = f"is {_type_name(value)}; it must be {_TYPES[expected]}"
    if ok:
        try:
            parse(str(value) if not isinstance(value, bool) else str(value).lower())
            return
        except ValueError as exc:
            problem = _reason(exc)
    where = f'[models."{model}"] ' if model else ""
    fix = f"config set{f' -m {model}' if model else ''} {key} VALUE"
    raise UserError(f"config file {path}: {where}{key} = {_toml_value(value)} {problem}; fix "
                    f"it with: reactloop {fix} (or reactloop config unset{f' -m {model}' if model else ''} "
                    f"{key})")


def check_config(config: Config) -> Config:
    """``config`` if every known key has a value of its type (unknown keys are left alone).

    Raises:
        UserError: one line naming the first wrong key, its value and the expected type.
    """
    for key, value in config.values.items():
        if key in TOP_KEYS:
            _check_value(config.path, key, value, TOP_KEYS[key][0], None)
    for model, table in config.models.items():
        for key, value in table.items():
            if key in MODEL_KEYS:
                _check_value(config.path, key, value, MODEL_KEYS[key][0], model)
    return config


def load_config(*, check: bool = True) -> Config:
    """The config file, or an empty config; a broken file is a :class:`UserError`, and so is
    a value of the wrong type (``store = 5``) unless ``check`` is False (``reactloop config``
    reads it that way, so that the file can be fixed with it)."""
    import tomllib  # not at import time: `reactloop --help` reads no file

    path = config_dir() / "config.toml"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return Config(path)
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read the config file {path}: {exc}; fix it or remove it "
                        "(reactloop config path shows where it is)") from None
    models = data.pop("models", {})
    if not isinstance(models, dict) or not all(isinstance(v, dict) for v in models.values()):
        raise UserError(f"config file {path}: [models] must hold one table per model, e.g. "
                        '[models."openai:gpt-4o-mini"]')
    config = Config(path, data, {str(k): dict(v) for k, v in models.items()})
    return check_config(config) if check else config


def save_config(config: Config) -> None:
    lines = [f"{k} = {_toml_value(v)}" for k, v in config.values.items()]
    for model, table in config.models.items():
        lines += ["", f"[models.{json.dumps(model)}]"]
        lines += [f"{k} = {_toml_value(v)}" for k, v in table.items()]
    _write(config.path, "\n".join(lines) + "\n", mode=0o644)


def _toml_value(value: Any) -> str:
    # the config holds strings, booleans and numbers only; JSON spells those the TOML way
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)) and math.isfinite(value):
        return repr(value)
    return json.dumps(str(value), ensure_ascii=False)


def _write(path: Path, text: str, *, mode: int) -> None:
    """Write atomically; the file is created with ``mode`` (never readable by others first)."""
    from reactloop._keys import write_private

    write_private(path, text, mode=mode)


# -- keys ----------------------------------------------------------------------------------------
def key_variable(name: str) -> str:
    """The environment variable for ``name``: a provider (``openai``) or a variable name."""
    if name.lower() in KEY_PROVIDERS:
        return KEY_PROVIDERS[name.lower()]
    if _VAR.match(name):
        return name
    raise UserError(f"unknown key name {name!r}: use a provider ({', '.join(KEY_PROVIDERS)}) "
                    "or an environment variable name such as OPENROUTER_API_KEY")


def keys_path() -> Path:
    return config_dir() / "keys.json"


def load_keys() -> dict[str, str]:
    """Stored keys by environment variable (empty when none are stored)."""
    path = keys_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot read the keys file {path}: {exc}") from None
    if not isinstance(data, dict):
        raise UserError(f"the keys file {path} must hold a JSON object")
    return {str(k): str(v) for k, v in data.items()}


def save_keys(keys: Mapping[str, str]) -> Path:
    path = keys_path()
    _write(path, json.dumps(dict(sorted(keys.items())), indent=2) + "\n", mode=0o600)
    return path


def apply_keys(environ: dict[str, str] | None = None) -> list[str]:
    """Put stored keys into the environment where the variable is not already set (the
    environment wins). Returns the variables set from the file."""
    env = os.environ if environ is None else environ
    applied = []
    for var, value in load_keys().items():
        if not env.get(var):
            env[var] = value
            applied.append(var)
    return applied
