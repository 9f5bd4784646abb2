"""Messages without metadata share one empty, unchangeable mapping (memory per history
entry), which behaves as the ``{}`` each of them used to get: equal, shown, saved, copied and
pickled the same."""

from __future__ import annotations

import copy
import dataclasses
import json
import pickle

import pytest

from reactloop import Message
from reactloop.messages import message_from_dict, messages_from_json, messages_to_json


def _plain() -> list[Message]:
    return [Message.system("s"), Message.user("u"), Message.assistant("a"),
            Message.tool("c1", "add", "3"), Message("user", "x"),
            message_from_dict({"role": "user", "content": "y"})]


def test_messages_without_metadata_share_one_empty_mapping() -> None:
    shared = {id(m.metadata) for m in _plain()}
    assert len(shared) == 1


def test_the_shared_empty_metadata_behaves_as_an_empty_dict() -> None:
    for m in _plain():
        assert m.metadata == {} and not m.metadata and dict(m.metadata) == {}
        assert "metadata={}" in repr(m)
        twin = Message(m.role, m.content, m.tool_calls, m.tool_call_id, m.name, m.is_error,
                       {}, m.provider_details, m.attachments)
        assert m == twin and twin == m
        assert pickle.loads(pickle.dumps(m)) == m
        assert copy.deepcopy(m) == m and copy.copy(m) == m
        assert dataclasses.asdict(m)["metadata"] == {}
        assert "metadata" not in m.to_dict()
        assert json.dumps(m.metadata) == "{}"
        assert {**m.metadata, "k": 1} == {"k": 1}
    assert messages_from_json(messages_to_json(_plain())) == _plain()


def test_the_shared_empty_metadata_cannot_be_changed() -> None:
    m = Message.tool("c1", "add", "3")
    with pytest.raises(TypeError, match="metadata cannot be changed"):
        m.metadata["kind"] = "x"  # type: ignore[index]
    with pytest.raises(TypeError, match="metadata cannot be changed"):
        m.metadata.update(kind="x")  # type: ignore[attr-defined]
    assert Message.user("u").metadata == {}


def test_given_metadata_is_kept() -> None:
    assert Message.user("u", kind="note").metadata == {"kind": "note"}
    mine = {"kind": "x"}
    assert Message("user", "u", metadata=mine).metadata is mine
    assert message_from_dict({"role": "user", "content": "y",
                              "metadata": {"k": 1}}).metadata == {"k": 1}
