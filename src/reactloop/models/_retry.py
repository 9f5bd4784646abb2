"""Retries for provider calls: exponential backoff with jitter, honouring ``Retry-After``.

Adapters translate SDK errors into :class:`~reactloop.errors.ModelHTTPError` (with
``retryable`` and ``retry_after``) and wrap each call in :func:`with_retries` (through
:func:`~reactloop.models._provider.call_with_retries`). Every retry is
reported to the listener the loop installs for the current run (a ``retry`` event), and to an
optional per-model callback.
"""

from __future__ import annotations

import asyncio
import contextvars
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from reactloop._redact import redact_exception
from reactloop.errors import ModelHTTPError

__all__ = ["RetryListener", "RetryPolicy", "parse_retry_after", "retries_elsewhere",
           "retry_listener", "with_retries"]

T = TypeVar("T")
RetryListener = Callable[[int, float, BaseException], None]
"""``listener(attempt, wait_seconds, error)``, called before each wait."""

retry_listener: contextvars.ContextVar[RetryListener | None] = contextvars.ContextVar(
    "reactloop_retry_listener", default=None
)
"""Set by the loop around each model call so retries become ``retry`` events of that run."""

retries_elsewhere: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "reactloop_retries_elsewhere", default=False
)
"""True while something else retries model calls (a Temporal activity's retry policy): then
:func:`with_retries` tries once, so retries do not multiply."""


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how long to retry retryable errors (429, 5xx, connection, timeout)."""

    max_retries: int = 3
    """Retries after the first attempt (0 disables retrying)."""
    base_delay: float = 0.5
    """Wait before the first retry; doubles on each further one."""
    max_delay: float = 30.0
    """Upper bound for one wait, also for ``Retry-After``."""
    jitter: float = 0.25
    """Random extra wait, as a fraction of the computed wait (spreads out retry storms)."""

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """The wait before retry number ``attempt`` (1-based)."""
        if retry_after is not None and retry_after >= 0:
            return min(retry_after, self.max_delay)
        wait = min(self.base_delay * 2.0 ** (attempt - 1), self.max_delay)
        return wait + random.uniform(0, wait * self.jitter)


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        import time
        from email.utils import parsedate_to_datetime  # rare: not at import time

        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


async def with_retries(
    call: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    on_retry: RetryListener | None = None,
    *,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
) -> T:
    """Run ``call()``; on a retryable :class:`ModelHTTPError` wait and try again.

    The error is redacted (:func:`~reactloop._redact.redact_exception`) before listeners see
    it or it is raised: a custom adapter's error may quote a key the server echoed.
    """
    attempt = 0
    while True:
        try:
            return await call()
        except ModelHTTPError as exc:
            redact_exception(exc)
            attempt += 1
            if not exc.retryable or attempt > policy.max_retries or retries_elsewhere.get():
                raise
            wait = policy.delay(attempt, exc.retry_after)
            for listener in (retry_listener.get(), on_retry):
                if listener is not None:
                    listener(attempt, wait, exc)
            await sleep(wait)
