""":class:`TemporalAgent`: an agent whose runs are Temporal workflows."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from reactloop._attach import check_accepts
from reactloop.agent import Agent
from reactloop.attachments import Prompt, split_prompt
from reactloop.errors import UserError
from reactloop.messages import Message
from reactloop.models._base import Model
from reactloop.models._retry import RetryPolicy
from reactloop.result import RunResult
from reactloop.sessions._store import SessionStore
from reactloop.temporal._activities import SourcePool, build_activities
from reactloop.temporal._blobs import AttachmentStore
from reactloop.temporal._codec import json_size
from reactloop.temporal._config import Names, make_options
from reactloop.temporal._handle import RunHandle, connect
from reactloop.tools._control import CONTROL_TOOL_NAMES
from reactloop.tools._tool import Tool

if TYPE_CHECKING:
    from temporalio.client import Client
    from temporalio.worker import Worker, WorkflowRunner

__all__ = ["PASSTHROUGH_MODULES", "Names", "TemporalAgent", "sandbox_runner"]

PASSTHROUGH_MODULES = ("reactloop", "docstring_parser", "json_repair", "yaml", "platformdirs",
                       "rich", "click", "genai_prices")
"""Modules the workflow sandbox shares with the worker instead of re-importing them:
reactloop's loop is deterministic given its runtime, and the agent (configuration) is shared;
the loop prices each model call with ``genai-prices`` (a price table: pure lookups)."""


def sandbox_runner() -> WorkflowRunner:
    """Temporal's sandboxed workflow runner, with reactloop passed through. Give it to your
    own ``Worker(workflow_runner=...)`` when it hosts reactloop workflows."""
    from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

    return SandboxedWorkflowRunner(
        restrictions=SandboxRestrictions.default.with_passthrough_modules(*PASSTHROUGH_MODULES))


class TemporalAgent:
    """Runs an :class:`~reactloop.Agent`'s runs as Temporal workflows: the same loop, durable.

    Host it in a worker (``reactloop worker --agent MODULE:ATTR`` or :meth:`worker`), then
    :meth:`run` or :meth:`start` runs from any process.

    Args:
        agent: the agent (its name names the workflow and the activities, see :class:`Names`).
        name: another base name for the workflow and activities.
        model_timeout: seconds one model call may take (its activity's start-to-close).
        tool_timeout: seconds a tool call may take when neither ``@tool(timeout=)`` nor
            ``Agent(tool_timeout=)`` says (Temporal needs a limit for every activity).
        heartbeat_timeout: activities heartbeat; a worker silent this long is taken for dead
            and its activity goes elsewhere (``None``: rely on the timeouts alone).
        max_payload_bytes: Temporal's payload limit (the server's ``limit.blobSize.error``,
            2 MiB by default); larger data is refused with a clear error, never sent.
        history_limit: events in a workflow's history after which a conversation continues
            as new (between turns).
        store: where the bytes of attachments are kept — images and documents in prompts and
            those tools return — so that only references cross Temporal: a session store, the
            path of a SQLite file, or a ``postgresql://`` URL (default: the default SQLite
            file, as ``agent.session()``). The starter and every worker must reach the same
            one: on one machine the default does; across machines, give both one URL
            (``reactloop worker --store``, ``reactloop run --temporal --store``).
    """

    def __init__(self, agent: Agent, *, name: str | None = None, model_timeout: float = 300.0,
                 tool_timeout: float = 300.0, heartbeat_timeout: float | None = 30.0,
                 max_payload_bytes: int = 2_000_000, history_limit: int = 10_000,
                 store: SessionStore | str | os.PathLike[str] | None = None) -> None:
        if not isinstance(agent, Agent):
            raise UserError(f"TemporalAgent needs a reactloop.Agent, got {agent!r}")
        for label, value in (("model_timeout", model_timeout), ("tool_timeout", tool_timeout),
                             ("heartbeat_timeout", heartbeat_timeout or 1),
                             ("max_payload_bytes", max_payload_bytes),
                             ("history_limit", history_limit)):
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                raise UserError(f"TemporalAgent: {label} must be a positive number, got "
                                f"{value!r}")
        self.agent = agent
        self.model_timeout, self.tool_timeout = float(model_timeout), float(tool_timeout)
        self.heartbeat_timeout = heartbeat_timeout
        self.max_payload_bytes, self.history_limit = int(max_payload_bytes), int(history_limit)
        self.names = Names(name or agent.name, _static_tools(agent))
        self._subs: dict[str, TemporalAgent] = {}
        for t in agent.spec.tools.specs():
            sub = getattr(agent.spec.tools.get(t.name), "agent", None)
            if isinstance(sub, Agent) and sub.name not in self._subs:
                self._subs[sub.name] = TemporalAgent(
                    sub, model_timeout=model_timeout, tool_timeout=tool_timeout,
                    heartbeat_timeout=heartbeat_timeout, max_payload_bytes=max_payload_bytes,
                    history_limit=history_limit, store=store)
        self.store = store
        self._pool = SourcePool()
        self._workflow: type | None = None
        self._activities: list[Callable[..., Any]] | None = None

    @property
    def store(self) -> SessionStore | str | os.PathLike[str] | None:
        """The attachment store (see the class's ``store`` argument); setting it sets its
        sub-agents' too (``reactloop worker --store`` does, before the worker starts)."""
        return self._blobs.spec

    @store.setter
    def store(self, store: SessionStore | str | os.PathLike[str] | None) -> None:
        self._blobs = AttachmentStore(store)
        for sub in self._subs.values():
            sub.store = store

    @property
    def blobs(self) -> AttachmentStore:
        """The attachments' bytes, in :attr:`store` (``reactloop.temporal._blobs``)."""
        return self._blobs

    @property
    def subs(self) -> dict[str, TemporalAgent]:
        """The agents its tools run (``agent.as_tool()``), by name: they run inside this
        agent's workflow (each model and tool call an activity of their own names)."""
        return self._subs

    # -- what a worker hosts -----------------------------------------------------------------
    @property
    def workflow(self) -> type:
        """The workflow class (type name ``names.workflow``) for ``Worker(workflows=[...])``."""
        if self._workflow is None:
            from reactloop.temporal._workflow import workflow_class

            _warm(self.agent)
            self._workflow = workflow_class(self)
        return self._workflow

    @property
    def activities(self) -> list[Callable[..., Any]]:
        """The activities for ``Worker(activities=[...])`` (names: see :class:`Names`)."""
        if self._activities is None:
            _warm(self.agent)
            self._activities = build_activities(self, self._pool)
            for sub in self._subs.values():
                self._activities += sub.activities
        return self._activities

    def worker(self, client: Client, task_queue: str, **options: Any) -> Worker:
        """A ``temporalio.worker.Worker`` hosting this agent (``options`` go to ``Worker``)."""
        from temporalio.worker import Worker

        options.setdefault("workflow_runner", sandbox_runner())
        return Worker(client, task_queue=task_queue, workflows=[self.workflow],
                      activities=self.activities, **options)

    async def aclose(self) -> None:
        """Close the MCP servers this process's activities opened."""
        await self._pool.aclose()

    # -- runs --------------------------------------------------------------------------------
    async def start(self, prompt: Prompt, *, client: Client | str, task_queue: str,
                    id: str | None = None, session: bool = False) -> RunHandle:
        """Start a run as a workflow, or attach to the conversation ``id`` if it exists.

        An existing conversation that waits for the user gets ``prompt`` as its next message;
        one that is busy (or has ended) is attached to, and ``prompt`` is not sent.

        Args:
            prompt: the user's message: a string, or a list of strings and attachments
                (``["What is in this picture?", Image.from_path("shot.png")]``). The bytes of
                the attachments go to the attachment store (:attr:`store`) first; the
                workflow gets references. A part the model cannot take is refused here.
            client: a ``temporalio.client.Client``, or an address ``HOST:PORT``.
            task_queue: the task queue the agent's workers poll.
            id: the workflow id (default: ``<agent>-<random>``).
            session: keep waiting for messages after every turn (until :meth:`RunHandle.close`),
                not only after a turn that asked the user something.
        """
        if isinstance(prompt, str) and not prompt:
            raise UserError(f"prompt must be a non-empty string, got {prompt!r}")
        text, parts = split_prompt(prompt)
        if not text and not parts:
            raise UserError("the prompt is empty: give a text, attachments or both")
        if parts:  # refused before anything is stored or started
            check_accepts(self.agent.spec.model, parts)
        from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
        from temporalio.exceptions import WorkflowAlreadyStartedError

        client = await connect(client)
        wf_id = id or f"{self.names.workflow}-{uuid.uuid4().hex[:12]}"
        arg: dict[str, Any] = {"prompt": text, "session": session}
        if parts:
            arg["attachments"] = [a.ref() for a in parts]
        if json_size(arg) > self.max_payload_bytes:
            raise UserError(f"the prompt is over Temporal's payload limit of "
                            f"{self.max_payload_bytes:,} bytes")
        await self._blobs.put(wf_id, parts, "the prompt")
        try:
            await client.start_workflow(
                self.names.workflow, arg, id=wf_id,
                task_queue=task_queue, id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
                id_conflict_policy=WorkflowIDConflictPolicy.FAIL)
        except WorkflowAlreadyStartedError:
            handle = RunHandle(client, wf_id, turn=0, seq=None, blobs=self._blobs)
            await handle.attach(prompt)
            return handle
        return RunHandle(client, wf_id, turn=1, seq=0, blobs=self._blobs)

    async def run(self, prompt: Prompt, *, client: Client | str, task_queue: str,
                  id: str | None = None) -> RunResult:
        """:meth:`start`, then the turn's :class:`~reactloop.RunResult` (as a local run's)."""
        handle = await self.start(prompt, client=client, task_queue=task_queue, id=id)
        return await handle.result()

    async def attach(self, id: str, *, client: Client | str) -> RunHandle:
        """A handle on the conversation ``id`` (its current or latest turn)."""
        handle = RunHandle(await connect(client), id, turn=0, seq=None, blobs=self._blobs)
        await handle.attach(None)
        return handle

    # -- activity options (from the agent's settings) -----------------------------------------
    def model_options(self, model: Model) -> dict[str, Any]:
        """Retries by the model's ``RetryPolicy``: Temporal's retry policy replaces the
        in-process retries (switched off in the activity)."""
        policy = getattr(model, "retry", None)
        if not isinstance(policy, RetryPolicy):
            policy = RetryPolicy()
        return make_options(timeout=self.model_timeout, attempts=policy.max_retries + 1,
                            heartbeat=self.heartbeat_timeout, initial=policy.base_delay,
                            maximum=policy.max_delay)

    def tool_options(self, tool: Tool, timeout: float) -> dict[str, Any]:
        """A tool's limit (plus a grace period: the activity reports the timeout itself, as
        in-process) and its retries (default none: a call may have had effects)."""
        return make_options(timeout=timeout + max(1.0, timeout / 10), attempts=tool.retries + 1,
                            heartbeat=self.heartbeat_timeout)

    def list_options(self) -> dict[str, Any]:
        return make_options(timeout=self.model_timeout, attempts=3,
                            heartbeat=self.heartbeat_timeout)

    def __repr__(self) -> str:
        return f"TemporalAgent({self.agent!r}, name={self.names.workflow!r})"


def _later_tools(agent: Agent) -> list[Tool]:
    """The tools the agent's extensions may add during a run (the skills' tools)."""
    return [t for ext in agent.spec.extensions for t in ext.later_tools()]


def _static_tools(agent: Agent) -> list[str]:
    """The tools known before any run: the agent's and those its extensions may add (not the
    loop-control tools, which the workflow answers itself)."""
    names = [n for n in agent.spec.tools.names if n not in CONTROL_TOOL_NAMES]
    return names + [t.name for t in _later_tools(agent)]


def _warm(agent: Agent) -> None:
    """Build what the workflow would otherwise build lazily (tool schemas, the token counter,
    the skills' tools): on the worker, once, outside the sandbox."""
    spec = agent.spec
    spec.tools.specs()
    for t in _later_tools(agent):
        t.spec()
    spec.context.counter.message(Message.user("warm-up"))
