"""Issue 27: a per-model limit on calls in flight, shared by every run in the process."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from reactloop import Agent, RunState, UserError
from reactloop.events import QueuedEvent
from reactloop.messages import ModelRequest
from reactloop.testing import FunctionModel


class InFlight:
    """A model function that counts its calls in flight (and yields so others can start)."""

    def __init__(self) -> None:
        self.now = self.most = self.calls = 0

    async def __call__(self, request: ModelRequest) -> str:
        self.now += 1
        self.calls += 1
        self.most = max(self.most, self.now)
        try:
            for _ in range(5):  # stay in flight across several turns of the event loop
                await asyncio.sleep(0)
            return "done"
        finally:
            self.now -= 1


def test_200_concurrent_runs_never_exceed_8_calls_in_flight() -> None:
    counter = InFlight()
    model = FunctionModel(counter)
    # two agents on one model: the limit is the model's, shared by both
    agents = [Agent(model, model_concurrency=8), Agent(model, model_concurrency=8)]

    async def main() -> list[Any]:
        return await asyncio.gather(*(agents[i % 2].run(f"task {i}") for i in range(200)))

    results = asyncio.run(main())
    assert all(r.state is RunState.COMPLETED for r in results)
    assert counter.calls == 200 and counter.most == 8


def test_without_a_limit_calls_are_not_held() -> None:
    counter = InFlight()
    agent = Agent(FunctionModel(counter))

    async def main() -> None:
        await asyncio.gather(*(agent.run("t") for _ in range(30)))

    asyncio.run(main())
    assert counter.most == 30 and agent.spec.controls is None


def test_queued_time_is_an_event() -> None:
    counter = InFlight()
    agent = Agent(FunctionModel(counter), model_concurrency=1)

    async def one(i: int) -> list[Any]:
        return [e async for e in agent.stream(f"t{i}")]

    async def main() -> list[list[Any]]:
        return await asyncio.gather(*(one(i) for i in range(3)))

    streams = asyncio.run(main())
    queued = [e for events in streams for e in events if isinstance(e, QueuedEvent)]
    assert counter.most == 1 and len(queued) == 2  # the first went straight through
    assert all(e.model == "function" and e.waited > 0 for e in queued)


def test_the_limit_is_checked() -> None:
    with pytest.raises(UserError, match="model_concurrency"):
        Agent(FunctionModel(InFlight()), model_concurrency=0)


def test_queued_time_is_a_span_event_too() -> None:
    pytest.importorskip("opentelemetry.sdk")
    from reactloop.testing import capture_spans

    counter = InFlight()
    agent = Agent(FunctionModel(counter), model_concurrency=1, instrument=True)

    async def main() -> None:
        await asyncio.gather(agent.run("a"), agent.run("b"))

    with capture_spans() as spans:
        asyncio.run(main())
    waits = [e for run in spans.named("invoke_agent agent") for e in run.events
             if e.name == "reactloop.queued"]
    assert len(waits) == 1 and (waits[0].attributes or {})["reactloop.queued.seconds"] > 0
