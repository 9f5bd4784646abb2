"""The exceptions reactloop raises, and the one signal tools may raise.

::

    ReactloopError                 base of everything below
    ├── UserError                  developer misuse, raised at construction time
    │   └── ModelNotAvailable      a model string names an extra that is not installed
    ├── ModelError                 the model could not produce a response
    │   ├── ModelHTTPError         a provider answered with an HTTP error (status_code, retryable)
    │   └── ContextTooSmall        the latest message alone does not fit the context window
    ├── UsageLimitExceeded         a usage limit was reached (limit, used); run() never raises
    │                              it: the run ends USAGE_LIMIT (it explains result.output)
    ├── SessionBusy                another writer (any process) is running a message on a session
    ├── SessionStoreError          a session store cannot be read or written (names store and fix)
    ├── OutputValidationError      the answer did not match output_type within its retries
    │                              (raw_output, attempts)
    └── ApprovalError              a decision names no waiting call, an already decided one,
                                   or other arguments (call_id)
    ToolRetry                      raised *by a tool* to send a message back to the model
    GuardrailTripped               raised *by a guardrail* to refuse a text (reason); the run
                                   ends BLOCKED with the reason as its output

Exceptions carry data only; raising one never has side effects.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = [
    "ApprovalError",
    "ContextTooSmall",
    "GuardrailTripped",
    "ModelError",
    "ModelHTTPError",
    "ModelNotAvailable",
    "OutputAttempt",
    "OutputValidationError",
    "ReactloopError",
    "SessionBusy",
    "SessionStoreError",
    "ToolRetry",
    "UsageLimitExceeded",
    "UserError",
]


class ReactloopError(Exception):
    """Base class of every error reactloop raises."""


class UserError(ReactloopError):
    """The agent, a tool or a model was configured wrongly. The message names the fix."""


class ModelNotAvailable(UserError):
    """A model needs an optional extra (or file) that is not installed."""


class ModelError(ReactloopError):
    """The model failed to produce a response."""


class ModelHTTPError(ModelError):
    """A provider answered with an HTTP error.

    Args:
        status_code: the HTTP status (0 for connection errors and timeouts).
        message: the provider's own message.
        retryable: whether retrying the same request can succeed (429, 5xx, connection errors).
        retry_after: seconds the provider asked us to wait (``Retry-After``), if it said.
    """

    def __init__(self, status_code: int, message: str, *, retryable: bool | None = None,
                 retry_after: float | None = None) -> None:
        self.status_code = status_code
        self.message = message
        self.retry_after = retry_after
        self.retryable = (
            retryable
            if retryable is not None
            else (status_code in (0, 408, 409, 429) or status_code >= 500)
        )
        super().__init__(f"HTTP {status_code}: {message}" if status_code else message)


class ContextTooSmall(ModelError):
    """Nothing could bring the request under the context window."""


class UsageLimitExceeded(ReactloopError):
    """A usage limit (``UsageLimits``: requests, tool calls, tokens, cost) was reached.

    ``run()`` never raises it: the run ends ``RunState.USAGE_LIMIT`` with a usable answer
    (what was done), the way ``max_iterations`` ends one, and ``result.error`` stays
    ``None``. Raised inside a run (by reactloop's checks, or by a custom runtime or model
    wrapper), it ends the run that way.

    Args:
        message: which limit, and how much was used.
        limit: the name of the limit (``"max_total_tokens"``…).
    """

    def __init__(self, message: str, limit: str = "") -> None:
        self.limit = limit
        super().__init__(message)


class SessionBusy(ReactloopError):
    """Another writer holds the session: a ``send`` is running on it in this or another process.

    Sessions have one writer at a time so that two runs never interleave their messages.
    Wait for the other run to finish, or let ``send`` wait (``session.wait = seconds``).
    """


class SessionStoreError(ReactloopError):
    """A session store could not be read or written: a damaged or foreign file, a full disk,
    a lost database connection. The message names the store and what to do; what was already
    stored is kept (reactloop never rewrites a store it cannot read)."""


class OutputAttempt(NamedTuple):
    """One answer that did not validate: what the model wrote and what was wrong with it."""

    raw: str
    errors: str


class OutputValidationError(ReactloopError):
    """The model's answer did not match the agent's ``output_type``, also after the
    validation errors went back to it ``output_retries`` times. The run ends ``ERROR`` with
    this on ``result.error``.

    Args:
        message: what went wrong, for people.
        raw_output: the last answer as the model wrote it.
        attempts: every answer that failed, oldest first, with its errors.
    """

    def __init__(self, message: str, raw_output: str,
                 attempts: tuple[OutputAttempt, ...] = ()) -> None:
        self.raw_output = raw_output
        self.attempts = attempts
        super().__init__(message)


class ApprovalError(ReactloopError):
    """A decision cannot be applied: no call with its id waits for approval, the call was
    already decided, or the decision was made for other arguments (its hash differs).
    Nothing ran.

    Args:
        message: what is wrong and how to fix it.
        call_id: the call the decision names.
    """

    def __init__(self, message: str, call_id: str = "") -> None:
        self.call_id = call_id
        super().__init__(message)


class ToolRetry(Exception):
    """Raise inside a tool to send ``message`` back to the model as the tool's error.

    Unlike other exceptions, the model sees only the message (no exception type), so it
    reads as an instruction: ``raise ToolRetry("city must be an IATA code like 'LHR'")``.
    """

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)


class GuardrailTripped(Exception):
    """Raise inside a guardrail (``Agent(input_guardrails=..., output_guardrails=...)``) to
    refuse a text: the run ends ``RunState.BLOCKED`` with ``reason`` as its output, and the
    refused text is neither returned nor stored.

    Args:
        reason: what the user is told (e.g. "I can't help with that request.").
        guardrail: the guardrail's name (filled in by reactloop when left empty).
    """

    def __init__(self, reason: str, guardrail: str = "") -> None:
        self.reason = reason
        self.guardrail = guardrail
        super().__init__(reason)
