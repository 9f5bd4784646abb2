"""What the workflow, its runtime and the activities need to know of a durable agent: its
names and settings (:class:`Durable`, implemented by ``TemporalAgent``), and activity options."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import timedelta
from typing import Any, Protocol

from temporalio.common import RetryPolicy

from reactloop.agent import Agent
from reactloop.models._base import Model
from reactloop.temporal._blobs import AttachmentStore
from reactloop.tools._tool import Tool

__all__ = ["Durable", "Names", "make_options"]


class Durable(Protocol):
    """A durable agent as its workflow and activities see it (``TemporalAgent``)."""

    agent: Agent
    names: Names
    tool_timeout: float
    heartbeat_timeout: float | None
    max_payload_bytes: int
    history_limit: int

    @property
    def blobs(self) -> AttachmentStore:
        """Where the bytes of its runs' attachments are (``TemporalAgent(store=...)``)."""
        ...

    @property
    def subs(self) -> Mapping[str, Durable]:
        """The agents its tools run (``agent.as_tool()``), by name: they run inside its
        workflow, with activities of their own."""
        ...

    def model_options(self, model: Model) -> dict[str, Any]: ...

    def tool_options(self, tool: Tool, timeout: float) -> dict[str, Any]: ...

    def list_options(self) -> dict[str, Any]: ...


class Names:
    """The workflow type and activity names of one agent. They are derived from the agent's
    name (``Agent(name=...)`` or ``TemporalAgent(name=...)``), its tools' and its MCP servers'
    names only, and are stable across deploys: renaming any of these breaks the runs in flight.

    - workflow: ``<agent>``
    - ``<agent>.model``: one model call; ``<agent>.retrieve``: a turn's retrieved context
      (the start of the extensions that do I/O: ``Extension.start_does_io``)
    - ``<agent>.tool.<tool>``: one call of a tool known when the worker starts (the agent's
      tools and the skills' tools); ``<agent>.tool``: any other tool
    - ``<agent>.mcp.<server>.list`` and ``<agent>.mcp.<server>.call``: an MCP server's tools
    - an agent its tools run (``agent.as_tool()``) has these same names under its own name
      (``<sub-agent>.model``, ...); its run is part of the caller's workflow
    """

    def __init__(self, base: str, tools: Iterable[str]) -> None:
        self.workflow = base
        self.model = f"{base}.model"
        self.retrieve = f"{base}.retrieve"
        self.any_tool = f"{base}.tool"
        self.tools = tuple(dict.fromkeys(tools))
        self._known = frozenset(self.tools)

    def tool(self, name: str) -> str:
        return f"{self.workflow}.tool.{name}" if name in self._known else self.any_tool

    def mcp_list(self, server: str) -> str:
        return f"{self.workflow}.mcp.{server}.list"

    def mcp_call(self, server: str) -> str:
        return f"{self.workflow}.mcp.{server}.call"


def make_options(*, timeout: float, attempts: int, heartbeat: float | None,
                 initial: float = 1.0, maximum: float | None = None,
                 non_retryable: Sequence[str] = ()) -> dict[str, Any]:
    """``execute_activity`` keyword arguments."""
    return {
        "start_to_close_timeout": timedelta(seconds=timeout),
        "heartbeat_timeout": None if heartbeat is None else timedelta(seconds=heartbeat),
        "retry_policy": RetryPolicy(
            initial_interval=timedelta(seconds=initial), backoff_coefficient=2.0,
            maximum_interval=None if maximum is None else timedelta(seconds=maximum),
            maximum_attempts=attempts, non_retryable_error_types=list(non_retryable)),
    }
