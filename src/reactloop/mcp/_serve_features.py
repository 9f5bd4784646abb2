"""What ``reactloop mcp serve`` tells and asks its client while a tool runs.

* **Progress.** A served tool's ``ctx.emit("progress", {"progress": 2, "total": 5,
  "message": "..."})`` becomes ``notifications/progress`` (when the client sent a progress
  token); a served agent (``run_agent``) reports each iteration the same way.
* **Logging.** Any other event a tool emits, and a served agent's tool calls, become
  ``notifications/message`` log entries (logger ``reactloop``).
* **Approvals by elicitation.** A call that needs a person's approval is put to the client as
  an ``elicitation/create`` form (one boolean, "approve") when the client supports elicitation
  and the connection allows server-to-client requests (protocol versions up to 2025-11-25;
  2026-07-28 connections get the ``isError`` refusal). Declined, cancelled or unanswerable:
  the call is not run.

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
        caps = getattr(self.ctx.session, "client_params", None)
        caps = getattr(caps, "capabilities", None) or getattr(
            self.ctx.session, "client_capabilities", None)
        return self._legacy and getattr(caps, "elicitation", None) is not None

    async def approve(self, tool: str, arguments: Mapping[str, Any]) -> bool:
        """Ask the client's user whether ``tool`` may run with ``arguments``."""
        shown = json.dumps(dict(arguments), ensure_ascii=False, default=str)
        schema: Any = {"type": "object", "required": ["approve"], "properties": {"approve": {
            "type": "boolean", "title": "Approve", "default": False,
            "description": f"Run {tool} with these arguments?"}}}
        try:
            answer = await self.ctx.session.elicit_form(
                f"The tool {tool} needs your approval to run with {shown}.", schema,
                related_request_id=self.ctx.request_id)
        except Exception as exc:  # the client could not ask: not approved
            log.info("mcp serve: asking to approve %s failed: %r", tool, exc)
            return False
        return answer.action == "accept" and bool((answer.content or {}).get("approve"))


current_reporter: contextvars.ContextVar[Reporter | None] = contextvars.ContextVar(
    "reactloop_mcp_reporter", default=None)
"""The reporter of the ``tools/call`` being served (read by ``run_agent``)."""


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
        else None


def _text(value: Any) -> str | None:
    return None if value is None else str(value)
