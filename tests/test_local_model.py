"""The embedded model: prompt rendering and grammar (pure), and real end-to-end runs."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from reactloop import Agent, Message, ModelRequest, RunState, ToolCall, UserError, tool
from reactloop.errors import ModelError
from reactloop.messages import ModelSettings, ToolSpec
from reactloop.models._gbnf import Candidates, Caps, reply_grammar
from reactloop.models.local import (
    Guidance,
    LocalModel,
    Turn,
    conversation_values,
    default_model_path,
    parse_reply,
    plan_reply,
    render_messages,
    result_prefix,
    strip_notes,
)

pytest.importorskip("llama_cpp")


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: first addend
        b: second addend
    """
    return a + b


SPEC = add.spec()


def _grammar(text: str) -> None:
    from llama_cpp.llama_grammar import LlamaGrammar

    LlamaGrammar.from_string(text, verbose=False)  # raises on a grammar llama.cpp rejects


def test_grammar_offers_each_tool_and_the_answer() -> None:
    both = reply_grammar([SPEC], answer=True)
    assert both.startswith("root ::= call-add | answer\n")
    assert 'call-add ::= "{\\"tool\\": \\"add\\", \\"arguments\\": " args-add "}"' in both
    forced = reply_grammar([SPEC], answer=False)
    assert forced.startswith("root ::= call-add\n") and "answer ::=" not in forced
    only = reply_grammar([], answer=True, answer_prefix='Tok"yo')
    assert 'answer ::= "{\\"answer\\": " "\\"" "Tok\\"yo" char{0,600} "\\"" "}"' in only
    for g in (both, forced, only):
        _grammar(g)


def test_grammar_caps_strings_arrays_and_numbers() -> None:
    spec = ToolSpec("f", "", {"type": "object", "properties": {
        "s": {"type": "string"}, "short": {"type": "string", "maxLength": 5},
        "xs": {"type": "array", "items": {"type": "integer"}}, "n": {"type": "number"}},
        "required": ["s"]})
    g = reply_grammar([spec], answer=False, caps=Caps(string=50, array=4, digits=6))
    assert '"\\"s\\": " string-50' in g and 'string-50 ::= "\\"" char{0,50} "\\""' in g
    assert 'char{0,5}' in g and "{0,3}" in g and "[0-9]{1,6}" in g
    _grammar(g)


def test_grammar_restricts_arguments_to_candidates() -> None:
    g = reply_grammar([SPEC], answer=False,
                      candidates={"add": Candidates(("1234", "234", "2.5"), ("Japan",))})
    assert 'args-add ::= "{" "\\"a\\": " ("1234" | "234") ", " "\\"b\\": " ("1234" | "234") "}"' in g
    _grammar(g)


def test_nested_definitions_and_optional_members() -> None:
    spec = ToolSpec("f", "", {"type": "object", "properties": {
        "p": {"$ref": "#/$defs/P"}, "q": {"anyOf": [{"type": "string"}, {"type": "null"}]}},
        "$defs": {"P": {"type": "object", "properties": {"x": {"type": "integer"}}}}})
    g = reply_grammar([spec], answer=True)
    assert "def-p ::=" in g
    _grammar(g)


def _request(*messages: Message, tools: tuple[ToolSpec, ...] = (SPEC,), choice: str = "auto",
             notes: tuple[str, ...] = ()) -> ModelRequest:
    return ModelRequest("sys", messages, tools, notes, ModelSettings(tool_choice=choice))  # type: ignore[arg-type]


def test_plan_requires_a_call_when_the_question_names_a_tool() -> None:
    plan = plan_reply(_request(Message.user("What is 1234 plus 234?")), Guidance())
    assert plan.grammar is not None and "answer ::=" not in plan.grammar
    assert '("1234" | "234")' in plan.grammar  # numbers come from the question
    loose = plan_reply(_request(Message.user("Are 1234 and 234 integers?")), Guidance())
    assert loose.grammar is not None and "answer ::=" in loose.grammar  # no name word: optional


def test_plan_answers_from_a_successful_result_and_frees_a_failed_call() -> None:
    asked = Message.user("What is 1234 plus 234?")
    call = Message.assistant(None, [ToolCall("add", {"a": 1234, "b": 234}, "c1")])
    done = plan_reply(_request(asked, call, Message.tool("c1", "add", "1468")), Guidance())
    assert done.prefix == "1468" and done.grammar is not None
    assert "call-add" not in done.grammar and '"1468" (char-after-figure char{0,159})?' in done.grammar
    failed = plan_reply(_request(asked, call, Message.tool("c1", "add", "b must be below 1000, "
                                                          "e.g. 999", is_error=True)), Guidance())
    assert failed.grammar is not None and "call-add" in failed.grammar
    # the retry may copy the error's values too (issue 23: arguments that can recover)
    assert '("1234" | "234" | "1000" | "999")' in failed.grammar
    forced = plan_reply(_request(asked, call, Message.tool("c1", "add", "1468"),
                                 choice="required"), Guidance())
    assert forced.grammar is not None and "answer ::=" not in forced.grammar  # caller wins


def test_plan_offers_no_unrelated_tools_and_caps_only_offers_all() -> None:
    hello = _request(Message.user("Hello! Who are you?"))
    plan = plan_reply(hello, Guidance())
    assert plan.listed == () and plan.grammar is not None and "call-add" not in plan.grammar
    free = plan_reply(hello, Guidance.caps_only())
    assert free.listed == (SPEC,) and free.grammar is not None and "call-add" in free.grammar
    assert plan_reply(_request(Message.user("hi"), tools=()), Guidance()).grammar is None


def test_conversation_values_and_result_prefix() -> None:
    turn = Turn("Is 1,250 km from 'New York' to Ada Lovelace's home 2024-03-15?", ())
    found = conversation_values(turn)
    assert found.numbers[:2] == ("1250", "2024") and "15" in found.numbers
    assert "New York" in found.strings and "Ada Lovelace" in found.strings
    assert not any(s.startswith("the ") for s in found.strings)
    long = conversation_values(Turn("word " * 60 + "'quoted bit' 7", ()))
    assert long.strings == () and long.numbers == ("7",)  # string arguments stay free
    repeated = Message.tool("c", "add", "42\n(You already called add with these arguments; "
                                        "this is the same result. Use it.)")
    assert result_prefix(Turn("q", (repeated,))) == "42"
    assert result_prefix(Turn("q", (Message.tool("c", "f", "x" * 500),))) == ""


def test_loop_notes_are_stripped_from_answers() -> None:
    note = ("This is your last iteration and tools are no longer available. Answer the user "
            "now with what you already have.")
    request = _request(Message.user("q"), notes=(note,))
    assert strip_notes("42. This is your last iteration and tools are no longer available.",
                       request) == "42."
    assert strip_notes("The sum is 42.", request) == "The sum is 42."
    asked = Message.user("Reverse 'drawer'.")
    call = Message.assistant(None, [ToolCall("reverse_word", {"word": "drawer"}, "c1")])
    cached = Message.tool("c1", "reverse_word", "reward\n(You already called reverse_word with "
                          "these arguments; this is the same result. Use it instead of calling "
                          "again.)")
    repeat = _request(asked, call, cached)
    leaked = ("You've already called reverse_word with these arguments; this is the same "
              "result. It is reward.")
    assert strip_notes(leaked, repeat) == "It is reward."  # paraphrased, still removed


def test_replies_parse_into_calls_or_answers() -> None:
    call = parse_reply('{"tool": "add", "arguments": {"a": 1, "b": 2}}', [SPEC])
    assert call.tool_calls[0] == ToolCall("add", {"a": 1, "b": 2})
    assert parse_reply('{"answer": "3"}', [SPEC]).text == "3"
    assert parse_reply('{"answer": "cut of', [SPEC]).text == "cut of"  # never the wrapper
    assert parse_reply('{"answer": "a \\"b\\', [SPEC]).text == 'a "b'
    assert parse_reply('{"tool": "add", "argu', [SPEC]).text == '{"tool": "add", "argu'


def test_rendered_prompt_only_grows_between_iterations() -> None:
    history = [Message.user("What is 1+2?")]
    first = ModelRequest("sys", tuple(history), (SPEC,), ("Budget: 2 iterations left.",))
    history += [Message.assistant(None, [ToolCall("add", {"a": 1, "b": 2}, "c1")]),
                Message.tool("c1", "add", "3")]
    second = ModelRequest("sys", tuple(history), (), ("last iteration",), declared_tools=(SPEC,))
    a, b = render_messages(first), render_messages(second)
    # everything but the trailing note-carrying user turn is a prefix of the next prompt
    assert b[: len(a) - 1] == a[:-1]
    assert a[-1]["content"].startswith(b[len(a) - 1]["content"])
    assert "Tool add returned: 3" in b[-1]["content"]
    assert "Now answer my question: What is 1+2?" in b[-1]["content"]
    assert "add(a: integer, b: integer)" in b[0]["content"]  # tools stay listed


def test_missing_and_corrupt_model_files_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="does not exist"):
        Agent(model=f"local:{tmp_path / 'nope.gguf'}")
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"not a model at all")
    with pytest.raises(UserError, match="not a GGUF model file"):
        Agent(model=f"local:{bad}")
    truncated = tmp_path / "truncated.gguf"
    with default_model_path().open("rb") as f:
        truncated.write_bytes(f.read(50_000))
    result = Agent(model=LocalModel(truncated)).run_sync("hi")
    assert result.state is RunState.ERROR and isinstance(result.error, ModelError)
    assert "not a usable GGUF model" in str(result.error)


@pytest.fixture(scope="module")
def local() -> LocalModel:
    return LocalModel()


def test_real_embedded_model_calls_a_tool_and_ends(local: LocalModel) -> None:
    result = Agent(model=local, tools=[add], max_iterations=4).run_sync("What is 17 + 25?")
    calls = [r for s in result.steps for r in s.results]
    assert calls, "the model made no tool call"
    assert calls[0].name == "add" and calls[0].error is None  # valid by construction
    assert result.state in (RunState.COMPLETED, RunState.MAX_ITERATIONS)
    assert result.output.strip()
    assert result.metrics.input_tokens > 0 and result.metrics.output_tokens > 0


def test_real_embedded_model_without_tools_answers_in_text(local: LocalModel) -> None:
    result = Agent(model=local, model_settings=None).run_sync("Say hello.")
    assert result.state is RunState.COMPLETED and result.output.strip()
    assert not result.output.lstrip().startswith("{")


def test_cli_run_on_the_embedded_model_prints_json() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "reactloop", "run", "--json", "-n", "4", "What is 17 + 25?"],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=600, check=False,
    )
    data = json.loads(proc.stdout)
    # 5: the answer was cut off, 6: the last tool step failed (the CLI's honest endings)
    expected = {"completed": {0, 5, 6}, "max_iterations": {2, 5}}[data["state"]]
    assert proc.returncode in expected, proc.stderr
    assert data["metrics"]["tool_calls"] >= 1
    assert any(r["error"] is None for s in data["steps"] for r in s["results"])


def test_real_embedded_model_copies_numbers_from_the_question(local: LocalModel) -> None:
    @tool
    def subtract(a: int, b: int) -> int:
        """Subtract b from a.

        Args:
            a: the number to subtract from
            b: the number to subtract
        """
        return a - b

    result = Agent(model=local, tools=[add, subtract], max_iterations=4).run_sync(
        "What is 1234 minus 234?")
    calls = [c for s in result.steps for c in s.tool_calls]
    assert calls and calls[0].name == "subtract"  # the question names it: a call is required
    assert all(set(c.arguments.values()) <= {1234, 234} for c in calls)  # never 123


def test_real_embedded_model_cannot_write_past_the_caps() -> None:
    @tool
    def write(text: str) -> str:
        """Write a text down.

        Args:
            text: the text
        """
        return "ok"

    capped = LocalModel(guidance=Guidance.caps_only(Caps(string=40)))
    request = ModelRequest("", (Message.user("Write a very long poem about the sea."),),
                           (write.spec(),), settings=ModelSettings(tool_choice="required"))
    response = asyncio.run(capped.request(request))
    asyncio.run(capped.aclose())
    assert response.tool_calls and len(response.tool_calls[0].arguments["text"]) <= 40
    assert response.finish_reason == "tool_calls"  # the JSON closed: no truncation
