"""What ``reactloop mcp serve`` tells and asks its client while a tool runs.

* **Progress.** A served tool's ``ctx.emit("progress", {"progress": 2, "total": 5,
  "message": "..."})`` becomes ``notifications/progress`` (when the client sent a progress
  token); a served agent (``run_agent``) reports each iteration the same way.
* **Logging.** Any other event a tool emits, and a served agent's tool calls, become
  ``notifications/message`` log entries (logger ``reactloop``).
* **Approvals by elicitation.** A call that needs a person's approval is put to the client as
  an ``elicitation/create`` form (one boolean, "approve") when the client supports elicitation:
  mid-call on connections up to 2025-11-25, as an input-required result on 2026-07-28 ones
  (the client answers and calls again). A served agent's waiting calls are asked only the
  first way (its run is in the middle of the call). Declined, cancelled or unanswerable: the
  call is not run.

Imported only with the SDK.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
from collections.abc import Mapping
from typing import Any

import mcp_types as types

__all__ = ["Reporter", "current_reporter"]

log = logging.getLogger("reactloop.mcp")
_ORDER: tuple[types.LoggingLevel, ...] = ("debug", "info", "notice", "warning", "error",
                                          "critical", "alert", "emergency")


class Reporter:
    """Progress, log entries and questions of one ``tools/call`` request."""

    def __init__(self, ctx: Any, level: types.LoggingLevel = "info") -> None:
        self.ctx = ctx
        self.level = _ORDER.index(level) if level in _ORDER else 1
        """Log entries below this (the client's ``logging/setLevel``) are not sent."""
        self._sent: list[asyncio.Future[None]] = []

    @property
    def _legacy(self) -> bool:
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        return getattr(self.ctx, "protocol_version", "") not in MODERN_PROTOCOL_VERSIONS

    def emit(self, name: str, data: Any = None) -> None:
        """A tool's custom event (``ToolContext.emit``): progress or a log entry."""
        if name == "progress" and isinstance(data, Mapping) and "progress" in data:
            self.progress(float(data["progress"]), _number(data.get("total")),
                          _text(data.get("message")))
        else:
            self.log("info", {"event": name, "data": data})

    def progress(self, progress: float, total: float | None, message: str | None) -> None:
        self._send(self.ctx.session.report_progress(progress, total, message))

    def log(self, level: types.LoggingLevel, data: Any) -> None:
        if _ORDER.index(level) < self.level:
            return
        session = self.ctx.session
        data = json.loads(json.dumps(data, default=str))  # JSON-safe, whatever a tool emits
        self._send(session.send_log_message(  # the logging capability, deprecated in 2026
            level=level, data=data, logger="reactloop", related_request_id=self.ctx.request_id))

    def _send(self, coro: Any) -> None:
        self._sent.append(asyncio.ensure_future(coro))

    async def drain(self) -> None:
        """Wait for the notifications sent so far (before the call's result goes out)."""
        sent, self._sent = self._sent, []
        for outcome in await asyncio.gather(*sent, return_exceptions=True):
            if isinstance(outcome, Exception):
                log.debug("mcp serve: a notification was not sent: %r", outcome)

    def can_ask(self) -> bool:
        caps = getattr(self.ctx.session, "client_capabilities", None)
        return getattr(caps, "elicitation", None) is not None

    def can_ask_now(self) -> bool:
        """Whether a question can be asked in the middle of a call (2025-era connections;
        a served agent's waiting calls are asked that way)."""
        return self._legacy and self.can_ask()

    def approval_request(self, tool: str, arguments: Mapping[str, Any]
                         ) -> types.InputRequiredResult:
        """The question as a 2026-07-28 input-required result (the client answers it and
        sends the call again with ``inputResponses``)."""
        message, schema = _question(tool, arguments)
        ask = types.ElicitRequest(params=types.ElicitRequestFormParams(
            message=message, requested_schema=schema))
        return types.InputRequiredResult(input_requests={_APPROVE: ask})

    async def approve(self, tool: str, arguments: Mapping[str, Any],
                      responses: Mapping[str, Any] | None = None) -> bool | None:
        """Ask the client's user whether ``tool`` may run with ``arguments``: the answer, or
        None on a 2026-07-28 connection that has not answered yet (then send
        :meth:`approval_request`)."""
        if not self._legacy:
            answer = (responses or {}).get(_APPROVE)
            if not isinstance(answer, types.ElicitResult):
                return None
            return answer.action == "accept" and bool((answer.content or {}).get("approve"))
        message, schema = _question(tool, arguments)
        try:
            answer = await self.ctx.session.elicit_form(
                message, schema, related_request_id=self.ctx.request_id)
        except Exception as exc:  # the client could not ask: not approved
            log.info("mcp serve: asking to approve %s failed: %r", tool, exc)
            return False
        return answer.action == "accept" and bool((answer.content or {}).get("approve"))


current_reporter: contextvars.ContextVar[Reporter | None] = contextvars.ContextVar(
    "reactloop_mcp_reporter", default=None)
"""The reporter of the ``tools/call`` being served (read by ``run_agent``)."""


_APPROVE = "reactloop/approve"


def _question(tool: str, arguments: Mapping[str, Any]) -> tuple[str, Any]:
    shown = json.dumps(dict(arguments), ensure_ascii=False, default=str)
    schema = {"type": "object", "required": ["approve"], "properties": {"approve": {
        "type": "boolean", "title": "Approve", "default": False,
        "description": f"Run {tool} with these arguments?"}}}
    return f"The tool {tool} needs your approval to run with {shown}.", schema


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
        else None


def _text(value: Any) -> str | None:
    return None if value is None else str(value)
