"""Issue 31: whatever a user can send is storable on every store. NUL, other control characters
and lone surrogates go into every column of the SQLite and the PostgreSQL store (the session's
title, each message's text, the run log's record) and come back unchanged; ids follow one rule
in both stores (refused on writes with the same error, "no such session" on reads)."""

from __future__ import annotations

import pytest

from reactloop import Message, ToolCall, UserError
from reactloop.sessions import open_store

# NUL (PostgreSQL's text refuses it raw), C0 and C1 controls, DEL, a lone surrogate (a file
# name that is not UTF-8), line and paragraph separators
HOSTILE = "nul\x00 bell\x07 esc\x1b del\x7f c1\x85\x9f lone\udc80 high\ud800 ls\u2028 end"
BAD_IDS = ["a\x00b", "x" * 201, "tab\tid", "lone\ud800", "", "   "]


@pytest.fixture
def store(store_arg):
    s = open_store(store_arg)
    yield s
    s.close()


def hostile_history() -> list[Message]:
    return [
        Message.user(HOSTILE),
        Message.assistant(HOSTILE, [ToolCall(f"tool{HOSTILE}", {HOSTILE: [HOSTILE]},
                                             f"call{HOSTILE}")]),
        Message.tool(f"call{HOSTILE}", f"tool{HOSTILE}", HOSTILE, is_error=True),
        Message(role="assistant", content=HOSTILE, name=HOSTILE, metadata={HOSTILE: HOSTILE}),
    ]


def test_every_message_field_round_trips(store) -> None:
    history = hostile_history()
    store.append("s1", history)
    assert store.get("s1") == history
    store.replace("s1", history[:1])  # the other write path
    assert store.get("s1") == history[:1]


def test_the_title_is_stored_and_listed(store) -> None:
    store.append("s1", [Message.user(HOSTILE)])
    (info,) = store.list()
    assert store.info("s1") == info
    assert info.title.startswith("nul\ufffd bell\ufffd esc\ufffd del\ufffd c1 \ufffd lone?")
    assert "\x00" not in info.title and info.messages == 1
    assert store.get("s1")[0].content == HOSTILE  # the prompt itself is whole


def test_the_run_log_stores_any_text(store) -> None:
    record = {"prompt": HOSTILE, "trace": [{HOSTILE: HOSTILE}], "output": HOSTILE}
    store.append("s1", [Message.user("hi")])
    store.log_run("r1", "s1", record)
    store.log_run("r2", None, {"output": "plain"})
    store.log_run("r2", None, {"output": HOSTILE})  # replaced, not added
    runs = store.runs()
    assert [r["id"] for r in sorted(runs, key=lambda r: r["id"])] == ["r1", "r2"]
    got = next(r for r in runs if r["id"] == "r1")
    assert {k: got[k] for k in record} == record and got["session_id"] == "s1"
    assert len(store.runs(1)) == 1


@pytest.mark.parametrize("bad", BAD_IDS, ids=["nul", "201 chars", "tab", "surrogate",
                                              "empty", "blank"])
def test_one_rule_for_ids_in_every_store(store, bad: str) -> None:
    for write in (lambda: store.append(bad, [Message.user("hi")]),
                  lambda: store.replace(bad, []), lambda: store.writer(bad),
                  lambda: store.delete(bad), lambda: store.clear(bad),
                  lambda: store.log_run("r1", bad, {}), lambda: store.log_run(bad, None, {})):
        with pytest.raises(UserError, match="at most 200 printable characters"):
            write()
    assert store.get(bad) == [] and store.info(bad) is None  # no session can have that id
    assert store.list() == [] and store.runs() == []


def test_an_id_with_a_slash_and_any_printable_text_is_fine(store) -> None:
    for sid in ("team/42", "a/b/../c", "ünï ✓ 名前", "x" * 200):
        store.append(sid, [Message.user(sid)])
        assert store.get(sid) == [Message.user(sid)] and store.info(sid) is not None
        assert store.delete(sid)


@pytest.mark.parametrize("dots", [".", ".."])
def test_dot_ids_are_refused_no_url_can_reach_them(store, dots: str) -> None:
    """Browsers and proxies collapse ``.`` and ``..`` path segments, so a session with such an
    id could be created and never opened again: refused everywhere, with the fix."""
    with pytest.raises(UserError, match="choose another id"):
        store.append(dots, [Message.user("hi")])
    assert store.list() == []
