"""Streamed text leaves a run through one gate (reactloop._textgate.TextGate) that redacts over
the accumulated text: a secret arriving a few characters per delta never gets through."""

from __future__ import annotations

import asyncio
import itertools
import secrets
from collections.abc import AsyncIterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reactloop import Agent
from reactloop._redact import (
    MAX_PATTERN_HOLD,
    PLACEHOLDER,
    _credentials,
    add_secret,
    hold_back,
    redact,
)
from reactloop._textgate import TextGate
from reactloop.messages import ModelRequest, ModelResponse, TextDelta
from reactloop.testing import FunctionModel

# registered once: hypothesis draws the texts around them
LONG = "-----BEGIN KEY----- " + "Ab9+ " * 60  # longer than the key-pattern bound, spaces inside
SECRETS = ("correct horse 42", "hunter2hunter2", "p@ss;word=99", "xyzzy-plugh-0451", LONG)
for _s in SECRETS:
    add_secret(_s)


@pytest.fixture
def only_these_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    """What is held back depends on every registered value: other tests register theirs (an
    OAuth token starting with "r" holds back the "r" of "The answer"), so these tests see only
    their own."""
    from reactloop import _redact
    monkeypatch.setattr(_redact, "_secrets", set(SECRETS))
    monkeypatch.setattr(_redact, "_registered", frozenset(SECRETS))

FILLER = st.text(alphabet="ab \n.,", max_size=12)
KEYS = st.sampled_from([
    *SECRETS,
    "sk-proj-AbCdEfGhIjKlMnOpQrSt",
    "AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW",
    "Authorization: Bearer abcdef123456",
    '{"x-api-key": "abc-123"}',
    "GET /v1?key=abc123&alt=sse",
    "Bearer 0123456789abcdef",
    "hunter2",  # the start of a secret that never completes
    LONG[:150],
    "sk-",
])


@st.composite
def texts_and_splits(draw: st.DrawFn) -> tuple[str, list[str]]:
    parts = draw(st.lists(st.one_of(FILLER, KEYS), min_size=1, max_size=8))
    text = " ".join(parts)
    cuts = sorted(draw(st.sets(st.integers(0, len(text)), max_size=len(text))))
    bounds = [0, *cuts, len(text)]
    return text, [text[a:b] for a, b in itertools.pairwise(bounds)]


def gated(deltas: list[str]) -> list[str]:
    gate = TextGate()
    released = [gate.feed(d) for d in deltas]
    released.append(gate.flush())
    return released


@settings(max_examples=400, deadline=None)
@given(texts_and_splits())
def test_no_split_lets_a_secret_through(case: tuple[str, list[str]]) -> None:
    text, deltas = case
    released = gated(deltas)
    so_far = ""
    for piece in released:  # at every moment, not only at the end
        so_far += piece
        assert not any(s in so_far for s in SECRETS)
    # a credential pattern (a header value runs to the line's end) longer than the bound is
    # released as it comes, redacted as far as it is known: the whole may differ then
    if all(len(m.group()) <= MAX_PATTERN_HOLD for p in _credentials() for m in p.finditer(text)):
        assert so_far == redact(text)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(SECRETS), st.integers(1, 5), FILLER, FILLER)
def test_a_secret_in_small_pieces(secret: str, size: int, before: str, after: str) -> None:
    text = f"{before} {secret} {after}"
    deltas = [text[i:i + size] for i in range(0, len(text), size)]
    joined = "".join(gated(deltas))
    assert secret not in joined and PLACEHOLDER in joined
    assert joined == redact(text)


@pytest.mark.usefixtures("only_these_secrets")
def test_plain_prose_is_not_held_back() -> None:
    gate = TextGate()
    assert gate.feed("The answer") == "The answer"
    assert gate.feed(" is 42.") == " is 42."
    assert gate.flush() == ""


def test_hold_back_is_bounded_for_key_patterns() -> None:
    text = "sk-" + "a" * (MAX_PATTERN_HOLD * 2)
    assert len(text) - hold_back(text) <= MAX_PATTERN_HOLD


@pytest.mark.usefixtures("only_these_secrets")
def test_a_registered_secret_is_held_only_while_it_may_be_arriving() -> None:
    gate = TextGate()
    assert gate.feed("pass: hunt") == "pass: "  # "hunt" may start hunter2hunter2
    assert gate.feed("ing season") == "hunting season"


class ThreeChars(FunctionModel):
    async def stream(self, request: ModelRequest) -> AsyncIterator[TextDelta | ModelResponse]:
        response = await self.request(request)
        text = response.text or ""
        for i in range(0, len(text), 3):
            yield TextDelta(text[i:i + 3])
        yield response


def test_text_deltas_of_a_run_never_carry_a_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    registered = f"reg-{secrets.token_hex(8)}"
    add_secret(registered)
    password = f"plain{secrets.randbelow(10**8):08d}word"
    monkeypatch.setenv("DB_PASSWORD", password)  # named like a secret: redacted unregistered
    answer = f"Key {registered}, password {password}, key sk-live-{secrets.token_hex(10)} end."
    agent = Agent(model=ThreeChars(lambda request: answer))

    async def deltas() -> list[str]:
        return [e.text async for e in agent.stream("go")  # type: ignore[attr-defined]
                if e.type == "text_delta"]

    pieces = asyncio.run(deltas())
    joined = "".join(pieces)
    assert registered not in joined and password not in joined and "sk-live" not in joined
    assert joined == redact(answer)
    assert len(pieces) > 3  # still streamed, not one block at the end


def test_partial_typed_outputs_never_carry_a_secrets_prefix() -> None:
    """Partial typed answers are parsed from what the gate released, not from the raw
    deltas: a secret arriving in pieces shows up in no partial value, not even its start."""
    from pydantic import BaseModel

    class Answer(BaseModel):
        answer: str

    registered = f"reg-{secrets.token_hex(8)}"
    add_secret(registered)
    text = '{"answer": "the key is ' + registered + ' and that is all of it"}'
    agent = Agent(model=ThreeChars(lambda request: text), output_type=Answer,
                  output_mode="prompted")

    async def partials() -> list[str]:
        return [str(e.to_dict()) async for e in agent.stream("go")  # type: ignore[attr-defined]
                if e.type == "partial_output"]

    seen = asyncio.run(partials())
    assert seen  # the typed answer still streams
    assert not any(registered[:8] in s for s in seen)
