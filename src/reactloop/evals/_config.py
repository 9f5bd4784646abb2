"""Building the agent under test from a cases file's ``agent:`` section (or CLI flags).

The keys mirror ``reactloop run``'s options, and the defaults are ``reactloop run``'s, so an
eval measures what a user of the command gets::

    agent:
      model: local                 # or openai:…, anthropic:…, ollama:…
      tools: [tools.py:TOOLS]      # a .py file (relative to the cases file) or module:attr
      skills: [skills/]
      max_iterations: 10
      instructions: Be brief.
      guidance: full               # steer a small model as `reactloop run --guidance` does

or ``agent: my_module:agent`` for an :class:`~reactloop.Agent` (or a function returning one).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from reactloop.evals._cases import EvalConfigError

__all__ = ["AGENT_KEYS", "build_agent", "import_object"]

AGENT_KEYS = ("agent", "model", "base_url", "tools", "skills", "max_iterations", "instructions",
              "workspace", "mcp", "loop_control", "tool_choice", "timeout", "tool_timeout",
              "demo_tools", "guidance")


def import_object(spec: str, base_dir: Path | None = None, what: str = "object") -> Any:
    """``module:attr``, or ``path/to/file.py:attr`` (relative to ``base_dir``)."""
    target, sep, attr = spec.rpartition(":")
    if not sep or not target or not attr:
        raise EvalConfigError(f"{what} {spec!r} is not of the form module:attr or file.py:attr")
    if target.endswith(".py"):
        module = _import_file(Path(base_dir or Path.cwd()) / target, what)
    else:
        if os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())
        try:
            module = importlib.import_module(target)
        except ImportError as exc:
            raise EvalConfigError(f"{what} {spec!r}: cannot import {target!r}: {exc}") from None
    try:
        return getattr(module, attr)
    except AttributeError:
        names = ", ".join(n for n in dir(module) if not n.startswith("_"))
        raise EvalConfigError(f"{what} {spec!r}: {target!r} has no {attr!r}; it has: "
                              f"{names}") from None


def _import_file(path: Path, what: str) -> Any:
    path = path.resolve()
    if not path.is_file():
        raise EvalConfigError(f"{what}: {path} does not exist")
    # a unique module name per file, so two cases files' tools.py never collide
    name = f"_reactloop_eval_{path.stem}_{hashlib.sha1(str(path).encode()).hexdigest()[:8]}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise EvalConfigError(f"{what}: cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise EvalConfigError(f"{what}: importing {path} failed: {type(exc).__name__}: "
                              f"{exc}") from None
    return module


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _tools(config: Mapping[str, Any], base_dir: Path) -> list[Any]:
    tools: list[Any] = []
    for spec in _as_list(config.get("tools")):
        obj = import_object(str(spec), base_dir, "tools") if isinstance(spec, str) else spec
        tools.extend(obj if isinstance(obj, (list, tuple)) else [obj])
    return tools


def _path(value: Any, base_dir: Path) -> str | None:
    if value is None:
        return None
    p = Path(str(value)).expanduser()
    return str(p if p.is_absolute() else base_dir / p)


def build_agent(config: Mapping[str, Any], base_dir: Path | None = None) -> Any:
    """An :class:`~reactloop.Agent` from an ``agent:`` mapping (see the module docstring)."""
    from reactloop import Agent, ModelSettings

    base = Path(base_dir or Path.cwd())
    unknown = [k for k in config if k not in AGENT_KEYS]
    if unknown:
        raise EvalConfigError(f"agent: unknown key(s) {', '.join(map(str, unknown))}; allowed: "
                              f"{', '.join(AGENT_KEYS)}")
    if config.get("agent"):
        spec = config["agent"]
        obj = import_object(spec, base, "agent") if isinstance(spec, str) else spec
        return agent_from(obj, str(spec))
    tools = _tools(config, base)
    mcp = []
    if config.get("mcp"):
        from reactloop.mcp import load_mcp_config

        mcp = list(load_mcp_config(base / str(config["mcp"])))
    skills = [_path(s, base) for s in _as_list(config.get("skills"))]
    demo = config.get("demo_tools")
    if demo is None:  # as `reactloop run`: the demo tools when nothing else is offered
        demo = not (tools or skills or config.get("workspace") or mcp)
    if demo:
        from reactloop._demo_tools import DEMO_TOOLS

        tools = [*DEMO_TOOLS, *tools]
    model = _model(config)
    return Agent(
        model=model, instructions=str(config.get("instructions") or ""), tools=tools,
        skills=[s for s in skills if s], mcp_servers=mcp,
        max_iterations=int(config.get("max_iterations") or 10),
        max_execution_time=config.get("timeout"), tool_timeout=config.get("tool_timeout"),
        loop_control=bool(config.get("loop_control", False)),
        workspace=_path(config.get("workspace"), base),
        model_settings=ModelSettings(tool_choice=config.get("tool_choice") or "auto"),
    )


def _model(config: Mapping[str, Any]) -> Any:
    """The model of an ``agent:`` mapping: a model object, or its name (resolved here when a
    ``base_url`` or a ``guidance`` level applies to it)."""
    from reactloop.models._base import Model

    model = config.get("model") or "local"
    guidance = config.get("guidance")
    if guidance is False:  # YAML reads a bare `off` as false
        guidance = "off"
    if guidance is not None and guidance not in ("full", "caps", "off"):
        raise EvalConfigError(f"agent: guidance {guidance!r} is not one of full, caps, off")
    if (config.get("base_url") or guidance) and not isinstance(model, Model):
        from reactloop.models._resolve import resolve_model

        # as `reactloop run --base-url`: the provider's own endpoint replaced
        model = resolve_model(str(model), base_url=str(config.get("base_url") or "") or None)
    if guidance:
        from reactloop.models._guided import apply_guidance

        # as `reactloop run --guidance`: the embedded model's levers, sent per request to an
        # OpenAI-compatible server; refused (UserError) for a model that cannot take them
        model = apply_guidance(model, str(guidance))
    return model


def agent_from(obj: Any, label: str) -> Any:
    """An Agent, or the Agent a zero-argument factory returns."""
    from reactloop import Agent

    if inspect.isfunction(obj):  # a factory
        try:
            obj = obj()
        except Exception as exc:
            raise EvalConfigError(f"agent {label!r}: calling it failed: {type(exc).__name__}: "
                                  f"{exc}") from None
    if not isinstance(obj, Agent):
        raise EvalConfigError(f"agent {label!r} is a {type(obj).__name__}, not a "
                              "reactloop.Agent (or a function returning one)")
    return obj

