"""What a run leaves to the garbage collector while it waits for its model (issue 28): with
thousands of runs waiting, everything a run allocated in an iteration and still holds at
the next model call ends up in the collector's oldest generation, whose full passes scan
every live run. These pin the loop's share of it."""

from __future__ import annotations

import asyncio
import gc
from typing import Any

from reactloop import Agent, ModelResponse, ToolCall, tool
from reactloop.messages import ModelRequest
from reactloop.run_context import RunContext
from reactloop.testing import FunctionModel


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: first addend
        b: second addend
    """
    return a + b


class _New:
    """Objects made since it was: what earlier tests left alive does not count (kept
    referenced, so their ids are not reused)."""

    def __init__(self) -> None:
        gc.collect()
        self.before = gc.get_objects()
        self.ids = {id(o) for o in self.before}

    def alive(self, kind: type) -> list[Any]:
        gc.collect()
        return [o for o in gc.get_objects() if type(o) is kind and id(o) not in self.ids]

    def loop_coroutines(self) -> list[str]:
        return [o.cr_code.co_qualname for o in self.alive(type(_coroutine()))
                if o.cr_code.co_filename.endswith("_loop.py")]


async def _nothing() -> None:
    pass


def _coroutine() -> Any:
    coro = _nothing()
    coro.close()
    return coro


def _generator() -> Any:
    yield None


def test_function_model_can_keep_no_requests() -> None:
    def answer(request: ModelRequest) -> str:
        return "done"

    kept, forgetful = FunctionModel(answer), FunctionModel(answer, keep_requests=False)
    assert Agent(model=kept).run_sync("hi").output == "done"
    assert Agent(model=forgetful).run_sync("hi").output == "done"
    assert len(kept.requests) == 1 and kept.keep_requests
    assert forgetful.requests == [] and not forgetful.keep_requests


def test_a_waiting_run_holds_no_earlier_response_and_no_coroutine_of_the_loop() -> None:
    seen: list[tuple[int, list[str]]] = []

    async def answer(request: ModelRequest) -> ModelResponse:
        n = sum(1 for m in request.messages if m.role == "tool")
        seen.append((len(new.alive(ModelResponse)), new.loop_coroutines()))
        if n < 3:
            return ModelResponse(tool_calls=[ToolCall("add", {"a": n, "b": 1})])
        return ModelResponse(text="done")

    model = FunctionModel(answer, keep_requests=False)
    new = _New()
    assert Agent(model=model, tools=[add]).run_sync("Add.").output == "done"
    assert [n for n, _ in seen] == [0, 0, 0, 0]  # the previous response is not held
    assert all(frames == [] for _, frames in seen), seen  # the runtime's call is awaited as is


def test_a_streamed_run_holds_no_earlier_response_either() -> None:
    seen: list[int] = []

    async def answer(request: ModelRequest) -> ModelResponse:
        n = sum(1 for m in request.messages if m.role == "tool")
        seen.append(len(new.alive(ModelResponse)))
        if n < 2:
            return ModelResponse(tool_calls=[ToolCall("add", {"a": n, "b": 1})])
        return ModelResponse(text="done")

    async def main() -> list[str]:
        agent = Agent(model=FunctionModel(answer, keep_requests=False), tools=[add])
        return [ev.type async for ev in agent.stream("Add.")]

    new = _New()
    types = asyncio.run(main())
    assert types[0] == "run_start" and types[-1] == "run_end" and "tool_result" in types
    assert seen == [0, 0, 0]


def test_flushing_no_events_keeps_the_pending_list() -> None:
    ctx = RunContext("r1", "hi", [])
    pending = ctx.pending
    assert ctx.flush() == [] and ctx.pending is pending
    ctx.emit_custom("x")
    out = ctx.flush()
    assert out is pending and len(out) == 1 and ctx.pending == [] and ctx.pending is not out


def test_the_retry_listener_is_set_for_the_model_call_without_a_token_held() -> None:
    from contextvars import Token

    from reactloop.models._retry import retry_listener

    seen: list[tuple[bool, int]] = []

    async def answer(request: ModelRequest) -> str:
        tokens = [o for o in new.alive(Token) if o.var is retry_listener]
        seen.append((retry_listener.get() is not None, len(tokens)))
        return "done"

    async def main() -> None:
        result = await Agent(model=FunctionModel(answer)).run("hi")
        assert result.output == "done"
        assert retry_listener.get() is None  # set back once the call returned

    new = _New()
    asyncio.run(main())
    assert seen == [(True, 0)]


class _Listener:
    def on_start(self, event: Any) -> None:
        pass


def test_a_waiting_run_holds_neither_its_run_start_event_nor_an_unused_attachment_fitter(
        ) -> None:
    """``Agent.run`` drops each event once read (the ``run_start`` one was held the whole
    run), with callbacks too; the attachment fitter is made only for attachments; the loop
    counts its iterations without a generator; ``Agent.run`` reads the loop in its own frame."""
    from reactloop._attach import Fitter
    from reactloop.events import RunStartEvent

    seen: list[tuple[int, int]] = []
    frames: list[list[str]] = []

    async def answer(request: ModelRequest) -> ModelResponse:
        n = sum(1 for m in request.messages if m.role == "tool")
        generators = [g for g in new.alive(type(_generator())) if g.gi_code.co_filename
                      .endswith("_loop.py")]  # the iterations are a while loop's
        seen.append((len(new.alive(RunStartEvent)), len(new.alive(Fitter)) + len(generators)))
        frames.append([c.cr_code.co_qualname for c in new.alive(type(_coroutine()))
                       if c.cr_code.co_filename.endswith("agent.py")])
        if n < 2:
            return ModelResponse(tool_calls=[ToolCall("add", {"a": n, "b": 1})])
        return ModelResponse(text="done")

    for callbacks in ([], [_Listener()]):
        seen.clear()
        frames.clear()
        new = _New()
        agent = Agent(model=FunctionModel(answer, keep_requests=False), tools=[add],
                      callbacks=callbacks)
        assert agent.run_sync("Add.").output == "done"
        assert seen == [(0, 0)] * 3, (callbacks, seen)
        assert all(f == ["Agent.run"] for f in frames), frames  # no _drive coroutine under it


def test_the_loop_s_empty_context_manager_enters_and_exits_as_nullcontext_does() -> None:
    """``_iteration.NOTHING`` (no bound ``__aexit__`` held for the whole run): it returns
    None, lets every exception through, and is entered again and again."""
    from reactloop._iteration import NOTHING

    async def main() -> list[object]:
        got: list[object] = []
        for _ in range(2):
            async with NOTHING as value:
                got.append(value)
        try:
            async with NOTHING:
                raise KeyError("x")
        except KeyError as exc:
            got.append(exc.args)
        return got

    assert asyncio.run(main()) == [None, None, ("x",)]
    assert not hasattr(NOTHING, "__dict__")  # shared by every run, nothing to keep


def _flaky() -> Any:
    """A model whose call fails once with a retryable error, then answers (no wait)."""
    from reactloop.models import Model

    class Flaky(Model):
        name = "flaky"

        def __init__(self) -> None:
            self.failures = 1

        async def request(self, request: ModelRequest) -> ModelResponse:
            return await _flaky_request(self, request)

    return Flaky()


async def _flaky_request(self: Any, request: ModelRequest) -> ModelResponse:

    from reactloop import ModelHTTPError
    from reactloop.models._retry import RetryPolicy, with_retries

    async def once() -> ModelResponse:
        if self.failures:
            self.failures -= 1
            raise ModelHTTPError(503, "busy")
        return ModelResponse(text="done")

    async def no_wait(seconds: float) -> None:
        pass

    return await with_retries(once, RetryPolicy(jitter=0), sleep=no_wait)


def _quiet_events(agent: Agent, prompt: str) -> Any:
    """What ``Agent.run`` reads: the loop's events, driven quietly (its model calls awaited
    by the loop itself)."""
    ctx = agent._context(prompt, [], None, None)
    return agent._run_events(ctx, stream=False, quiet=True)


def test_a_quiet_run_listens_for_retries_once_and_sets_the_listener_back() -> None:
    """``Agent.run`` awaits its model itself (no ``LocalRuntime.call_model`` coroutine):
    the retry listener is set once per run, its model calls' retries are still the run's
    ``retry`` events, and the caller's listener is there again once the run ends."""
    from reactloop.models._retry import retry_listener

    theirs: list[int] = []
    model = _flaky()

    async def main() -> list[str]:
        retry_listener.set(lambda attempt, wait, error: theirs.append(attempt))
        before = retry_listener.get()
        types = [ev.type async for ev in _quiet_events(Agent(model=model), "hi")]
        assert retry_listener.get() is before  # set back
        return types

    types = asyncio.run(main())
    assert types.count("retry") == 1 and types[-1] == "run_end", types
    assert theirs == []  # the run's own retry is not the caller's


def test_a_waiting_run_makes_no_context_mapping_per_model_call() -> None:
    """The retry listener is set once per run, and so is the run's ``CallerRun`` (active
    during its tool batches only): the task's context mapping (a ``hamt``) alive in the
    run's 4th model call is the one of its 2nd (before: a new one per call and per batch,
    alive while the model was awaited, so promoted to the oldest generation with thousands
    of runs waiting)."""
    new_mappings: list[list[Any]] = []

    def answer(request: ModelRequest) -> ModelResponse:
        n = sum(1 for m in request.messages if m.role == "tool")
        gc.collect()  # kept referenced: no id is reused
        new_mappings.append([o for o in gc.get_objects()
                             if type(o).__name__ == "hamt" and id(o) not in new.ids])
        if n < 3:  # a batch runs between every two model calls
            return ModelResponse(tool_calls=[ToolCall("add", {"a": n, "b": 1})])
        return ModelResponse(text="done")

    new = _New()
    agent = Agent(model=FunctionModel(answer, keep_requests=False), tools=[add])
    assert agent.run_sync("Add.").output == "done"
    assert len(new_mappings) == 4
    second, last = new_mappings[1], new_mappings[3]
    assert last and all(any(m is s for s in second) for m in last), "a mapping per call"


def test_a_run_s_caller_is_active_during_its_batches_only() -> None:
    """What tools and sources read of the run (``active_caller``, ``_nesting.current``):
    the run during a batch, nothing between batches (a sub-run started by a callback is
    not nested in the run), and what was there before once the run ends."""
    from reactloop import _nesting
    from reactloop.tools._source import active_caller, caller_run

    in_tools: list[Any] = []
    between: list[Any] = []

    @tool
    def where(n: int) -> int:
        """Where the tool runs.

        Args:
            n: a number
        """
        in_tools.append((active_caller(), _nesting.current.get()))
        return n

    def answer(request: ModelRequest) -> ModelResponse:
        between.append((active_caller(), _nesting.current.get()))
        n = sum(1 for m in request.messages if m.role == "tool")
        if n < 2:
            return ModelResponse(tool_calls=[ToolCall("where", {"n": n})])
        return ModelResponse(text="done")

    async def main() -> None:
        assert (await Agent(model=FunctionModel(answer), tools=[where]).run("go")).output == "done"
        assert caller_run.get() is None and active_caller() is None

    asyncio.run(main())
    (c1, f1), (c2, f2) = in_tools
    assert c1 is not None and c1 is c2 and f1 is f2 is c1.frame and c1.run_id
    assert between == [(None, None)] * 3


def test_a_task_a_tool_started_keeps_the_run_between_its_batches() -> None:
    """A task one of the run's tools started sees the run whether or not the run is in a
    batch when it looks (as when a caller was set per batch): read here while the run waits
    for its model, where the run itself sees nothing."""
    from reactloop import _nesting
    from reactloop.tools._source import active_caller

    go = asyncio.Event()
    started: list[asyncio.Task[Any]] = []

    async def look() -> Any:
        await go.wait()
        return active_caller(), _nesting.current.get()

    @tool
    async def spawn(n: int) -> int:
        """Start a task.

        Args:
            n: a number
        """
        started.append(asyncio.create_task(look()))
        return n

    seen: list[Any] = []

    async def answer(request: ModelRequest) -> ModelResponse:
        if not started:
            return ModelResponse(tool_calls=[ToolCall("spawn", {"n": 1})])
        seen.append(active_caller())  # the run itself, in its model call: no caller
        go.set()
        seen.append(await started[0])
        return ModelResponse(text="done")

    async def main() -> None:
        assert (await Agent(model=FunctionModel(answer), tools=[spawn]).run("go")).output == "done"

    asyncio.run(main())
    mine, (caller, frame) = seen
    assert mine is None and caller is not None and frame is caller.frame


def test_a_tool_that_calls_a_model_itself_reports_its_retries_where_it_did_before() -> None:
    """Between its model calls the run's listener passes retries on to the listener that
    was set before the run, as when the listener was set around each model call only."""
    from reactloop.models._retry import retry_listener

    theirs: list[int] = []
    flaky = _flaky()

    @tool
    async def ask_other_model(question: str) -> str:
        """Ask another model.

        Args:
            question: the question
        """
        return (await flaky.request(ModelRequest("", ()))).text or ""

    def answer(request: ModelRequest) -> ModelResponse:
        if len(request.messages) == 1:
            return ModelResponse(tool_calls=[ToolCall("ask_other_model", {"question": "q"})])
        return ModelResponse(text="done")

    async def main() -> list[str]:
        retry_listener.set(lambda attempt, wait, error: theirs.append(attempt))
        agent = Agent(model=FunctionModel(answer), tools=[ask_other_model])
        return [ev.type async for ev in _quiet_events(agent, "hi")]

    types = asyncio.run(main())
    assert theirs == [1] and "retry" not in types, (theirs, types)
    assert types[-1] == "run_end"



def test_runs_without_sub_agents_share_one_empty_metrics_agents() -> None:
    """``Metrics.agents`` of a run without sub-agents or handoffs is one shared, read-only
    empty mapping (a new ``{}`` per run was 64 bytes of every live run): it behaves as
    ``{}`` everywhere a result goes, and refuses writes with a message naming the fix."""
    import copy
    import dataclasses
    import pickle

    from reactloop.result import Metrics

    def answer(request: ModelRequest) -> str:
        return "done"

    agent = Agent(model=FunctionModel(answer))
    one, two = agent.run_sync("hi").metrics, agent.run_sync("hi").metrics
    assert one.agents is two.agents and one.agents == {} and repr(one.agents) == "{}"
    assert "agents" not in one.to_dict() and Metrics.from_dict(one.to_dict()) == one
    assert pickle.loads(pickle.dumps(one)) == one and copy.deepcopy(one) == one
    try:
        one.agents["x"] = two  # type: ignore[index]
    except TypeError as exc:
        assert "metrics.agents = {" in str(exc)
    else:
        raise AssertionError("the shared empty mapping took a write")
    one.agents = {"x": two}  # assigning a new mapping works
    assert Metrics().agents == {} and not two.agents
    plain = dataclasses.asdict(two)["agents"]  # a copy made by type(m)(items) is a plain dict
    assert type(plain) is dict and plain == {}
    plain["x"] = {}
