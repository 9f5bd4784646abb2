"""Planning (feature N1, seed 002's ``PlanContext``): a plan the model keeps with a tool.

``Agent(planning=True)`` adds the ``update_plan`` tool. The current plan — goal, steps with
status and result, current step — is shown to the model at the *end* of every request (the
``plan`` volatile section), never in the system prompt, so the request prefix stays stable.
Every change emits a ``plan_update`` event, and the plan is on ``result.plan``.

The plan lives in the history: each ``update_plan`` result holds the whole plan as JSON, so a
later turn of a conversation or a resumed session picks it up from the latest one.
"""

from __future__ import annotations

import json
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal, cast, get_args

from reactloop.errors import ToolRetry
from reactloop.events import Event, PlanUpdateEvent
from reactloop.messages import Message
from reactloop.tools._tool import Tool, ToolContext

if TYPE_CHECKING:
    from reactloop._loop import _Run
    from reactloop.agent import Agent

__all__ = ["UPDATE_PLAN", "Plan", "PlanStep", "Planner", "StepStatus", "plan_from_history"]

UPDATE_PLAN = "update_plan"
StepStatus = Literal["pending", "in_progress", "completed", "failed", "skipped"]
_STATUSES: tuple[str, ...] = get_args(StepStatus)
_MARKS = {"pending": "[ ]", "in_progress": "[>]", "completed": "[x]", "failed": "[!]",
          "skipped": "[-]"}
_MAX_RUNS = 256  # per-run plans kept for this many recent runs
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


@dataclass
class _RunPlan:
    plan: Plan | None
    post: Callable[[Event], None] | None = None


def _poster(run: _Run) -> Callable[[Event], None]:
    """Queue an event on the run (looked up on each call: the loop swaps its list when it
    flushes; a weak reference, so a finished run is not kept alive)."""
    ref = weakref.ref(run)

    def post(event: Event) -> None:
        live = ref()
        if live is not None:
            live.pending.append(event)

    return post


class Planner:
    """The ``update_plan`` tool and the agent hooks that show the plan and return it."""

    def __init__(self) -> None:
        self._runs: OrderedDict[str, _RunPlan] = OrderedDict()
        self._lock = threading.Lock()

    def install(self, agent: Agent) -> None:
        """Add the tool to ``agent`` and register the ``volatile_notes``/``plan_of`` hooks."""
        agent._registry.add(self.tool())
        agent._extensions["volatile_notes"] = self.volatile_notes
        agent._extensions["plan_of"] = self.plan_of

    def _state(self, run_id: str, messages: Sequence[Message] = ()) -> _RunPlan:
        with self._lock:
            state = self._runs.get(run_id)
            if state is None:
                state = self._runs[run_id] = _RunPlan(plan_from_history(messages))
                while len(self._runs) > _MAX_RUNS:
                    self._runs.popitem(last=False)
            return state

    def volatile_notes(self, run: _Run) -> dict[str, str | None]:
        """The ``plan`` section for the run's next request."""
        state = self._state(run.run_id, run.messages)
        if state.post is None:
            state.post = _poster(run)
        return {"plan": state.plan.render() if state.plan is not None else NO_PLAN}

    def plan_of(self, run: _Run) -> Plan | None:
        """The run's plan, for ``result.plan`` (the run's bookkeeping is released)."""
        with self._lock:
            state = self._runs.pop(run.run_id, None)
        return state.plan if state is not None else plan_from_history(run.messages)

    def tool(self) -> Tool:
        planner = self

        async def update_plan(ctx: ToolContext, goal: str | None = None,
                              steps: list[str] | None = None, step: int | None = None,
                              status: StepStatus | None = None, result: str | None = None
                              ) -> str:
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
            state = planner._state(ctx.run_id)
            state.plan = update(state.plan, goal=goal, steps=steps, step=step, status=status,
                                result=result)
            if state.post is not None:
                state.post(PlanUpdateEvent(ctx.run_id, state.plan))
            return json.dumps(state.plan.to_dict(), ensure_ascii=False)

        return Tool(update_plan, name=UPDATE_PLAN, repeatable=True, origin="reactloop.planning")
