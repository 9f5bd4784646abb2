"""MCP elicitation on Temporal, live or durable, against the real dev server (the
``temporal_server`` fixture) and real MCP servers (tests/temporal_mcp_agents.py).

The resumable form (an input-required result, tests/mcp_input_server.py) waits durably in the
workflow: the worker is killed while the question waits, a new worker takes over, the answer
given through the handle reaches the server (a new server process: the first one died with
its worker). The classic form (the reference server asks inside an open call) waits live in
the worker; a worker that dies meanwhile ends the call like any interrupted tool.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("temporalio")
pytest.importorskip("mcp")

from conftest import require
from reactloop import RunState
from reactloop.errors import UserError
from reactloop.events import CustomEvent
from reactloop.mcp import ElicitationAnswer
from test_temporal import (
    Workers,
    _cli,
    _kill,
    _lines,
    _queue,
    _run,
    _terminal,
    _until,
    _with_worker,
    running_workers,
)

pytestmark = pytest.mark.slow


@pytest.fixture
def workers(temporal_server: str, tmp_path: Path) -> Iterator[Workers]:
    yield from running_workers(temporal_server, tmp_path, "temporal_mcp_agents",
                               REACTLOOP_TEST_GATE=str(tmp_path / "gate"))


async def _question(handle: Any) -> CustomEvent:
    """The ``mcp_input_required`` event, as soon as the workflow publishes it."""
    async for _, event in handle.events():
        if isinstance(event, CustomEvent) and event.name == "mcp_input_required":
            return event
    result = await handle.result()
    raise AssertionError(f"the turn ended without asking: {result.state}: {result.output}")


def test_the_durable_question_survives_a_worker_restart(workers: Workers, tmp_path: Path
                                                        ) -> None:
    import temporal_mcp_agents

    queue, log = _queue(), tmp_path / "log"
    first = workers.start("booking", queue)

    async def go() -> Any:
        handle = await temporal_mcp_agents.booking.start(
            "Book me a seat to Lima.", client=workers.address, task_queue=queue,
            id=f"booking-{uuid.uuid4().hex[:6]}")
        asked = await _question(handle)
        assert asked.data["server"] == "input" and asked.data["tool"] == "input_book"
        assert asked.data["message"] == "Who is travelling?"
        assert asked.data["call_id"] == "book-1"
        pending = await handle.pending_inputs()
        assert list(pending) == [asked.data["id"]]
        [question] = pending.values()
        assert [f.name for f in question.fields] == ["name", "seats"]
        _kill(first)  # the question waits in the workflow, not in this worker
        await asyncio.to_thread(workers.start, "booking", queue)
        await handle.answer(asked.data["id"], ElicitationAnswer.accept(name="Ada", seats=2))
        events = [e async for _, e in handle.events()]
        result = await handle.result()
        with pytest.raises(UserError, match="has ended: no question waits"):  # answered once
            await handle.answer(asked.data["id"], ElicitationAnswer.decline())
        return result, events, await handle.pending_inputs()

    result, events, left = _run(go())
    assert result.state is RunState.COMPLETED, result.output
    assert result.output == "Done: booked 2 to Lima for Ada" and left == {}
    answered = [e.data for e in events if isinstance(e, CustomEvent)
                and e.name == "mcp_elicitation"]
    assert [(d["server"], d["action"]) for d in answered] == [("input", "accept")]
    lines = _lines(log)
    [booked] = [line for line in lines if line[0] == "booked"]
    assert booked[:-1] == ["booked", "Lima", "Ada", "2"]
    assert lines[0][0] == "asked" and booked[-1] != lines[0][-1]  # another server process
    tool = [m for m in result.messages if m.role == "tool"]
    assert [(m.content, m.is_error) for m in tool] == [("booked 2 to Lima for Ada", False)]


def test_decline_and_cancel_reach_the_server(temporal_server: str, tmp_path: Path) -> None:
    import temporal_mcp_agents

    log = tmp_path / "log"
    durable = temporal_mcp_agents.booking_agent(str(log), name="booking-inproc")

    async def body(client: Any, queue: str) -> Any:
        out = []
        for answer in (ElicitationAnswer.decline(), ElicitationAnswer.cancel()):
            handle = await durable.start("Book me a seat to Lima.", client=client,
                                         task_queue=queue)
            asked = await _question(handle)
            status = await handle.status()
            assert list(status["waiting_for_input"]) == [asked.data["id"]]
            assert status["busy"] and not status["waiting"]  # mid-turn, not between turns
            with pytest.raises(UserError, match="no question 'nope' waits"):
                await handle.answer("nope", answer)
            with pytest.raises(UserError, match="ElicitationAnswer"):
                await handle.answer(asked.data["id"], "yes")  # type: ignore[arg-type]
            with pytest.raises(UserError, match=r"does not fill the form: missing seats "
                                                r"\(its fields: name, seats\)"):
                await handle.answer(asked.data["id"], ElicitationAnswer.accept(name="Ada"))
            await handle.answer(asked.data["id"], answer)
            out.append(await handle.result())
        await durable.aclose()
        return out

    declined, cancelled = _with_worker(durable, temporal_server, body)
    assert declined.output == "Done: not booked: decline"
    assert cancelled.output == "Done: not booked: cancel"
    assert [line[:-1] for line in _lines(log) if line[0] != "asked"] == [
        ["not-booked", "Lima", "decline"], ["not-booked", "Lima", "cancel"]]


def test_a_classic_question_ends_like_an_interrupted_tool_when_its_worker_dies(
        workers: Workers, tmp_path: Path) -> None:
    import temporal_mcp_agents

    require(temporal_mcp_agents.EVERYTHING.exists(),
            "the npm test servers: cd tests/mcp_npm && npm ci")
    queue, gate = _queue(), tmp_path / "gate"
    first = workers.start("classic", queue)

    async def go() -> Any:
        assert temporal_mcp_agents.classic is not None
        handle = await temporal_mcp_agents.classic.start(
            "Ask me something.", client=workers.address, task_queue=queue)
        await asyncio.to_thread(_until, Path(str(gate) + ".asked").exists,
                                "the server to ask inside its open call")
        _kill(first)  # the live wait dies with the process that held the connection
        await asyncio.to_thread(workers.start, "classic", queue)
        return await handle.result()

    result = _run(go())
    assert result.state is RunState.COMPLETED, result.output
    [tool] = [m for m in result.messages if m.role == "tool"]
    assert tool.is_error
    assert "did not finish: the worker running it stopped responding" in tool.content
    assert "it was not attempted again since it may have had effects" in tool.content


def test_a_classic_question_without_a_handler_is_refused_at_once_on_a_worker(
        temporal_server: str) -> None:
    import temporal_mcp_agents
    from reactloop import Agent
    from reactloop.mcp import MCPServer
    from reactloop.temporal import TemporalAgent

    require(temporal_mcp_agents.EVERYTHING.exists(),
            "the npm test servers: cd tests/mcp_npm && npm ci")
    server = MCPServer.stdio(str(temporal_mcp_agents.EVERYTHING), ["stdio"], name="everything")
    durable = TemporalAgent(Agent(
        temporal_mcp_agents._one_call("everything_trigger-elicitation-request", {}),
        mcp_servers=[server], name="classic-unanswered"), heartbeat_timeout=5.0)

    async def body(client: Any, queue: str) -> Any:
        try:
            return await durable.run("Ask me something.", client=client, task_queue=queue)
        finally:
            await durable.aclose()

    result = _with_worker(durable, temporal_server, body)
    [tool] = [m for m in result.messages if m.role == "tool"]
    assert "classic, live form" in tool.content and "nobody can answer" in tool.content
    assert result.output.startswith("Done: ")


def test_a_workers_stand_in_handler_announces_elicitation_but_not_asked_sampling() -> None:
    """On a worker, servers without a handler announce elicitation (so resumable questions
    come, and wait durably); sampling that needs a person's yes stays unannounced."""
    from reactloop.mcp import MCPServer
    from reactloop.mcp._client_side import ClientSide
    from reactloop.mcp._elicitation import default_elicitor
    from reactloop.temporal._elicitation import refuse_live

    remote = MCPServer.http("http://127.0.0.1:9/mcp", name="remote")  # sampling: "ask"
    token = default_elicitor.set(refuse_live)
    try:
        options = ClientSide(remote, lambda *_: None).client_options()
        asking = ClientSide(MCPServer.http("http://127.0.0.1:9/mcp", name="remote",
                                           elicitation=lambda r: ElicitationAnswer.decline()),
                            lambda *_: None).client_options()
    finally:
        default_elicitor.reset(token)
    assert "elicitation_callback" in options and "sampling_callback" not in options
    assert "sampling_callback" in asking  # a handler of its own asks somebody


# -- reactloop run --temporal ---------------------------------------------------------------------
def test_run_temporal_without_a_terminal_says_how_to_answer_never_a_hang(
        workers: Workers, tmp_path: Path) -> None:
    import temporal_mcp_agents

    queue, run_id = _queue(), f"booking-{uuid.uuid4().hex[:6]}"
    workers.start("booking", queue)
    asked = _cli("--temporal", workers.address, "--agent", "temporal_mcp_agents:booking",
                 "--task-queue", queue, "--id", run_id, "Book me a seat to Lima.",
                 env=workers.env)
    assert asked.returncode == 3, asked.stderr  # waiting for the user, as a local run
    assert "MCP server 'input' asks: Who is travelling?" in asked.stderr
    assert f"waits for the answer in workflow {run_id}" in asked.stderr
    assert f"--task-queue {queue} --id {run_id})" in asked.stderr  # how to go on

    async def answer() -> Any:  # from Python, as the message says
        handle = await temporal_mcp_agents.booking.attach(run_id, client=workers.address)
        [qid] = await handle.pending_inputs()
        await handle.answer(qid, ElicitationAnswer.accept(name="Ada", seats=1))
        return await handle.result()

    result = _run(answer())
    assert result.output == "Done: booked 1 to Lima for Ada"


def test_run_temporal_on_a_terminal_asks_the_servers_question(workers: Workers,
                                                              tmp_path: Path) -> None:
    queue = _queue()
    workers.start("booking", queue)
    child = _terminal(workers, "booking", queue, "Book me a seat to Lima.")
    import pexpect  # there: _terminal skips without it
    child.expect_exact("MCP server 'input' asks: Who is travelling?")
    child.expect_exact("Answer? [Y]es, [n]o (decline), [c]ancel:")
    child.sendline("y")
    child.expect_exact("Name — Your name:")
    child.sendline("Ada")
    child.expect_exact("Seats — How many seats (1–8):")
    child.sendline("9")
    child.expect_exact("must be at most 8")
    child.sendline("2")
    child.expect_exact("Done: booked 2 to Lima for Ada")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert [line[:-1] for line in _lines(tmp_path / "log") if line[0] == "booked"] == [
        ["booked", "Lima", "Ada", "2"]]
