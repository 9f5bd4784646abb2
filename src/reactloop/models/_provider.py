"""What every provider adapter shares, in one place: the optional-SDK check, the API-key
lookup, SDK-error translation, the retried, translated call, the constructor
(:class:`ProviderModel`), the cap on one response's size (:class:`ResponseBudget`) and the
checks of what a server sent (a reply that is not JSON, a stream cut off or empty).

Adapters keep only their wire translation. Every key they use is registered with
:mod:`reactloop._redact`, and every error they raise is built here with its message redacted,
so a server that echoes the ``Authorization`` header cannot leak the key through an error.
"""

from __future__ import annotations

import contextlib
import importlib.util
import inspect
import os
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

from reactloop._redact import add_secret, get_logger, redact
from reactloop.errors import ModelError, ModelHTTPError, ModelNotAvailable, UserError
from reactloop.messages import ModelRequest
from reactloop.models._base import Model
from reactloop.models._retry import RetryListener, RetryPolicy, parse_retry_after, with_retries

__all__ = [
    "CHARS_PER_TOKEN",
    "DEFAULT_MAX_RESPONSE_CHARS",
    "MissingAPIKey",
    "ProviderModel",
    "ResponseBudget",
    "TextBuffer",
    "Translate",
    "call_with_retries",
    "cap_problem",
    "cut_off",
    "empty_stream",
    "end_of_stream",
    "find_api_key",
    "http_error",
    "model_error",
    "not_json",
    "parsed_reply",
    "reply_check",
    "require_extra",
    "sdk_error",
    "translating",
]

T = TypeVar("T")
log = get_logger("reactloop.models")
Translate = Callable[[Exception], Exception]
"""An adapter's SDK-error translation: returns the exception to raise instead, or the same
exception when it is not the SDK's."""


def require_extra(module: str, extra: str, what: str) -> None:
    """Raise :class:`ModelNotAvailable` naming the extra when ``module`` is not installed."""
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package marked missing, or a broken install
        found = False
    if not found:
        raise ModelNotAvailable(
            f"{what} needs the '{module}' package, which is not installed; "
            f"install it with: pip install 'reactloop[{extra}]'"
        )


# -- keys --------------------------------------------------------------------------------------
class MissingAPIKey(UserError):
    """No key was given and none of the provider's environment variables is set."""

    def __init__(self, message: str, env_vars: Sequence[str]) -> None:
        super().__init__(message)
        self.env_vars = tuple(env_vars)
        """The variables that were looked up, first the preferred one."""


def find_api_key(what: str, given: str | None, env_vars: Sequence[str], *,
            required: bool = True, fix: str = "") -> str | None:
    """The key to use: ``given``, else the first set variable of ``env_vars``.

    The key is registered as a secret, so it is redacted wherever reactloop prints it. When
    there is none and ``required``, :class:`MissingAPIKey` names the variables (and ``fix``,
    another way out, e.g. "for a local server pass base_url=...").
    """
    from reactloop._keys import check_key

    source = "api_key=..." if given else next((n for n in env_vars if os.environ.get(n)), "")
    key = given or (os.environ.get(source) if source else None)
    if key:
        add_secret(key)
        check_key(key, f"the API key of {what} ({source})")
        return key
    if not required:
        return None
    names = env_vars[0] + "".join(f" (or {n})" for n in env_vars[1:])
    raise MissingAPIKey(
        f"{what} needs an API key: set the {names} environment variable or pass "
        f"api_key=...{'; ' + fix if fix else ''}",
        env_vars,
    )


# -- errors ------------------------------------------------------------------------------------
def http_error(status: int, message: str, headers: Mapping[str, str] | None = None, *,
               retryable: bool | None = None) -> ModelHTTPError:
    """A :class:`ModelHTTPError` with a redacted message and the wait the server asked for
    (``Retry-After``, or Anthropic's ``retry-after-ms``)."""
    retry_after = None
    if headers is not None:
        retry_after = parse_retry_after(headers.get("retry-after"))
        if retry_after is None and headers.get("retry-after-ms"):
            retry_after = (parse_retry_after(headers.get("retry-after-ms")) or 0.0) / 1000
    return ModelHTTPError(status, redact(message), retryable=retryable, retry_after=retry_after)


def model_error(message: str) -> ModelError:
    """A :class:`ModelError` with a redacted message."""
    return ModelError(redact(message))


def _status_message(exc: Any) -> str:
    # the provider's own message when the body has one; else the body, else the SDK's text
    body = getattr(exc, "body", None)
    if isinstance(body, Mapping):
        inner = body.get("error")
        if isinstance(inner, Mapping) and inner.get("message"):
            return str(inner["message"])
        if body.get("message"):
            return str(body["message"])
    if isinstance(body, str) and body:
        return body
    return str(getattr(exc, "message", None) or exc)


def sdk_error(exc: Exception, sdk: Any, where: str) -> Exception:
    """Translate an error of the ``openai`` or ``anthropic`` SDK (both are generated by
    Stainless and share their error classes' shape); other exceptions are returned as they are.

    Args:
        exc: the exception the SDK raised.
        sdk: the SDK module (``openai`` or ``anthropic``).
        where: what was called, for messages ("the Anthropic API").
    """
    if isinstance(exc, sdk.APIStatusError):
        return http_error(exc.status_code, _status_message(exc), exc.response.headers)
    if isinstance(exc, sdk.APIConnectionError):  # includes timeouts
        return http_error(0, f"could not reach {where} ({type(exc).__name__}): {exc.message}")
    if isinstance(exc, sdk.APIError):  # e.g. a response that does not validate
        return model_error(f"{where} failed: {exc.message}")
    return exc


@contextlib.contextmanager
def translating(translate: Translate) -> Iterator[None]:
    """Re-raise exceptions as ``translate`` maps them (the adapter boundary).

    The SDK's exception is not chained (``from None``): it may hold the raw error body, and a
    printed traceback would show it. It goes to the debug log instead, redacted there.
    """
    try:
        yield
    except Exception as exc:
        translated = translate(exc)
        if translated is exc:
            raise
        log.debug("provider call failed: %s: %s", type(exc).__name__, exc)
        raise translated from None


async def call_with_retries(call: Callable[[], Awaitable[T]], translate: Translate,
                            policy: RetryPolicy, on_retry: RetryListener | None = None) -> T:
    """``await call()`` with SDK errors translated and retryable ones retried (each retry is
    reported as a ``retry`` event of the current run and to ``on_retry``)."""
    async def once() -> T:
        with translating(translate):
            return await call()

    return await with_retries(once, policy, on_retry)


# -- the shared constructor --------------------------------------------------------------------
DEFAULT_MAX_RESPONSE_CHARS = 1 << 20
"""The cap on one response's text plus tool-call arguments when ``max_tokens`` is unset:
1 MiB of characters."""
CHARS_PER_TOKEN = 32
"""With ``max_tokens`` set, the cap is ``max_tokens * CHARS_PER_TOKEN`` characters (far more
than any tokenizer's longest token, so only a server ignoring ``max_tokens`` reaches it)."""


class ProviderModel(Model):
    """The base of the provider adapters: what their constructors share.

    Args:
        name: the model name sent on the wire.
        retry: how 429s, 5xx, connection errors and timeouts are retried.
        on_retry: called as ``on_retry(attempt, wait_seconds, error)`` before each retry.
        context_window: tokens the model attends to (None: unknown).
        max_response_chars: the cap on one response's text plus tool-call arguments, in
            characters (None: ``max_tokens * 32`` when the request sets ``max_tokens``, else
            1 MiB). Past it the response ends with ``finish_reason="length"``.
    """

    def __init__(self, name: str, *, retry: RetryPolicy, on_retry: RetryListener | None,
                 context_window: int | None, max_response_chars: int | None) -> None:
        if max_response_chars is not None and max_response_chars < 1:
            raise UserError(f"max_response_chars must be a positive number of characters, "
                            f"got {max_response_chars!r}")
        self.name = name
        self.retry = retry
        self.on_retry = on_retry
        self.context_window = context_window
        self.max_response_chars = max_response_chars

    key_env: tuple[str, ...] = ()
    """The environment variables holding the provider's key, the preferred one first."""

    def _api_key(self, given: str | None, *, required: bool = True, fix: str = "") -> str | None:
        """The key to use (``given``, else the first set :attr:`key_env`), registered as a
        secret; :class:`MissingAPIKey` names the variables when there is none and it is
        ``required``."""
        return find_api_key(type(self).__name__, given, self.key_env, required=required,
                            fix=fix)

    def _translate(self, exc: Exception) -> Exception:
        """The adapter's SDK-error translation (see :func:`sdk_error`)."""
        return exc

    async def _call(self, call: Callable[[], Awaitable[T]]) -> T:
        """``await call()``, translated and retried by this adapter's policy."""
        return await call_with_retries(call, self._translate, self.retry, self.on_retry)

    def budget(self, request: ModelRequest, max_tokens: int | None = None) -> ResponseBudget:
        """The size cap of the response to ``request`` (``max_tokens``: the adapter's default
        when the request sets none)."""
        if self.max_response_chars is not None:
            return ResponseBudget(self.max_response_chars)
        tokens = request.settings.max_tokens or max_tokens
        return ResponseBudget(tokens * CHARS_PER_TOKEN if tokens else DEFAULT_MAX_RESPONSE_CHARS)


# -- one response's size -----------------------------------------------------------------------
class ResponseBudget:
    """Counts the characters of one response (text and tool-call arguments) against a cap."""

    __slots__ = ("exceeded", "left", "limit")

    def __init__(self, limit: int) -> None:
        self.limit = self.left = limit
        self.exceeded = False

    def take(self, piece: str) -> str:
        """The part of ``piece`` that fits; once something did not, :attr:`exceeded`."""
        if len(piece) <= self.left:
            self.left -= len(piece)
            return piece
        self.exceeded = True
        kept, self.left = piece[:self.left], 0
        return kept

    def cut(self, text: str | None) -> str | None:
        """A whole (not streamed) text, cut at the cap."""
        return None if text is None else self.take(text)


def cap_problem(limit: int) -> str:
    """Why a tool call of a response cut at the size cap does not run."""
    return (f"the response reached its size cap ({limit} characters) and was cut off, so this "
            "call is incomplete; write less (shorter text, smaller arguments)")


class TextBuffer:
    """Streamed pieces of one text, joined as they come in large blocks: one copy of the text
    (a list of small deltas costs ~50 bytes of object per piece of 3 characters)."""

    __slots__ = ("_blocks", "_pending", "_size")
    _BLOCK = 1 << 16

    def __init__(self) -> None:
        self._blocks: list[str] = []
        self._pending: list[str] = []
        self._size = 0

    def append(self, piece: str) -> None:
        self._pending.append(piece)
        self._size += len(piece)
        if self._size >= self._BLOCK:
            self._blocks.append("".join(self._pending))
            self._pending.clear()
            self._size = 0

    def value(self) -> str:
        if self._pending:
            self._blocks.append("".join(self._pending))
            self._pending.clear()
            self._size = 0
        if len(self._blocks) > 1:
            self._blocks[:] = ["".join(self._blocks)]
        return self._blocks[0] if self._blocks else ""


# -- what a server sent ------------------------------------------------------------------------
def not_json(url: object, content_type: str | None, first: bytes, where: str) -> ModelError:
    """A 200 reply that is not what the API sends (a captive portal, a proxy's page)."""
    shown = first[:200].decode("utf-8", "replace")
    return model_error(
        f"{where} at {url} answered with {content_type or 'no content type'!s}, not JSON; "
        f"it starts: {shown!r}. Is base_url right, or is a proxy or login page in the way?")


async def parsed_reply(raw: Any, where: str, *, stream: bool = False) -> Any:
    """What a Stainless SDK (``openai``, ``anthropic``) parsed from ``raw`` (its
    ``with_raw_response`` answer), once the reply is known to be the API's: a 200 page of HTML
    is a :func:`not_json` error, not a string handed on as a completion."""
    content_type = raw.headers.get("content-type") or ""
    kind = content_type.lower()
    if "html" in kind or (not stream and "json" not in kind):
        body: bytes = await raw.http_response.aread()  # an error page is small
        if "html" in kind or not body.lstrip()[:1] == b"{":
            raise not_json(raw.url, content_type, body[:200], where)
    parsed = raw.parse()
    return await parsed if inspect.isawaitable(parsed) else parsed


def reply_check(where: str) -> Callable[[Any], Awaitable[None]]:
    """An ``httpx`` response hook doing :func:`parsed_reply`'s check, for SDKs that take
    ``event_hooks`` (``google-genai``)."""
    async def check(response: Any) -> None:
        kind = (response.headers.get("content-type") or "").lower()
        if 200 <= response.status_code < 300 and "json" not in kind and "event-stream" not in kind:
            await response.aread()
            raise not_json(response.url, response.headers.get("content-type"),
                           response.content[:200], where)

    return check


def empty_stream(where: str, url: object = None) -> ModelHTTPError:
    """A stream that ended before sending anything: an error, not an empty answer."""
    at = f" at {url}" if url else ""
    return http_error(0, f"the stream from {where}{at} ended without sending anything; "
                         "the connection was cut or the server is not the API", retryable=True)


def cut_off(where: str) -> ModelHTTPError:
    """A stream that ended without its finish reason: a retryable connection error; its text
    and tool calls are never used."""
    return http_error(0, f"the stream from {where} ended before the model finished (no finish "
                         "reason): the connection was cut; the partial answer was discarded",
                      retryable=True)


def end_of_stream(where: str, *, received: bool, finished: bool, budget: ResponseBudget,
                  url: object = None) -> None:
    """The adapters' rule at the end of a stream: one that sent nothing raises
    :func:`empty_stream`; one that ended without its finish reason raises :func:`cut_off`,
    unless the response cap (``budget``) stopped the reading."""
    if not received:
        raise empty_stream(where, url)
    if not finished and not budget.exceeded:
        raise cut_off(where)
