"""``with_ids`` (``reactloop._iteration``): every call of a response gets a string name and an
id unique in it. The one-call fast path gives what the general path gives."""

from __future__ import annotations

from typing import Any

from reactloop._iteration import with_ids
from reactloop.messages import ToolCall

RUN = "abcdef0123456789"


def test_one_call_without_an_id_gets_one() -> None:
    (c,) = with_ids(RUN, 3, (ToolCall("add", {"a": 1}, None, {"x": 1}),))
    assert c == ToolCall("add", {"a": 1}, "call_abcdef01_3_0", {"x": 1})


def test_one_call_with_an_id_keeps_it() -> None:
    call = ToolCall("add", {"a": 1}, "id-1")
    assert with_ids(RUN, 3, [call]) == (call,)
    assert isinstance(with_ids(RUN, 3, [call]), tuple)


def test_one_call_with_a_name_that_is_no_string_gets_a_printable_one() -> None:
    odd: Any = 7
    (c,) = with_ids(RUN, 2, (ToolCall(odd, {}, ""),))
    assert (c.name, c.id) == ("7", "call_abcdef01_2_0")


def test_several_calls_get_unique_ids() -> None:
    calls = (ToolCall("a", {}, "x"), ToolCall("b", {}, "x"), ToolCall("c", {}))
    assert [c.id for c in with_ids(RUN, 1, calls)] == ["x", "call_abcdef01_1_1",
                                                       "call_abcdef01_1_2"]
