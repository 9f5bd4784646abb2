"""Durable, distributed runs on Temporal: the same loop, as a workflow.

``pip install 'reactloop[temporal]'``. Wrap an agent, host it in workers, run it from
anywhere::

    from reactloop.temporal import TemporalAgent

    durable = TemporalAgent(agent)
    worker = durable.worker(client, "agents")          # or: reactloop worker --agent m:durable
    result = await durable.run("Plan my trip", client=client, task_queue="agents")

The run's deterministic part — the loop, budget notes, context management, loop control —
runs in the workflow; every model call, tool call (one activity each: a call that completed is
never run again), MCP listing and call, and a turn's retrieved context is an activity. A run
that asks the user waits in the workflow, durably, for :meth:`RunHandle.send`; one that reaches
a tool call needing approval (``WAITING_FOR_APPROVAL``, ``result.pending_approvals``) waits
the same way for :meth:`RunHandle.decide` — the decisions are checked against the workflow's
history first (a mismatch is refused, nothing runs), approved calls then run once as
activities, denied ones are answered with the reason. An MCP server's question in the
resumable form (an input-required result) waits durably in the workflow too, mid-turn:
:meth:`RunHandle.pending_inputs` lists it, :meth:`RunHandle.answer` answers it and a new
activity sends the call again; a question in the classic form waits live in the worker
(``reactloop.temporal._elicitation``). Workflow and
activity names are listed in :class:`Names`; the workflow's updates, queries and signal in
``reactloop.temporal._workflow``.

A prompt may carry images and documents, as in-process (``durable.run(["What is in this
picture?", Image.from_path("shot.png")], ...)``), and tools may return them; their bytes never
cross Temporal: they are written once by content hash to the attachment store
(``TemporalAgent(store=...)``: a session store, the default SQLite file unless given a path or
a ``postgresql://`` URL), which the starter and every worker must share; the workflow carries
references, and the model activity loads the bytes before the model call
(``reactloop.temporal._blobs``). A worker that lacks them ends the run ``ERROR``, naming the
attachment's hash and the fix.

What differs from an in-process run: no ``text_delta`` events (a response crosses from its
activity whole); a model call's retries (by its ``RetryPolicy``) are its activity's, so they
are not ``retry`` events; ``@tool(retries=N)`` is honoured (in-process, a call is attempted
once); callbacks (``Agent(callbacks=...)``) are not called (read :meth:`RunHandle.events`); a
tool that adds tools with ``ToolContext.add_tools`` must have an extension add them in
``after_tools`` too (as skills do), since the tool runs in an activity; ``Extension.start``
also runs in each tool activity, to restore the run's state there; MCP servers stay open per
worker process (not per run); every tool call has a time limit; data over Temporal's payload
limit (``TemporalAgent(max_payload_bytes=)``) is refused: a tool result becomes an error
result, a model request or response ends the run ``ERROR``, a result that cannot cross fails
the workflow with the reason (:class:`PayloadTooLarge`); runs are not traced with
OpenTelemetry (``Agent(instrument=)``): Temporal's own tracing interceptor
(``temporalio.contrib.opentelemetry``) traces workflows and activities.
"""

from __future__ import annotations

import importlib.util

from reactloop.errors import UserError

if importlib.util.find_spec("temporalio") is None:
    raise UserError("reactloop.temporal needs the Temporal SDK: pip install 'reactloop[temporal]'")

from reactloop.temporal._agent import (
    PASSTHROUGH_MODULES,
    Names,
    TemporalAgent,
    sandbox_runner,
)
from reactloop.temporal._handle import RunHandle
from reactloop.temporal._workflow_runtime import PayloadTooLarge, WorkflowRuntime

__all__ = [
    "PASSTHROUGH_MODULES",
    "Names",
    "PayloadTooLarge",
    "RunHandle",
    "TemporalAgent",
    "WorkflowRuntime",
    "sandbox_runner",
]
