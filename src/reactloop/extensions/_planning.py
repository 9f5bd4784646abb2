"""Planning (feature N1, seed 002's ``PlanContext``): a plan the model keeps with a tool.

``Agent(planning=True)`` adds the ``update_plan`` tool. The current plan — goal, steps with
status and result, current step — is shown to the model at the *end* of every request (the
``plan`` volatile section), never in the system prompt, so the request prefix stays stable.
Every change emits a ``plan_update`` event, and the plan is on ``result.plan``.

The plan lives in the history: each ``update_plan`` result holds the whole plan as JSON, so a
later turn of a conversation or a resumed session picks it up from the latest one.

Public as :mod:`reactloop.planning` (a façade over this module).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, cast, get_args

from reactloop.errors import ToolRetry
from reactloop.events import PlanUpdateEvent
from reactloop.extensions._base import Extension
from reactloop.messages import Message
from reactloop.result import ToolResult
from reactloop.run_context import RunContext
from reactloop.tools._tool import Tool, ToolContext

__all__ = ["UPDATE_PLAN", "Plan", "PlanStep", "Planning", "StepStatus", "plan_from_history"]

UPDATE_PLAN = "update_plan"
StepStatus = Literal["pending", "in_progress", "completed", "failed", "skipped"]
_STATUSES: tuple[str, ...] = get_args(StepStatus)
_MARKS = {"pending": "[ ]", "in_progress": "[>]", "completed": "[x]", "failed": "[!]",
          "skipped": "[-]"}
NO_PLAN = ("Plan: none yet. If the task needs several steps, call update_plan with the goal "
           "and the steps first, then keep it up to date as you work.")


@dataclass(frozen=True, slots=True)
class PlanStep:
    """One step of a plan."""

    description: str
    status: StepStatus = "pending"
    result: str = ""
    """What the step produced (or why it failed)."""


@dataclass(frozen=True, slots=True)
class Plan:
    """A goal and its steps. Immutable: every update makes a new plan."""

    goal: str = ""
    steps: tuple[PlanStep, ...] = field(default=())

    @property
    def current_step(self) -> int | None:
        """Index of the step being worked on: the first in progress, else the first pending."""
        for wanted in ("in_progress", "pending"):
            for i, s in enumerate(self.steps):
                if s.status == wanted:
                    return i
        return None

    @property
    def current(self) -> PlanStep | None:
        i = self.current_step
        return None if i is None else self.steps[i]

    @property
    def done(self) -> bool:
        """True when there are steps and none is pending or in progress."""
        return bool(self.steps) and self.current_step is None

    def render(self) -> str:
        """The plan as the model sees it at the end of each request."""
        lines = ["Current plan (keep it up to date with update_plan):"]
        if self.goal:
            lines.append(f"Goal: {self.goal}")
        current = self.current_step
        for i, s in enumerate(self.steps):
            line = f"{i + 1}. {_MARKS[s.status]} {s.description}"
            if s.result:
                line += f" — {s.result}"
            if i == current:
                line += "  <- current step"
            lines.append(line)
        if self.done:
            lines.append("All steps are finished: give the final answer.")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {"goal": self.goal,
                "steps": [{"description": s.description, "status": s.status,
                           "result": s.result} for s in self.steps],
                "current_step": None if self.current_step is None else self.current_step + 1}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Plan:
        steps = []
        for s in d.get("steps") or ():
            status = s.get("status", "pending")
            steps.append(PlanStep(str(s["description"]),
                                  status if status in _STATUSES else "pending",
                                  str(s.get("result") or "")))
        return cls(str(d.get("goal") or ""), tuple(steps))


def update(plan: Plan | None, *, goal: str | None = None, steps: Sequence[str] | None = None,
           step: int | None = None, status: str | None = None, result: str | None = None
           ) -> Plan:
    """``plan`` with one ``update_plan`` call applied; :class:`ToolRetry` explains misuse."""
    if goal is None and steps is None and step is None:
        raise ToolRetry("Nothing to update: pass goal and steps to make a plan, or step with "
                        "status/result to update one step.")
    new = plan or Plan()
    if goal is not None:
        new = replace(new, goal=goal.strip())
    if steps is not None:
        old = {s.description: s for s in new.steps}
        texts = [t.strip() for t in steps if t and t.strip()]
        new = replace(new, steps=tuple(old.get(t, PlanStep(t)) for t in texts))
    if step is not None:
        if not new.steps:
            raise ToolRetry("There are no steps yet: pass steps (a list of short descriptions).")
        if not 1 <= step <= len(new.steps):
            raise ToolRetry(f"step must be a step number from 1 to {len(new.steps)}, got {step}.")
        if status is not None and status not in _STATUSES:
            raise ToolRetry(f"status must be one of {', '.join(_STATUSES)}; got {status!r}.")
        target = new.steps[step - 1]
        new_status = cast(StepStatus, status) if status is not None else (
            "completed" if result is not None else target.status)
        changed = replace(target, status=new_status,
                          result=target.result if result is None else result.strip())
        new = replace(new, steps=(*new.steps[:step - 1], changed, *new.steps[step:]))
    elif status is not None or result is not None:
        raise ToolRetry("Pass step (the step's number) together with status or result.")
    return new


def plan_from_history(messages: Sequence[Message]) -> Plan | None:
    """The plan held by the latest successful ``update_plan`` result in ``messages``."""
    for m in reversed(messages):
        if m.role == "tool" and m.name == UPDATE_PLAN and not m.is_error:
            try:
                return Plan.from_dict(json.loads(m.content))
            except (ValueError, TypeError, KeyError, AttributeError):
                continue
    return None


class Planning(Extension):
    """The ``update_plan`` tool and the ``plan`` note; the plan lives in ``ctx.state["plan"]``
    (restored from the history when a conversation goes on)."""

    key = "plan"

    def __init__(self) -> None:
        self._tool = Tool(_update_plan, name=UPDATE_PLAN, repeatable=True, internal=True,
                          origin="reactloop.planning")

    def tools(self) -> Sequence[Tool]:
        return (self._tool,)

    async def start(self, ctx: RunContext) -> None:
        saved = ctx.state.get(self.key)
        if isinstance(saved, Mapping):  # a saved run: JSON data
            ctx.state[self.key] = Plan.from_dict(saved)
        elif saved is None:
            ctx.state[self.key] = plan_from_history(ctx.messages)

    def notes(self, ctx: RunContext) -> Mapping[str, str | None]:
        plan = ctx.state.get(self.key)
        return {"plan": plan.render() if isinstance(plan, Plan) else NO_PLAN}

    def after_tools(self, ctx: RunContext, results: Sequence[ToolResult]) -> None:
        for r in results:
            if r.name == UPDATE_PLAN and r.error is None and not r.cached:
                try:
                    plan = Plan.from_dict(json.loads(r.content))
                except (ValueError, TypeError, KeyError, AttributeError):
                    continue
                ctx.state[self.key] = plan
                ctx.emit(PlanUpdateEvent(ctx.run_id, plan))


async def _update_plan(ctx: ToolContext, goal: str | None = None, steps: list[str] | None = None,
                       step: int | None = None, status: StepStatus | None = None,
                       result: str | None = None) -> str:
    """Make or update your plan for a task that needs several steps. The current plan
    is shown to you at the end of every request.

    To make a plan, pass goal and steps. As you work, pass step (its number) with
    status and result. Passing steps again replaces the list; steps with the same
    text keep their status and result.

    Args:
        goal: what the whole task should achieve.
        steps: the steps in order, each a short description.
        step: the number of the step to update (1 is the first).
        status: the step's new status: pending, in_progress, completed, failed or
            skipped (default with a result: completed).
        result: what the step produced, or why it failed.
    """
    current = ctx.state.get(Planning.key)
    plan = update(current if isinstance(current, Plan) else None, goal=goal, steps=steps,
                  step=step, status=status, result=result)
    ctx.state[Planning.key] = plan  # calls later in this batch see it (in this process)
    return json.dumps(plan.to_dict(), ensure_ascii=False)
