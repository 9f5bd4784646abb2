"""Loading user objects named ``module:attr`` (tools, agents) for the CLI."""

from __future__ import annotations

import importlib
import inspect
import os
import sys
import traceback
from pathlib import Path
from typing import Any

import click

__all__ = ["LoadError", "load_agent", "load_object", "load_tools"]


def load_object(spec: str, what: str) -> Any:
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise click.BadParameter(
            f"{spec!r} is not of the form module:attr (e.g. mytools:add or mytools:TOOLS)",
            param_hint=what,
        )
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # so `--tools mytools:add` finds ./mytools.py
    module = _import(module_name, what)
    try:
        return getattr(module, attr)
    except AttributeError:
        names = ", ".join(n for n in dir(module) if not n.startswith("_"))
        raise click.BadParameter(
            f"module {module_name!r} has no attribute {attr!r}; it has: {names}", param_hint=what
        ) from None


class LoadError(click.ClickException):
    """A user module failed while being imported: one line on stderr, exit code 1."""

    def show(self, file: Any = None) -> None:
        click.echo(f"reactloop: {self.format_message()}", err=True)


def _import(module_name: str, what: str) -> Any:
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if module_name == missing or module_name.startswith(missing + "."):  # it, not its import
            raise click.BadParameter(f"cannot import {module_name!r}: {exc}",
                                     param_hint=what) from None
        raise LoadError(f"{what} {module_name}: importing it failed: {_where(exc)}") from None
    except SystemExit as exc:
        # a module that exits while being imported (argparse at module level, a script)
        # would otherwise end reactloop silently, with its exit code (often 0)
        raise LoadError(f"{what} {module_name}: the module called sys.exit({exc.code!r}) while "
                        "being imported; a tools module should only define tools (put script "
                        "code under 'if __name__ == \"__main__\":')") from None
    except Exception as exc:  # the user's code failed: say where, not a traceback
        raise LoadError(f"{what} {module_name}: importing it failed: {_where(exc)}") from None


def _where(exc: BaseException) -> str:
    """``Type: message (file, line N)``, for the innermost frame of the traceback."""
    text = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, SyntaxError):  # its message already names the file and line
        return text
    frames = traceback.extract_tb(exc.__traceback__)
    if frames:
        text += f" ({frames[-1].filename}, line {frames[-1].lineno})"
    return text


def load_tools(specs: tuple[str, ...]) -> list[Any]:
    tools: list[Any] = []
    for spec in specs:
        obj = load_object(spec, "--tools")
        if isinstance(obj, (list, tuple)):
            tools.extend(obj)
        else:
            tools.append(obj)
    return tools


def load_agent(spec: str, what: str = "--agent") -> Any:
    """The :class:`~reactloop.Agent` named ``module:attr`` or ``path/to/file.py:attr`` (an
    Agent, or a function without arguments that returns one), for ``--agent``."""
    from reactloop.agent import Agent

    target, _, attr = spec.rpartition(":")
    obj = _load_from_file(Path(target), attr, what) if target.endswith(".py") else (
        load_object(spec, what))
    if inspect.isfunction(obj):  # a factory
        try:
            obj = obj()
        except TypeError as exc:
            raise click.BadParameter(f"{spec!r} must take no arguments to build the agent: "
                                     f"{exc}", param_hint=what) from None
        except Exception as exc:  # the user's code failed: say where, not a traceback
            raise LoadError(f"{what} {spec}: building the agent failed: {_where(exc)}") from None
    if not isinstance(obj, Agent):
        raise click.BadParameter(
            f"{spec!r} is a {type(obj).__name__}, not a reactloop Agent; point it at an "
            "Agent object (or a function returning one)", param_hint=what)
    return obj


def _load_from_file(path: Path, attr: str, what: str) -> Any:
    """``attr`` of the Python file ``path`` (imported under a private module name)."""
    import importlib.util

    path = path.resolve()
    spec = importlib.util.spec_from_file_location(f"_reactloop_user_{path.stem}", path)
    if not path.is_file() or spec is None or spec.loader is None:
        raise click.BadParameter(f"{path} is not a Python file", param_hint=what)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses and pickling look modules up here
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        raise LoadError(f"{what} {path}: importing it failed: {_where(exc)}") from None
    try:
        return getattr(module, attr)
    except AttributeError:
        raise click.BadParameter(f"{path} has no attribute {attr!r}", param_hint=what) from None
