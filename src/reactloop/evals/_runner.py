"""Running cases: each case (all its turns) through the agent's public event stream, repeated
and concurrent as asked, scored, and judged where a case has a rubric."""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from reactloop.evals._cases import Case, EvalConfigError, Suite
from reactloop.evals._cassette import Cassette, cassette_model, current_slot
from reactloop.evals._judge import Judge
from reactloop.evals._report import CaseReport, CaseRun, Report
from reactloop.evals._score import Criterion, score
from reactloop.evals._transcript import TranscriptBuilder
from reactloop.models._base import Model

__all__ = ["Progress", "evaluate", "evaluate_sync", "run_case", "run_case_sync"]


@dataclass(frozen=True, slots=True)
class Progress:
    """One finished run, for progress displays."""

    done: int
    total: int
    run: CaseRun


async def run_case(agent: Any, case: Case, *, judge: Judge | None = None,
                   repeat: int = 0) -> CaseRun:
    """Run ``case`` once on ``agent`` (a fresh conversation) and score it.

    Never raises for a failing agent: a run that crashes is a failed ``run`` criterion.
    """
    builder = TranscriptBuilder(case.input)
    t = builder.transcript
    started = time.perf_counter()
    try:
        conversation = agent.conversation()
        for i, turn in enumerate(case.input):
            if i:
                builder.next_turn()
            sent = [turn, *case.attachments] if i == 0 and case.attachments else turn
            async for event in conversation.stream(sent):
                builder.add(event)
    except Exception as exc:  # e.g. a tool source that cannot start: a result, not a crash
        t.state, t.error = "error", f"{type(exc).__name__}: {exc}"
    t.seconds = time.perf_counter() - started
    t.model = t.model or getattr(getattr(agent, "model", None), "name", "")
    criteria = score(case, t)
    if case.rubric:
        criteria.append(await judge.grade(case, t) if judge is not None else Criterion(
            "rubric", False, "no judge model: set judge.model in the cases file or pass "
            "judge=… (--judge-model)", 0.0))
    return CaseRun(case.name, repeat, criteria, t)


def run_case_sync(agent: Any, case: Case, *, judge: Judge | None = None) -> CaseRun:
    """Blocking :func:`run_case` (for plain pytest tests)."""
    return asyncio.run(run_case(agent, case, judge=judge))


def _with_model(agent: Any, model: Model) -> Any:
    # a shallow copy that talks to another model; the caller's agent is left as it was.
    # Runs read the agent's frozen spec, so the model is swapped there too.
    clone = copy.copy(agent)
    clone.model = model
    spec = getattr(agent, "spec", None)
    if spec is not None:
        clone.spec = dataclasses.replace(spec, model=model)
    return clone


def _judge_for(cases: Sequence[Case], judge: Judge | Model | str | None, suite_model: str | None,
               replay: Cassette | None, record: Cassette | None) -> Judge | None:
    if not any(c.rubric for c in cases):
        return None
    inner = judge.model if isinstance(judge, Judge) else judge or suite_model
    model: Model | None = None
    if inner is not None:
        from reactloop.models._resolve import resolve_model

        model = resolve_model(inner)
    elif replay is None:
        names = ", ".join(c.name for c in cases if c.rubric)
        raise EvalConfigError(f"cases with a rubric ({names}) need a judge model: set "
                              "judge.model in the cases file or pass --judge-model")
    if replay is None and record is None:
        assert model is not None
        return Judge(model)
    return Judge(cassette_model(model, replay=replay, record=record))


async def evaluate(
    agent: Any,
    cases: Suite | Sequence[Case],
    *,
    repeat: int = 1,
    concurrency: int = 1,
    judge: Judge | Model | str | None = None,
    record: Cassette | None = None,
    replay: Cassette | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    name: str | None = None,
) -> Report:
    """Run every case ``repeat`` times on ``agent`` and report.

    Args:
        agent: the :class:`~reactloop.Agent` under test (left unchanged).
        cases: a :class:`Suite` (from :func:`load_suite`) or a list of :class:`Case`.
        repeat: runs per case; the report gives the pass rate's spread over them.
        concurrency: runs at once.
        judge: the model (or :class:`Judge`) for rubrics; default: the suite's ``judge.model``.
        record: a :class:`Cassette` that receives every model call.
        replay: a :class:`Cassette` to answer from instead of calling the model.
        on_progress: called after each run.
        name: the report's name (default: the suite's).
    """
    if repeat < 1 or concurrency < 1:
        raise EvalConfigError("repeat and concurrency must be at least 1")
    suite = cases if isinstance(cases, Suite) else Suite(tuple(cases))
    if replay is not None:
        replay.rewind()
    the_judge = _judge_for(suite.cases, judge, suite.judge_model, replay, record)
    if replay is not None or record is not None:
        inner = None if replay is not None else agent.model
        agent = _with_model(agent, cassette_model(inner, replay=replay, record=record))
    jobs = [(case, k) for k in range(repeat) for case in suite.cases]
    limit = asyncio.Semaphore(concurrency)
    done = 0
    started = time.perf_counter()

    async def one(case: Case, k: int) -> CaseRun:
        nonlocal done
        async with limit:
            current_slot.set(f"{case.name}#{k}")  # this task's runs record under this slot
            run = await run_case(agent, case, judge=the_judge, repeat=k)
        done += 1
        if on_progress is not None:
            on_progress(Progress(done, len(jobs), run))
        return run

    runs = await asyncio.gather(*(one(c, k) for c, k in jobs))
    by_case = {c.name: CaseReport(c.name) for c in suite.cases}
    for run in runs:
        by_case[run.case].runs.append(run)
    model_name = getattr(agent.model, "name", "") or next(
        (r.transcript.model for r in runs if r.transcript.model), "")
    return Report(name or suite.name, model_name, repeat, list(by_case.values()),
                  time.perf_counter() - started)


def evaluate_sync(agent: Any, cases: Suite | Sequence[Case], **kwargs: Any) -> Report:
    """Blocking :func:`evaluate`."""
    return asyncio.run(evaluate(agent, cases, **kwargs))
