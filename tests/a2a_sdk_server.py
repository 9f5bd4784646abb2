"""An A2A server built only from ``a2a-sdk``'s own server classes (not reactloop's), with a
trivial executor: what reactloop's client (``reactloop.a2a.A2AAgent``) is checked against.

usage: python a2a_sdk_server.py PORT   (serves on 127.0.0.1:PORT until killed)

The executor answers by the message's first word: ``ask`` → ``input-required`` ("Which
colour?"), and the next message in that task completes with ``colour: <answer>``; ``boom`` →
``failed``; ``data`` → a data-part artifact ``{"n": 3, "ok": true}``; ``slow`` → waits until
cancelled; ``stream`` → three artifact chunks appended; anything else → ``ECHO: <TEXT>``.
"""

from __future__ import annotations

import asyncio
import sys

import uvicorn
from a2a.helpers import get_message_text, new_data_part, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Task,
    TaskState,
    TaskStatus,
)
from starlette.applications import Starlette


class Trivial(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.message is not None
        text = get_message_text(context.message)
        updater = TaskUpdater(event_queue, str(context.task_id), str(context.context_id))
        if context.current_task is None:
            await event_queue.enqueue_event(Task(
                id=str(context.task_id), context_id=str(context.context_id),
                history=[context.message],
                status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED)))
            asked = False
        else:
            asked = context.current_task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        await updater.start_work()
        word = text.split()[0].lower() if text.split() else ""
        if asked:
            await updater.add_artifact([new_text_part(f"colour: {text}")], name="answer")
            await updater.complete()
        elif word == "ask":
            await updater.requires_input(updater.new_agent_message(
                [new_text_part("Which colour?")]))
        elif word == "boom":
            await updater.failed(updater.new_agent_message([new_text_part("it blew up")]))
        elif word == "data":
            await updater.add_artifact([new_data_part({"n": 3, "ok": True})], name="answer")
            await updater.complete()
        elif word == "slow":
            await asyncio.Event().wait()
        elif word == "stream":
            for i, chunk in enumerate(["one ", "two ", "three"]):
                await updater.add_artifact([new_text_part(chunk)], artifact_id="a1",
                                           name="answer", append=i > 0, last_chunk=i == 2)
            await updater.complete()
        else:
            await updater.add_artifact([new_text_part(f"ECHO: {text.upper()}")], name="answer")
            await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, str(context.task_id), str(context.context_id))
        await updater.cancel()


def app(port: int) -> Starlette:
    card = AgentCard(
        name="sdk-echo", description="Echoes in capitals (a2a-sdk only).", version="1.0",
        supported_interfaces=[AgentInterface(url=f"http://127.0.0.1:{port}/rpc",
                                             protocol_binding="JSONRPC",
                                             protocol_version="1.0")],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"], default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="echo", description="echo", tags=["echo"])])
    handler = DefaultRequestHandler(agent_executor=Trivial(), task_store=InMemoryTaskStore(),
                                    agent_card=card)
    return Starlette(routes=[*create_agent_card_routes(card),
                             *create_jsonrpc_routes(handler, "/rpc")])


if __name__ == "__main__":
    port = int(sys.argv[1])
    uvicorn.run(app(port), host="127.0.0.1", port=port, log_level="warning")
