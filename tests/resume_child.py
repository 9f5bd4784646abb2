"""Resume a saved run in a fresh process (used by tests/test_run_state.py).

Usage: python resume_child.py SAVED.json ANSWER -> prints a JSON summary on stdout.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from reactloop import Agent, ModelResponse, ToolCall
from reactloop.testing import ScriptedModel

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "skills"


def main() -> None:
    saved, answer = Path(sys.argv[1]).read_text(encoding="utf-8"), sys.argv[2]
    model = ScriptedModel([
        ModelResponse(tool_calls=[ToolCall("load_skill", {"name": "data-analyst"})]),
        ModelResponse(tool_calls=[ToolCall("update_plan", {"step": 1, "result": answer})]),
        ModelResponse(tool_calls=[ToolCall("task_completion", {"result": f"Done for {answer}."})]),
    ])
    agent = Agent(model=model, skills=[EXAMPLES], planning=True, loop_control=True)
    result = agent.resume_sync(saved, answer)
    first = model.requests[0]
    print(json.dumps({
        "state": result.state.value,
        "output": result.output,
        "tools_offered": [t.name for t in first.tools],
        "plan_note": first.notes[0] if first.notes else "",
        "reload_answer": result.steps[0].results[0].content,
        "plan": result.plan.to_dict() if result.plan is not None else None,
        "first_message": result.messages[0].content,
    }))


if __name__ == "__main__":
    main()
