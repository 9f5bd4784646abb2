"""Attachments on Temporal, against a real dev server (the ``temporal_server`` fixture): the
bytes go to the attachment store (a session store), Temporal carries references only, the
model activity loads the bytes before the model call (ScriptedModel records what it got).

The images are about 1.5 MB each: one fits under Temporal's 2 MB payload limit, three do not,
so a run that carried bytes in its input, history or activities would fail; the tests read the
workflow's real history from the server and measure it.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("temporalio")

from _files import png
from conftest import die_with_parent
from reactloop import Agent, Image, RunState, ToolCall
from reactloop.testing import ScriptedModel

pytestmark = pytest.mark.slow
MB = 1_000_000


def _queue() -> str:
    return f"q-{uuid.uuid4().hex[:8]}"


def _run(coro: Awaitable[Any]) -> Any:
    async def bounded() -> Any:
        return await asyncio.wait_for(coro, 180)

    return asyncio.run(bounded())


def _with_worker(durable: Any, address: str, body: Callable[[Any, str], Awaitable[Any]]) -> Any:
    """Run ``body(client, task_queue)`` while an in-process worker hosts ``durable``."""
    from temporalio.client import Client

    async def main() -> Any:
        client = await Client.connect(address)
        queue = _queue()
        async with durable.worker(client, queue):
            return await body(client, queue)

    return _run(main())


def _images(n: int, seed: int = 0) -> list[Image]:
    return [Image.from_bytes(png(seed=seed + i, size=int(1.5 * MB)), name=f"photo{i}.png")
            for i in range(n)]


def _payload_sizes(message: Any) -> Iterator[int]:
    """The size of every ``Payload`` inside a protobuf message (an event of a history)."""
    for field, value in message.ListFields():
        if field.message_type is None:
            continue
        if field.message_type.GetOptions().map_entry:
            values = list(value.values())
        elif hasattr(value, "ListFields"):
            values = [value]
        else:  # a repeated field
            values = list(value)
        for v in values:
            if not hasattr(v, "ListFields"):
                continue
            if v.DESCRIPTOR.full_name == "temporal.api.common.v1.Payload":
                yield v.ByteSize()
            else:
                yield from _payload_sizes(v)


async def _history(client: Any, workflow_id: str, run_id: str | None = None) -> dict[str, Any]:
    """The workflow's real history, measured: events, total bytes, payloads, largest one."""
    history = await client.get_workflow_handle(workflow_id, run_id=run_id).fetch_history()
    sizes = [s for e in history.events for s in _payload_sizes(e)]
    raw = b"".join(e.SerializeToString() for e in history.events)
    return {"events": len(history.events), "bytes": len(raw), "payloads": sizes, "raw": raw,
            "types": [e.event_type for e in history.events]}


def _assert_no_bytes_of(raw: bytes, images: list[Image]) -> None:
    for image in images:
        data = image.data or b""
        encoded = base64.b64encode(data)
        for piece in (encoded[:1200], encoded[len(encoded) // 2:len(encoded) // 2 + 400],
                      data[:1200], data[len(data) // 2:len(data) // 2 + 400]):
            assert piece not in raw, f"bytes of {image.name} are in the workflow's history"


# -- three 1.5 MB images, and a tool that returns one ------------------------------------------
def test_images_cross_temporal_as_references_and_reach_the_model_whole(
        temporal_server: str, store_arg: str) -> None:
    from reactloop.sessions import open_store
    from reactloop.temporal import TemporalAgent
    from reactloop.temporal._blobs import session_of

    images = _images(3)
    (chart,) = _images(1, seed=7)
    assert all(1.4 * MB < (i.size) < 2 * MB for i in images)  # each under the limit; all over

    def plot() -> Image:
        """Draw the chart."""
        return chart

    model = ScriptedModel([ToolCall("plot", {}), "Three photos and a chart."])
    # a SQLite file, or one PostgreSQL database for starters and workers on several machines
    durable = TemporalAgent(Agent(model=model, tools=[plot], name="seeing"), store=store_arg)
    wf_id = f"seeing-{uuid.uuid4().hex[:8]}"

    async def body(client: Any, queue: str) -> Any:
        result = await durable.run(["What is in these pictures?", *images], client=client,
                                   task_queue=queue, id=wf_id)
        return result, await _history(client, wf_id)

    result, history = _with_worker(durable, temporal_server, body)
    assert result.state is RunState.COMPLETED and result.output == "Three photos and a chart."
    # the model received the actual bytes: the prompt's three, then the tool's picture too
    first, second = model.requests
    assert [a.data for a in first.messages[0].attachments] == [i.data for i in images]
    assert [a.data for a in second.messages[0].attachments] == [i.data for i in images]
    tool_message = second.messages[-1]
    assert tool_message.role == "tool" and tool_message.attachments[0].data == chart.data
    # the store holds the bytes, once each, in the workflow's session
    stored = {a.sha256: a.data for m in open_store(store_arg).get(session_of(wf_id))
              for a in m.attachments}
    assert stored == {i.sha256: i.data for i in [*images, chart]}
    # the caller's result has them back from the store (its events carry references only),
    # so a saved run keeps them: once each
    sent = result.messages[0].attachments
    assert [(a.sha256, a.name, a.data) for a in sent] == [
        (i.sha256, i.name, i.data) for i in images]
    saved = result.save()
    assert sorted(json.loads(saved)["attachments"]) == sorted(stored)
    assert saved.count(base64.b64encode(chart.data or b"")[:200].decode()) == 1
    # the workflow's real history: far under the limit, no image bytes in it
    print(f"history: {history['events']} events, {history['bytes']:,} bytes, "
          f"{len(history['payloads'])} payloads, {sum(history['payloads']):,} payload bytes, "
          f"largest {max(history['payloads']):,}; attachments {sum(len(d) for d in stored.values()):,} bytes")
    assert sum(history["payloads"]) < 100_000 and max(history["payloads"]) < 50_000
    assert history["bytes"] < 150_000
    _assert_no_bytes_of(history["raw"], [*images, chart])


def test_a_worker_without_the_blob_ends_the_run_naming_hash_and_fix(
        temporal_server: str, tmp_path: Path) -> None:
    from reactloop.temporal import TemporalAgent

    (image,) = _images(1, seed=20)
    model = ScriptedModel(["never"])
    starter = TemporalAgent(Agent(model=model, name="lost"), store=tmp_path / "starter.sqlite3")
    worker = TemporalAgent(Agent(model=model, name="lost"), store=tmp_path / "worker.sqlite3")

    async def body(client: Any, queue: str) -> Any:
        return await starter.run(["Look", image], client=client, task_queue=queue)

    result = _with_worker(worker, temporal_server, body)
    assert result.state is RunState.ERROR and model.requests == []  # no call without bytes
    assert image.sha256 in result.output and "worker.sqlite3" in result.output
    assert "configure the store the run's starter used on the worker too" in result.output


def test_refused_before_anything_is_stored_or_started(tmp_path: Path) -> None:
    from reactloop.errors import UserError
    from reactloop.temporal import TemporalAgent

    (image,) = _images(1, seed=30)
    store = tmp_path / "never.sqlite3"
    blind = TemporalAgent(Agent(model=ScriptedModel([], accepts=()), name="blind"), store=store)
    with pytest.raises(UserError, match="cannot see images"):  # no server is reached either
        _run(blind.start(["Look", image], client="127.0.0.1:1", task_queue="q"))
    assert not store.exists()


# -- a session that continues as new keeps its attachments ---------------------------------------
def test_attachments_survive_continue_as_new_and_a_second_message(
        temporal_server: str, tmp_path: Path) -> None:
    from reactloop.temporal import TemporalAgent

    first_images, (later,) = _images(2, seed=40), _images(1, seed=50)
    model = ScriptedModel(["Two photos.", "And a third."])
    durable = TemporalAgent(Agent(model=model, name="album"), history_limit=1,
                            store=tmp_path / "album.sqlite3")
    wf_id = f"album-{uuid.uuid4().hex[:8]}"

    async def body(client: Any, queue: str) -> Any:
        handle = await durable.start(["Look at these", *first_images], client=client,
                                     task_queue=queue, id=wf_id, session=True)
        one = await handle.result()
        first_run = (await handle.workflow.describe()).run_id
        await handle.send(["And this one?", later])  # the workflow continues as new first
        two = await handle.result()
        second_run = (await handle.workflow.describe()).run_id
        await handle.close()
        return (one, two, await _history(client, wf_id, first_run),
                await _history(client, wf_id, second_run))

    one, two, old, new = _with_worker(durable, temporal_server, body)
    assert one.output == "Two photos." and two.output == "And a third."
    from temporalio.api.enums.v1 import EventType

    assert old["types"][-1] == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW
    # the second turn's request has every picture's bytes: the first turn's (whose references
    # crossed continue-as-new) and the new message's
    sent = model.requests[1].messages
    assert [a.data for a in sent[0].attachments] == [i.data for i in first_images]
    assert sent[-1].content == "And this one?" and sent[-1].attachments[0].data == later.data
    for h in (old, new):
        assert max(h["payloads"]) < 50_000
        _assert_no_bytes_of(h["raw"], [*first_images, later])


# -- reactloop worker --store and reactloop run --temporal -a FILE --store --------------------
_MODULE = '''
from reactloop import Agent, ModelRequest, ModelResponse
from reactloop.temporal import TemporalAgent
from reactloop.testing import FunctionModel
import hashlib


def describe(request: ModelRequest) -> ModelResponse:
    parts = [a for m in request.messages for a in m.attachments]
    return ModelResponse(text=" ".join(
        f"{a.name}:{len(a.data or b'')}:{hashlib.sha256(a.data or b'').hexdigest()[:12]}"
        for a in parts))


durable = TemporalAgent(Agent(model=FunctionModel(describe), name="describer"))
'''


def test_cli_run_temporal_attaches_files(temporal_server: str, tmp_path: Path) -> None:
    (tmp_path / "describer_agent.py").write_text(textwrap.dedent(_MODULE))
    picture = tmp_path / "shot.png"
    picture.write_bytes(png(seed=60, size=int(1.5 * MB)))
    image = Image.from_path(picture)
    store, queue = str(tmp_path / "shared.sqlite3"), _queue()
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1",
           "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    err = tmp_path / "worker.err"
    worker = subprocess.Popen(
        [sys.executable, "-m", "reactloop", "worker", "--agent", "describer_agent:durable",
         "--address", temporal_server, "--task-queue", queue, "--store", store],
        cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=err.open("wb"),
        preexec_fn=die_with_parent)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "reactloop", "run", "--temporal", temporal_server, "--agent",
             "describer_agent:durable", "--task-queue", queue, "--store", store,
             "-a", str(picture), "What is this?"],
            cwd=tmp_path, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
            timeout=120, check=False)
    finally:
        worker.kill()
        worker.wait()
    assert done.returncode == 0, (done.stderr, err.read_text())
    # the worker's model got the file's bytes, read from the store --store names
    assert done.stdout.strip() == f"shot.png:{image.size}:{image.sha256[:12]}"
    bad = subprocess.run(
        [sys.executable, "-m", "reactloop", "run", "--temporal", temporal_server, "--agent",
         "describer_agent:durable", "--task-queue", queue, "-a", str(tmp_path / "nope.png"),
         "What is this?"],
        cwd=tmp_path, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
        timeout=120, check=False)
    assert bad.returncode != 0 and "nope.png" in bad.stderr and "Traceback" not in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1, bad.stderr


# -- what a text-only model gets, as in-process --------------------------------------------------
def test_a_text_only_model_gets_what_it_gets_in_process(temporal_server: str,
                                                        tmp_path: Path) -> None:
    pytest.importorskip("pypdf")
    from _files import pdf
    from reactloop import Document
    from reactloop.errors import UserError
    from reactloop.temporal import TemporalAgent

    picture = Image.from_bytes(png(seed=70), name="plot.png")
    report = Document.from_bytes(pdf("Revenue rose 12 %"), name="report.pdf")

    def plot() -> Image:
        """Draw."""
        return picture

    def scripted() -> ScriptedModel:
        return ScriptedModel([ToolCall("plot", {}), "Noted."], accepts=())

    local, durable_model = scripted(), scripted()
    local_events = _run(_collect(Agent(model=local, tools=[plot]).stream(["Read", report])))
    durable = TemporalAgent(Agent(model=durable_model, tools=[plot], name="blind"),
                            store=tmp_path / "blind.sqlite3")

    async def body(client: Any, queue: str) -> Any:
        handle = await durable.start(["Read", report], client=client, task_queue=queue,
                                     session=True)
        events = [e async for _, e in handle.events()]
        with pytest.raises(UserError, match="cannot see images"):  # as agent.run refuses it
            await handle.send(["And this?", picture])
        await handle.close()
        return events

    events = _with_worker(durable, temporal_server, body)
    # the PDF went as its text, the tool's picture as a line saying it was left out
    for a, b in zip(local.requests, durable_model.requests, strict=True):
        assert [(m.role, m.content, m.attachments) for m in a.messages] == [
            (m.role, m.content, m.attachments) for m in b.messages]
    assert "Revenue rose 12 %" in durable_model.requests[0].messages[0].content
    assert "left out" in durable_model.requests[1].messages[-1].content

    def told(evs: list[Any]) -> list[str]:
        return sorted(e.name for e in evs if getattr(e, "name", "").startswith("attachment_"))

    assert told(events) == told(local_events) == ["attachment_as_text", "attachment_omitted"]


async def _collect(stream: Any) -> list[Any]:
    return [e async for e in stream]
