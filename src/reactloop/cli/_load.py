"""Loading user objects named ``module:attr`` (tools, agents) for the CLI."""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from typing import Any

import click

__all__ = ["load_agent", "load_object", "load_tools"]


def load_object(spec: str, what: str) -> Any:
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise click.BadParameter(
            f"{spec!r} is not of the form module:attr (e.g. mytools:add or mytools:TOOLS)",
            param_hint=what,
        )
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # so `--tools mytools:add` finds ./mytools.py
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise click.BadParameter(f"cannot import {module_name!r}: {exc}", param_hint=what) from None
    try:
        return getattr(module, attr)
    except AttributeError:
        names = ", ".join(n for n in dir(module) if not n.startswith("_"))
        raise click.BadParameter(
            f"module {module_name!r} has no attribute {attr!r}; it has: {names}", param_hint=what
        ) from None


def load_tools(specs: tuple[str, ...]) -> list[Any]:
    tools: list[Any] = []
    for spec in specs:
        obj = load_object(spec, "--tools")
        if isinstance(obj, (list, tuple)):
            tools.extend(obj)
        else:
            tools.append(obj)
    return tools


def load_agent(spec: str) -> Any:
    """The :class:`~reactloop.Agent` named ``module:attr`` (an Agent, or a function without
    arguments that returns one), for ``--agent``."""
    from reactloop.agent import Agent

    obj = load_object(spec, "--agent")
    if inspect.isfunction(obj):  # a factory
        try:
            obj = obj()
        except TypeError as exc:
            raise click.BadParameter(f"{spec!r} must take no arguments to build the agent: "
                                     f"{exc}", param_hint="--agent") from None
    if not isinstance(obj, Agent):
        raise click.BadParameter(
            f"{spec!r} is a {type(obj).__name__}, not a reactloop Agent; point it at an "
            "Agent object (or a function returning one)", param_hint="--agent")
    return obj
