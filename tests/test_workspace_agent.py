"""``Agent(workspace=DIR)`` end to end with ScriptedModel: the tools are offered, the system
prompt describes the workspace, results and escape attempts come back as tool messages and
the run goes on."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from reactloop import Agent, ModelResponse, RunState, ToolCall, UserError
from reactloop.testing import ScriptedModel

BOOK_FLIGHT = Path(__file__).resolve().parent.parent / "examples" / "skills" / "book-flight"


def calls(*items: tuple[str, dict[str, Any]]) -> ModelResponse:
    return ModelResponse(tool_calls=[ToolCall(name, args, f"c{i}")
                                     for i, (name, args) in enumerate(items, 1)])


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "outside.txt").write_text("outside secret\n")
    ws = tmp_path / "project"
    (ws / "src").mkdir(parents=True)
    (ws / "README.md").write_text("# Project\nRun `python tally.py`.\n")
    (ws / "src" / "calc.py").write_text("def total(xs):\n    return sum(xs)  # TODO: floats\n")
    (ws / "escape").symlink_to(tmp_path / "outside.txt")
    return ws


def test_tools_and_workspace_section(root: Path) -> None:
    model = ScriptedModel(["ok"])
    agent = Agent(model=model, workspace=root, instructions="You are a code helper.")
    assert agent.tools == ["read_file", "list_dir", "grep", "run_command"]
    agent.run_sync("hi")
    request = model.requests[0]
    assert [t.name for t in request.tools] == ["read_file", "list_dir", "grep", "run_command"]
    assert request.system.startswith("You are a code helper.")
    assert "## Workspace\n" in request.system
    assert f"Your workspace is the folder {root.name}." in request.system
    # the prompt is the same in every checkout: no absolute path of the machine in it
    assert str(root.resolve().parent) not in request.system


def test_a_run_explores_the_workspace_and_runs_a_command(root: Path) -> None:
    (root / "tally.py").write_text("import sys\nprint(sum(int(a) for a in sys.argv[1:]))\n")
    model = ScriptedModel([
        calls(("list_dir", {}), ("grep", {"pattern": "TODO"})),
        calls(("read_file", {"path": "src/calc.py", "limit": 1})),
        calls(("run_command", {"command": "python tally.py 2 3 4"})),
        "The tally is 9.",
    ])
    result = Agent(model=model, workspace=root).run_sync("Look around, then tally 2, 3, 4.")
    assert result.state is RunState.COMPLETED and result.output == "The tally is 9."
    listing, found = model.requests[1].messages[-2:]
    names = [e["name"] for e in json.loads(listing.content)["entries"]]
    assert names == ["README.md", "escape", "src", "tally.py"]
    assert found.content == "src/calc.py:2:     return sum(xs)  # TODO: floats"
    read = model.requests[2].messages[-1].content
    assert read.startswith("     1\tdef total(xs):\n[lines 1-1 of 2;")
    ran = json.loads(model.requests[3].messages[-1].content)
    assert ran == {"exit_code": 0, "stdout": "9\n", "stderr": ""}
    assert result.metrics.tool_calls == 4


def test_escape_attempts_are_error_results_and_the_run_recovers(root: Path) -> None:
    model = ScriptedModel([
        calls(("read_file", {"path": "../outside.txt"}), ("read_file", {"path": "escape"}),
              ("list_dir", {"path": str(root.parent)})),
        calls(("read_file", {"path": "README.md"})),
        "The README says to run tally.py.",
    ])
    result = Agent(model=model, workspace=root).run_sync("Read the files.")
    assert result.state is RunState.COMPLETED
    errors = model.requests[1].messages[-3:]
    for message in errors:
        assert message.role == "tool"
        assert message.content.startswith("Error: Access denied")
        assert f"outside the workspace {root.resolve()}" in message.content
        assert "outside secret" not in message.content
    assert "# Project" in model.requests[2].messages[-1].content
    errored = [r for step in result.steps for r in step.results if r.error]
    assert len(errored) == 3


def test_a_command_is_run_again_when_called_again(root: Path) -> None:
    """Commands change things, so identical calls are not answered from an earlier result."""
    (root / "count.py").write_text(
        "from pathlib import Path\np = Path('n.txt')\n"
        "n = int(p.read_text()) + 1 if p.exists() else 1\np.write_text(str(n))\nprint(n)\n")
    model = ScriptedModel([
        calls(("run_command", {"command": "python count.py"})),
        calls(("run_command", {"command": "python count.py"})),
        calls(("read_file", {"path": "n.txt", "line_numbers": False})),
        "2",
    ])
    Agent(model=model, workspace=root).run_sync("count twice")
    outputs = [json.loads(model.requests[i].messages[-1].content)["stdout"] for i in (1, 2)]
    assert outputs == ["1\n", "2\n"]
    assert model.requests[3].messages[-1].content == "2"


def test_skill_scripts_run_through_run_command(root: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Seed 003: the book-flight skill's scripts run with the workspace as working folder."""
    monkeypatch.setenv("BOOK_FLIGHT_NOW", "2026-11-30T09:00:00")  # not a secret: passed on
    script = BOOK_FLIGHT / "scripts" / "search_flights.py"
    command = (f"python {shlex.quote(str(script))} --from Beijing --to Tokyo "
               "--date 2026-12-01")
    model = ScriptedModel([calls(("run_command", {"command": command})), "Here are flights."])
    result = Agent(model=model, workspace=root).run_sync("Flights Beijing to Tokyo?")
    assert result.state is RunState.COMPLETED
    ran = json.loads(model.requests[1].messages[-1].content)
    assert ran["exit_code"] == 0, ran["stderr"]
    flights = json.loads(ran["stdout"])
    assert flights["count"] > 0


def test_tool_timeout_of_the_agent_stops_a_command(root: Path) -> None:
    code = "import time; time.sleep(60)"
    model = ScriptedModel([
        calls(("run_command", {"command": f"{shlex.quote(sys.executable)} -c "
                                          f"{shlex.quote(code)}", "timeout": 120})),
        "gave up",
    ])
    result = Agent(model=model, workspace=root, tool_timeout=1).run_sync("wait")
    assert result.state is RunState.COMPLETED
    assert "timed out after 1 s" in model.requests[1].messages[-1].content


def test_missing_workspace_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="not an existing folder"):
        Agent(model=ScriptedModel(["x"]), workspace=tmp_path / "missing")


def test_agent_accepts_a_configured_workspace(tmp_path: Path) -> None:
    from reactloop.tools.workspace import Workspace

    ws = Workspace(tmp_path, command_timeout=5)
    agent = Agent(model=ScriptedModel(["ok"]), workspace=ws)
    assert ws.describe() in agent.spec.system
    assert {"read_file", "list_dir", "grep", "run_command"} <= set(agent.tools)
