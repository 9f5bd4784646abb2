"""Retry policy and the retry events a run reports (adapters use ``with_retries``)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from reactloop import Agent, ModelHTTPError, ModelRequest, ModelResponse, RunState
from reactloop.models import Model
from reactloop.models._retry import RetryPolicy, parse_retry_after, with_retries


class Flaky(Model):
    """Fails with the given errors first, then answers; waits are recorded, not slept."""

    name = "flaky"

    def __init__(self, errors: list[ModelHTTPError], policy: RetryPolicy) -> None:
        self.errors, self.policy, self.waits = list(errors), policy, []  # type: list[float]

    async def _sleep(self, wait: float) -> None:
        self.waits.append(wait)

    async def request(self, request: ModelRequest) -> ModelResponse:
        async def once() -> ModelResponse:
            if self.errors:
                raise self.errors.pop(0)
            return ModelResponse(text="fine")

        return await with_retries(once, self.policy, sleep=self._sleep)


def test_retries_honour_retry_after_and_become_events() -> None:
    model = Flaky([ModelHTTPError(429, "slow down", retry_after=7),
                   ModelHTTPError(500, "oops")], RetryPolicy(base_delay=1, jitter=0))

    async def collect() -> list[Any]:
        return [e async for e in Agent(model=model).stream("hi")]

    events = asyncio.run(collect())
    retries = [e for e in events if e.type == "retry"]
    assert [(e.attempt, e.wait) for e in retries] == [(1, 7), (2, 2.0)]
    assert "slow down" in retries[0].error
    assert model.waits == [7, 2.0]
    assert events[-1].result.output == "fine"


def test_non_retryable_errors_fail_fast() -> None:
    model = Flaky([ModelHTTPError(401, "bad key")], RetryPolicy())
    result = Agent(model=model).run_sync("hi")
    assert result.state is RunState.ERROR and model.waits == []
    assert isinstance(result.error, ModelHTTPError) and not result.error.retryable


def test_retries_give_up_after_the_limit() -> None:
    model = Flaky([ModelHTTPError(503, "down")] * 3, RetryPolicy(max_retries=2, jitter=0))
    result = Agent(model=model).run_sync("hi")
    assert result.state is RunState.ERROR and len(model.waits) == 2


@pytest.mark.parametrize(("status", "retryable"), [(429, True), (500, True), (503, True),
                                                   (0, True), (400, False), (401, False),
                                                   (404, False)])
def test_retryable_statuses(status: int, retryable: bool) -> None:
    assert ModelHTTPError(status, "x").retryable is retryable


def test_backoff_grows_and_is_capped() -> None:
    policy = RetryPolicy(base_delay=1, max_delay=5, jitter=0)
    assert [policy.delay(n) for n in (1, 2, 3, 4)] == [1, 2, 4, 5]
    assert policy.delay(1, retry_after=100) == 5
    assert parse_retry_after("3") == 3.0 and parse_retry_after(None) is None
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # in the past


def test_errors_of_custom_models_are_redacted_in_events_and_results() -> None:
    from reactloop._redact import add_secret

    key = "custom-model-key-8f3a9c2e1d"
    add_secret(key)  # what an adapter does with the key it is given
    model = Flaky([ModelHTTPError(503, f"proxy echoed Authorization: Bearer {key}"),
                   ModelHTTPError(401, f"bad key {key}")], RetryPolicy(jitter=0))

    async def collect() -> list[Any]:
        return [e async for e in Agent(model=model).stream("hi")]

    events = asyncio.run(collect())
    (retry,) = [e for e in events if e.type == "retry"]
    assert key not in retry.error and "[REDACTED]" in retry.error
    result = events[-1].result
    assert result.state is RunState.ERROR and result.error.status_code == 401
    assert key not in str(result.error) and key not in result.output
    assert key not in result.to_json()


def test_retry_policy_is_exported_from_the_package() -> None:
    import reactloop
    from reactloop.models._retry import RetryPolicy as Internal

    assert reactloop.RetryPolicy is Internal and "RetryPolicy" in reactloop.__all__
