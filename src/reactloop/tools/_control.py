"""Loop-control tools (feature L6): ``task_completion``, ``ask_question``, ``converse``.

With ``Agent(loop_control=True)`` the model must act through tools in every step and ends the
run by calling one of these.
"""

from __future__ import annotations

from reactloop.tools._tool import Tool

__all__ = ["ASK_QUESTION", "CONTROL_TOOL_NAMES", "TASK_COMPLETION", "control_tools"]

TASK_COMPLETION = "task_completion"
ASK_QUESTION = "ask_question"
CONTROL_TOOL_NAMES = frozenset({TASK_COMPLETION, ASK_QUESTION, "converse"})


async def task_completion(result: str) -> str:
    """Finish the task and give the user the final answer.

    Args:
        result: the final answer for the user
    """
    return result


async def ask_question(question: str) -> str:
    """Ask the user a question and wait for the reply (ends this run).

    Args:
        question: the question for the user
    """
    return question


async def converse(message: str) -> str:
    """Reply conversationally when the message needs no work (ends this run).

    Args:
        message: the reply for the user
    """
    return message


def control_tools() -> list[Tool]:
    return [
        Tool(f, origin="reactloop loop-control tools", internal=True)
        for f in (task_completion, ask_question, converse)
    ]
