"""Planning (feature N1): a plan the model keeps with the ``update_plan`` tool.

A thin façade: planning is an extension and lives in :mod:`reactloop.extensions`
(``reactloop/extensions/_planning.py``); this public module keeps importing the same names.
``Agent(planning=True)`` adds the ``update_plan`` tool; the plan is shown at the end of every
request, every change emits a ``plan_update`` event, and the plan is on ``result.plan``.
"""

from reactloop.extensions._planning import NO_PLAN as NO_PLAN
from reactloop.extensions._planning import (
    UPDATE_PLAN,
    Plan,
    Planning,
    PlanStep,
    StepStatus,
    plan_from_history,
)
from reactloop.extensions._planning import update as update

__all__ = ["UPDATE_PLAN", "Plan", "PlanStep", "Planning", "StepStatus", "plan_from_history"]
