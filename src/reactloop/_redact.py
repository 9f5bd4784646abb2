"""Keep API keys out of everything reactloop prints, returns, stores or logs.

Some proxies and servers echo the request's ``Authorization`` header in their error bodies,
so a key can come back inside an error message. reactloop redacts at its boundaries: the
adapters' translated errors, retry events, run results, the CLI's output and every log record
of the ``reactloop`` loggers. What is redacted:

* every registered secret (:func:`add_secret`): the adapters register the key they use, and
  the value of every environment variable *named like a secret* (:func:`is_secret_name`:
  ``DB_PASSWORD``, ``GITHUB_PAT``, ``SERVICE_TOKEN``, ``OPENAI_API_KEY``…) is always included,
  read afresh when the environment changes;
* credential headers (``Authorization: ...``, ``x-api-key: ...``, ``x-goog-api-key: ...``,
  also in their JSON or Python-dict spelling), ``Bearer <token>``, and ``key=`` query
  parameters;
* strings shaped like provider keys (``sk-...``, ``sk-ant-...``, Google's ``AIza...``).

The same secret-name rules decide which variables the workspace's ``run_command`` never passes
to a command (:func:`strip_secrets`), which values ``reactloop serve`` and the CLI's logs
redact: one set of rules for the whole project. The allow-list, :data:`SAFE_ENV_NAMES`, names
the well-known harmless variables the rules would otherwise catch (``PWD``,
``DBUS_SESSION_BUS_ADDRESS``…).

Also here: :func:`redact_url` (a connection URL with its password masked, for messages) and
the streamed hold-back, :mod:`reactloop._textgate`, built on :func:`hold_back`.

This module is the bottom layer: it imports nothing from reactloop.
"""

from __future__ import annotations

import contextlib
import fnmatch
import functools
import logging
import os
import re
import threading
import traceback
from collections.abc import Iterable, Mapping
from urllib.parse import urlsplit, urlunsplit

__all__ = [
    "KEY_ENV_VARS",
    "MAX_PATTERN_HOLD",
    "MIN_SECRET_LENGTH",
    "PLACEHOLDER",
    "SAFE_ENV_NAMES",
    "SECRET_ENV_PATTERNS",
    "SECRET_NAME_FRAGMENTS",
    "SECRET_NAME_PARTS",
    "RedactingFilter",
    "add_secret",
    "environ_secret_values",
    "get_logger",
    "hold_back",
    "install_log_filter",
    "is_secret_name",
    "redact",
    "redact_exception",
    "redact_url",
    "strip_secrets",
]

PLACEHOLDER = "[REDACTED]"
MIN_SECRET_LENGTH = 8
"""Shorter values are not registered: redacting "ollama" or "test" would mangle plain text."""

KEY_ENV_VARS: tuple[str, ...] = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "AZURE_OPENAI_API_KEY",
)
"""The providers' key variables (all named like secrets, so redacted wherever their values
appear, registered or not; a key set after import is covered too)."""

# -- secret-name rules: one set for the command environment, the server and the logs ----------

SECRET_NAME_PARTS: frozenset[str] = frozenset({
    "KEY", "KEYS", "TOKEN", "TOKENS", "PAT", "PEM", "P12", "PFX", "JKS", "AUTH", "PASS", "PWD",
    "PIN", "PRIVATE", "SESSION", "SESSIONID", "DSN", "JWT", "BEARER", "HMAC",
})
"""Words that mark a variable as a secret when they are a whole *part* of its name (parts are
what lies between characters other than letters and digits, trailing digits ignored; any case)
or end one (``ACCESSKEY``, ``AUTHTOKEN``, for ``KEY(S)`` and ``TOKEN(S)``): ``GITHUB_PAT``,
``HF_HUB_KEY_X``, ``SMTP_PASS``, ``AOC_SESSION``, ``npm_authToken``. As parts, short words stay
precise: ``PATH``, ``AUTHOR``, ``KEYBOARD``, ``GOPRIVATE`` and ``TOKENIZERS_PARALLELISM`` are
not secrets."""

SECRET_NAME_FRAGMENTS: tuple[str, ...] = (
    "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "APIKEY", "PRIVATEKEY",
    "COOKIE", "WEBHOOK", "AUTHORIZATION", "CONNECTIONSTRING", "DATABASEURL",
)
"""Words that mark a variable as a secret anywhere in its name (ignoring case and ``_``):
``SLACK_WEBHOOK_URL``, ``STRIPE_SECRETKEY``, ``GOOGLE_APPLICATION_CREDENTIALS``."""

SECRET_ENV_PATTERNS: tuple[str, ...] = ("AWS_*", "AZURE_*", "*_URI", "*_DB_URL")
"""Shell patterns (any case) of further names never passed on: cloud credentials come in
many names, and connection URLs embed passwords."""

SAFE_ENV_NAMES: tuple[str, ...] = (
    "PWD", "OLDPWD", "DBUS_SESSION_BUS_ADDRESS", "DESKTOP_SESSION", "SESSION_MANAGER",
    "XDG_SESSION_*",
)
"""The allow-list: names that look like secrets by the rules above but are well-known harmless
variables (shell patterns, any case). They reach commands and are not redacted."""

_NAME_PARTS = re.compile(r"[^A-Z0-9]+")
_SECRET_SUFFIXES = ("KEY", "KEYS", "TOKEN", "TOKENS")


def is_secret_name(name: str) -> bool:
    """Whether an environment variable called ``name`` probably holds a secret.

    True when a part of the name is one of :data:`SECRET_NAME_PARTS` (or ends in ``KEY`` or
    ``TOKEN``), the name contains one of :data:`SECRET_NAME_FRAGMENTS`, or it matches
    :data:`SECRET_ENV_PATTERNS`; :data:`SAFE_ENV_NAMES` are never secrets. The rules err on the
    side of caution: a command that needs a stripped variable gets it through
    ``Workspace(env_allow=[...])`` (``--env-allow NAME`` on the command line)."""
    upper = name.upper()
    if any(fnmatch.fnmatchcase(upper, p) for p in SAFE_ENV_NAMES):
        return False
    squashed = upper.replace("_", "").replace("-", "").replace(".", "")
    if any(f in squashed for f in SECRET_NAME_FRAGMENTS):
        return True
    for part in _NAME_PARTS.split(upper):
        bare = part.rstrip("0123456789")  # KEY2 counts as KEY
        if {part, bare} & SECRET_NAME_PARTS or bare.endswith(_SECRET_SUFFIXES):
            return True
    return any(fnmatch.fnmatchcase(upper, p) for p in SECRET_ENV_PATTERNS)


def strip_secrets(environ: Mapping[str, str], allow: Iterable[str] = ()) -> dict[str, str]:
    """``environ`` without the variables named like secrets (see :func:`is_secret_name`).

    Names matching a name or shell pattern in ``allow`` (any case) are kept anyway."""
    allowed = [a.upper() for a in allow]
    return {name: value for name, value in environ.items()
            if not is_secret_name(name)
            or any(fnmatch.fnmatchcase(name.upper(), a) for a in allowed)}


def environ_secret_values(environ: Mapping[str, str]) -> frozenset[str]:
    """The values (stripped, :data:`MIN_SECRET_LENGTH`+ characters) of the variables in
    ``environ`` named like secrets."""
    found = (v.strip() for k, v in environ.items() if is_secret_name(k))
    return frozenset(v for v in found if len(v) >= MIN_SECRET_LENGTH)


def redact_url(url: str) -> str:
    """``url`` (a connection URL, a DSN) with its password, in the user part or a
    ``password=`` parameter, as ``***``: how a store or server is named in messages."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<a malformed URL>"
    netloc = parts.netloc
    user, at, host = netloc.rpartition("@")
    if at and ":" in user:
        netloc = f"{user.split(':', 1)[0]}:***@{host}"
    query = "&".join("password=***" if p.lower().startswith("password=") else p
                     for p in parts.query.split("&")) if parts.query else ""
    return urlunsplit(parts._replace(netloc=netloc, query=query))


_secrets: set[str] = set()
_lock = threading.Lock()
_environ_seen: tuple[object, frozenset[str]] = (None, frozenset())
_compiled: tuple[frozenset[str], re.Pattern[str] | None] = (frozenset(), None)



@functools.cache
def _credentials() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """The credential patterns ``(bearer, header value, ?key=, key shapes)``, compiled on
    first use (they were a tenth of ``import reactloop``)."""
    # a header name, its separator (": ", '": "', "': '", "=", also JSON-escaped: '\\": \\"'),
    # then the value up to a quote, backslash, comma, brace or line end; the separator is kept
    # so the text stays readable, and an escaped quote is never split (JSON stays valid JSON)
    header_value = re.compile(
        r"""(?ix)
        (\b(?:proxy-)?authorization|\bx-api-key|\bx-goog-api-key|\bapi-key|\bapi_key)
        (\\?["']?\s*[:=]\s*\\?["']?)
        ([^"'\\\r\n,}]+)
        """
    )
    # a token has a digit or a symbol somewhere, which keeps prose ("bearer authentication")
    bearer = re.compile(r"(?i)\b(bearer)\s+(?=[A-Za-z]*[0-9._~+/=-])[A-Za-z0-9._~+/=-]{8,}")
    key_query = re.compile(r"(?i)([?&]key=)[^&\s\"']+")
    # sk-... (OpenAI, Anthropic sk-ant-...), Google API keys; long enough not to hit words
    key_shapes = re.compile(r"\bsk-[A-Za-z0-9_-]{16,}|\bAIza[0-9A-Za-z_-]{30,}")
    return bearer, header_value, key_query, key_shapes


def add_secret(value: str | None) -> None:
    """Register a value that must never appear in reactloop's output.

    Values shorter than :data:`MIN_SECRET_LENGTH` characters (and None) are ignored.
    """
    if not isinstance(value, str):
        return
    value = value.strip()
    if len(value) < MIN_SECRET_LENGTH:
        return
    global _registered
    with _lock:
        if value not in _secrets:
            _secrets.add(value)
            _registered = frozenset(_secrets)


_registered: frozenset[str] = frozenset()
""":data:`_secrets` as a frozenset, made again only when one is added."""
_union: tuple[frozenset[str], frozenset[str], frozenset[str]] = (
    frozenset(), frozenset(), frozenset())
"""``(environment values, registered, their union)``: the union made again only when one of
the two changed (streaming asks for it once per delta)."""


def _environ_secrets() -> frozenset[str]:
    """:func:`environ_secret_values` of ``os.environ``, computed again only when it changed."""
    global _environ_seen
    # os.environ decodes each value on access; its raw dict compares in one C call, so the
    # common case (nothing changed) costs next to nothing
    raw = getattr(os.environ, "_data", None)
    current: object = raw if isinstance(raw, dict) else dict(os.environ)
    seen, values = _environ_seen
    if current != seen:
        values = environ_secret_values(os.environ)
        _environ_seen = (dict(current) if isinstance(current, dict) else current, values)
    return values


def _current_secrets() -> frozenset[str]:
    global _union
    environ, registered = _environ_secrets(), _registered
    seen_environ, seen_registered, union = _union
    if environ is not seen_environ or registered is not seen_registered:
        union = environ | registered
        _union = (environ, registered, union)
    return union


def _secrets_state() -> tuple[frozenset[str], re.Pattern[str] | None]:
    """The secrets to redact now, and the pattern that finds them."""
    global _compiled
    secrets = _current_secrets()
    known, pattern = _compiled
    if secrets != known:
        # longest first, so a key that contains another is replaced whole
        ordered = sorted(secrets, key=len, reverse=True)
        pattern = re.compile("|".join(map(re.escape, ordered))) if ordered else None
        _compiled = (secrets, pattern)
    return secrets, pattern


def _secrets_pattern() -> re.Pattern[str] | None:
    return _secrets_state()[1]


def redact(text: str) -> str:
    """``text`` with every secret, credential header value and key-shaped string replaced by
    ``[REDACTED]``."""
    if not text:
        return text
    pattern = _secrets_pattern()
    if pattern is not None:
        text = pattern.sub(PLACEHOLDER, text)
    bearer, header_value, key_query, key_shapes = _credentials()
    text = bearer.sub(lambda m: f"{m.group(1)} {PLACEHOLDER}", text)
    text = header_value.sub(_header_repl, text)
    text = key_query.sub(lambda m: m.group(1) + PLACEHOLDER, text)
    return key_shapes.sub(PLACEHOLDER, text)


# -- the streamed hold-back --------------------------------------------------------------------

MAX_PATTERN_HOLD = 256
"""The most characters held back for a credential pattern still arriving (a header value,
``Bearer <token>``, ``sk-...``): a longer one is released as it comes, redacted as far as it
is known. Registered secrets are held back as long as they are (the longest one bounds it)."""


def _prefix(word: str) -> str:
    """A regex matching every non-empty prefix of ``word`` (words here are a few letters)."""
    out = ""
    for ch in reversed(word[1:]):
        out = f"(?:{re.escape(ch)}{out})?"
    return re.escape(word[0]) + out


_HEADER_NAMES = ("proxy-authorization", "authorization", "x-api-key", "x-goog-api-key",
                 "api-key", "api_key")


# the end of a text where one of the patterns above may be starting or still growing: a
# header name so far, or a complete one with its separator and value so far; ``bearer`` and
# its token; ``?key=`` and its value; ``sk-``/``AIza`` and their characters
@functools.cache
def _open() -> re.Pattern[str]:
    """The pattern of a credential still open at the end of a text (compiled on first use)."""
    return re.compile(
        r"(?i:\b(?:" + "|".join(_prefix(n) for n in _HEADER_NAMES) + r"))\Z"
        r"""|(?i:\b(?:(?:proxy-)?authorization|x-api-key|x-goog-api-key|api-key|api_key))"""
        r"""\\?["']?\s*(?:[:=]\s*\\?["']?[^"'\\\r\n,}]*)?\Z"""
        r"|(?i:\b(?:" + _prefix("bearer") + r"|bearer\s+[A-Za-z0-9._~+/=-]*))\Z"
        r"""|[?&](?:(?i:""" + _prefix("key=") + r""")|(?i:key=)[^&\s"']*)?\Z"""
        r"|\b(?:s(?:k(?:-[A-Za-z0-9_-]*)?)?|A(?:I(?:z(?:a[0-9A-Za-z_-]*)?)?)?)\Z"
    )


def hold_back(text: str) -> int:
    """How much of streamed ``text`` may go out now: ``redact(text[:i])`` is final whatever
    follows, and ``text[i:]`` must wait for more (the start of a secret or a credential that
    may still be arriving). Used by :class:`reactloop._textgate.TextGate`.

    Held back: the longest end of ``text`` that is the start of a registered secret, and a
    credential pattern still open at the end (at most :data:`MAX_PATTERN_HOLD` characters);
    the cut never falls inside a complete match."""
    n = len(text)
    cut = n
    found = _open().search(text, max(0, n - MAX_PATTERN_HOLD))
    if found is not None:
        cut = found.start()
    secrets, pattern = _secrets_state()
    if secrets:
        cut = min(cut, _secret_start(text, secrets))
    if cut == n:  # nothing held (plain prose): no match can straddle the end
        return n
    matchers = [(m, MAX_PATTERN_HOLD) for m in _credentials()]
    if pattern is not None:  # a secret is bounded by its own length
        matchers.append((pattern, n))
    moved = True
    while moved:  # a complete match around the cut moves it to the match's start
        moved = False
        for matcher, bound in matchers:
            for m in matcher.finditer(text):
                # one still growing at the end is held only up to the bound
                if m.start() < cut < m.end() and (m.end() < n or n - m.start() <= bound):
                    cut, moved = m.start(), True
    return cut


_Finder = tuple[frozenset[str], int, "re.Pattern[str]", dict[str, tuple[str, ...]]]
_finder: _Finder | None = None


def _secret_finder(secrets: frozenset[str]) -> _Finder:
    """For these secrets: the longest length, a pattern finding every place where one may
    start (its first four characters, or fewer at the very end), and the secrets by their
    first four characters (secrets have :data:`MIN_SECRET_LENGTH`+ characters)."""
    global _finder
    if _finder is None or _finder[0] != secrets:
        heads: dict[str, list[str]] = {}
        for secret in secrets:
            heads.setdefault(secret[:4], []).append(secret)
        partial = {secret[:k] for secret in secrets for k in (1, 2, 3)}
        pattern = re.compile("(?=" + "|".join(map(re.escape, heads)) + ")|(?=(?:"
                             + "|".join(map(re.escape, partial)) + r")\Z)")
        _finder = (secrets, max(map(len, secrets)), pattern,
                   {head: tuple(found) for head, found in heads.items()})
    return _finder


def _secret_start(text: str, secrets: frozenset[str]) -> int:
    """Where the longest end of ``text`` that begins a secret starts (``len(text)``: none)."""
    n = len(text)
    _, longest, pattern, heads = _secret_finder(secrets)
    for m in pattern.finditer(text, max(0, n - longest + 1)):
        tail = text[m.start():]
        if len(tail) < 4 or any(s.startswith(tail) for s in heads.get(tail[:4], ())):
            return m.start()
    return n


def _header_repl(m: re.Match[str]) -> str:
    value = m.group(3).strip()
    # already redacted ("Authorization: Bearer [REDACTED]"), or prose ("pass api_key=...")
    if value.endswith(PLACEHOLDER) or not value.strip("."):
        return m.group(0)
    return f"{m.group(1)}{m.group(2)}{PLACEHOLDER}"


def _chain(exc: BaseException) -> Iterable[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def redact_exception(exc: BaseException) -> BaseException:
    """Redact ``exc`` in place and return it: its message (``args`` and a ``message``
    attribute), and, when an exception it was raised from holds a secret, that chain is
    cut so a printed traceback cannot show it."""
    text = str(exc)
    clean = redact(text)
    if clean != text:
        exc.args = (clean,)
    message = getattr(exc, "message", None)
    if isinstance(message, str) and redact(message) != message:
        # a read-only property raises AttributeError: args already hold the clean text then
        with contextlib.suppress(AttributeError):
            exc.message = redact(message)  # type: ignore[attr-defined]
    if any(redact(str(e)) != str(e) for e in _chain(exc) if e is not exc):
        exc.__cause__ = None
        exc.__suppress_context__ = True
    return exc


class RedactingFilter(logging.Filter):
    """Redacts each record's message and exception text (installed on reactloop's loggers)."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a malformed record: logging reports it itself, later
            return True
        clean = redact(message)
        if clean != message:
            record.msg, record.args = clean, None
        if record.exc_info and not record.exc_text:
            # formatters reuse exc_text when it is set, so the traceback is redacted once here
            record.exc_text = "".join(traceback.format_exception(*record.exc_info)).rstrip("\n")
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True


_FILTER = RedactingFilter()


_KNOWN_LOGGERS = ("reactloop", "reactloop.cli", "reactloop.mcp", "reactloop.models")


def install_log_filter(*names: str) -> None:
    """Put the redacting filter on the named loggers (default: reactloop's known loggers).

    Idempotent. A logger's filters do not see the records of its child loggers, so every
    reactloop logger needs it; modules get theirs from :func:`get_logger`.
    """
    for name in names or _KNOWN_LOGGERS:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)


def get_logger(name: str) -> logging.Logger:
    """``logging.getLogger(name)`` with the redacting filter installed: how reactloop's
    modules get their logger."""
    install_log_filter(name)
    return logging.getLogger(name)


install_log_filter()
