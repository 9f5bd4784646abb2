"""Attachments (issue 26): the values, prompts with parts, tools returning pictures, what a
text-only model gets, saved runs by reference, token estimates and bad input."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from _files import pdf, png
from reactloop import Agent, Document, Image, Message, ModelRequest, ToolCall, UserError
from reactloop.attachments import MAX_ATTACHMENTS, MAX_PART_BYTES, split_prompt
from reactloop.context import TokenCounter
from reactloop.messages import message_from_dict
from reactloop.result import RunState
from reactloop.testing import FunctionModel, ScriptedModel

# -- values -------------------------------------------------------------------------------


def test_an_image_knows_its_type_hash_and_size_from_its_bytes(tmp_path: Path) -> None:
    data = png()
    path = tmp_path / "shot.png"
    path.write_bytes(data)
    a, b = Image.from_bytes(data), Image.from_path(path)
    assert a.media_type == b.media_type == "image/png"
    assert a == b and a.sha256 == b.sha256 and a.size == len(data) and b.name == "shot.png"
    assert a.ref() == {"kind": "image", "media_type": "image/png", "sha256": a.sha256,
                       "size": len(data)}


def test_a_text_document_and_a_pdf(tmp_path: Path) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("# Notes\nhello", encoding="utf-8")
    doc = Document.from_path(notes)
    assert doc.media_type == "text/markdown" and doc.text == "# Notes\nhello"
    assert Document.from_bytes(pdf("x")).media_type == "application/pdf"


@pytest.mark.parametrize(("make", "message"), [
    (lambda: Image.from_bytes(png(), "image/jpeg"), "claims image/jpeg but its bytes are "
                                                    "image/png"),
    (lambda: Image.from_bytes(b"hello, not a picture"), "not an image reactloop knows"),
    (lambda: Image.from_bytes(pdf("x")), "is a PDF"),
    (lambda: Document.from_bytes(b"\xff\xfe\x00garbage", "text/plain"), "not UTF-8"),
    (lambda: Document.from_bytes(b"just text", "application/pdf"), "not a PDF"),
    (lambda: Document.from_bytes(pdf("x")[:300], "application/pdf"), "damaged PDF"),
    (lambda: Document.from_bytes(png()), "is an image"),
])
def test_bytes_that_do_not_match_their_type_are_refused(make: object, message: str) -> None:
    with pytest.raises(UserError, match=message):
        make()  # type: ignore[operator]


def test_a_50_mb_image_is_refused_before_it_is_read(tmp_path: Path) -> None:
    big = tmp_path / "big.png"
    with big.open("wb") as f:  # sparse: 50 MB on paper, nothing on disk or in memory
        f.write(png())
        f.truncate(50 * 1024 * 1024)
    with pytest.raises(UserError, match=r"50\.0 MiB; an attachment may be at most 20\.0 MiB"):
        Image.from_path(big)
    with pytest.raises(UserError, match="at most"):
        Image.from_bytes(png() + bytes(MAX_PART_BYTES))


@pytest.mark.parametrize("url", [
    "http://127.0.0.1/x.png", "http://localhost:8000/x.png", "http://[::1]/x.png",
    "http://10.0.0.5/x.png", "http://192.168.1.1/x.png", "http://169.254.169.254/latest",
    "http://printer.local/x.png", "http://intranet/x.png", "file:///etc/passwd",
    "ftp://example.com/x.png", "http://0.0.0.0/x.png",
])
def test_urls_to_local_or_private_addresses_are_refused(url: str) -> None:
    with pytest.raises(UserError, match=r"local or private address|not an http"):
        Image.from_url(url)


def test_a_public_url_is_kept_as_a_url_and_never_fetched() -> None:
    image = Image.from_url("https://example.com/cat.jpg")
    assert image.media_type == "image/jpeg" and image.data is None and image.available
    assert image.ref()["url"] == "https://example.com/cat.jpg"
    with pytest.raises(UserError, match="not an image"):
        Image.from_url("https://example.com/report.pdf")


def test_500_attachments_are_refused() -> None:
    image = Image.from_bytes(png())
    with pytest.raises(UserError, match=f"500 attachments; at most {MAX_ATTACHMENTS}"):
        split_prompt(["look", *[image] * 500])
    model = ScriptedModel(["never"])
    with pytest.raises(UserError, match="500 attachments"):
        Agent(model=model).run_sync(["look", *[image] * 500])
    assert model.requests == []


def test_a_prompt_part_must_be_text_or_an_attachment(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"got PosixPath \(wrap a file with Image.from_path"):
        split_prompt(["look", tmp_path / "x.png"])
    with pytest.raises(UserError, match="prompt must be a string, or a list"):
        Agent(model=ScriptedModel([])).run_sync(42)  # type: ignore[arg-type]


# -- runs -----------------------------------------------------------------------------------


def test_a_prompt_with_an_image_reaches_the_model_beside_its_text() -> None:
    image = Image.from_bytes(png(), name="shot.png")
    model = ScriptedModel(["A red square."])
    result = Agent(model=model).run_sync(["What is in this picture?", image])
    sent = model.requests[0].messages[-1]
    assert sent.content == "What is in this picture?" and sent.attachments == (image,)
    assert sent.attachments[0].data == image.data
    assert result.messages[0].content == "What is in this picture?"
    assert result.output == "A red square."


def test_a_tool_may_return_an_image_that_the_model_then_sees() -> None:
    picture = Image.from_bytes(png(seed=7), name="plot.png")

    def plot() -> object:
        """Draw the plot."""
        return ["the plot", picture]

    model = ScriptedModel([ToolCall("plot", {}), "It rises."])
    result = Agent(model=model, tools=[plot]).run_sync("Plot it")
    tool_message = model.requests[1].messages[-1]
    assert tool_message.role == "tool" and tool_message.attachments == (picture,)
    assert tool_message.content == "the plot\n[image plot.png (image/png, 81 bytes)]"
    assert result.steps[0].results[0].attachments == (picture,)


def test_a_text_only_model_refuses_an_image_before_any_call() -> None:
    model = ScriptedModel(["never"], accepts=())
    model.name = "local-smollm2"
    with pytest.raises(UserError, match=r"model reactloop.testing:local-smollm2 cannot see "
                                        r"images .*use a model that can"):
        Agent(model=model).run_sync(["What is this?", Image.from_bytes(png())])
    assert model.requests == []


def test_a_text_only_model_gets_a_pdfs_text_and_the_trace_says_so() -> None:
    doc = Document.from_bytes(pdf("Invoice total: 42 EUR", "Due in 30 days"), name="inv.pdf")
    model = ScriptedModel(["42 EUR"], accepts=())

    async def run() -> list[object]:
        return [e async for e in Agent(model=model).stream(["What is the total?", doc])]

    import asyncio

    events = asyncio.run(run())
    sent = model.requests[0].messages[-1]
    assert sent.attachments == ()
    assert sent.content == ('What is the total?\n\n<document name="inv.pdf" '
                            'type="application/pdf">\nInvoice total: 42 EUR\n\nDue in 30 days\n'
                            "</document>")
    told = [e for e in events if getattr(e, "name", None) == "attachment_as_text"]
    assert len(told) == 1 and told[0].data["name"] == "inv.pdf"  # type: ignore[attr-defined]
    # the stored history keeps the PDF itself (another model may read it natively)
    end = events[-1]
    assert end.result.messages[0].attachments == (doc,)  # type: ignore[attr-defined]


def test_a_corrupt_pdf_for_a_text_only_model_is_refused_before_any_call() -> None:
    bad = pdf("x").replace(b"/Type /Pages", b"/Type /Pxxxx").replace(b"xref", b"xxxx")
    bad = bad.replace(b"obj", b"ojb")
    model = ScriptedModel(["never"], accepts=())
    with pytest.raises(UserError, match=r"bad.pdf .*cannot be read as a PDF"):
        Agent(model=model).run_sync(["Summarise", Document.from_bytes(bad, name="bad.pdf")])
    assert model.requests == []


def test_a_text_document_goes_as_text_to_every_model() -> None:
    model = ScriptedModel(["ok"])
    Agent(model=model).run_sync(["Read", Document.from_bytes(b"a,b\n1,2\n", "text/csv")])
    assert model.requests[0].messages[-1].content.endswith(
        '<document type="text/csv">\na,b\n1,2\n\n</document>')


def test_the_request_prefix_stays_byte_stable_with_attachments_in_the_history() -> None:
    doc = Document.from_bytes(pdf("Total: 42"), name="a.pdf")
    image = Image.from_bytes(png())

    def look() -> object:
        """Look."""
        return image

    for accepts in (None, ()):
        model = ScriptedModel([ToolCall("look", {}), ToolCall("look", {}), "done"],
                              accepts=accepts)
        Agent(model=model, tools=[look]).run_sync(["Go", doc])
        dumps = [json.dumps([m.to_dict() for m in r.messages]) for r in model.requests]
        assert dumps[1].startswith(dumps[0][:-1]) and dumps[2].startswith(dumps[1][:-1])


def test_a_saved_run_keeps_each_attachment_once_and_resumes_with_its_bytes() -> None:
    image = Image.from_bytes(png(size=50_000))
    model = ScriptedModel(["first", "second"])
    agent = Agent(model=model)
    first = agent.run_sync(["Look", image])
    again = agent.resume_sync(first.save(), ["And this one again?", image])
    saved = again.save()
    assert saved.count("iVBOR") == 1  # the PNG's base64, once
    assert len(saved) < 2 * 50_000
    data = json.loads(saved)
    assert list(data["attachments"]) == [image.sha256]
    assert all("data" not in a for m in data["messages"] for a in m.get("attachments", ()))
    later = ScriptedModel(["third"])
    Agent(model=later).resume_sync(saved, "and now?")
    sent = later.requests[0].messages
    assert sent[0].attachments[0].data == image.data and sent[2].attachments[0].data == image.data


def test_a_message_serialises_attachments_by_reference() -> None:
    image = Image.from_bytes(png())
    m = Message("user", "hi", attachments=(image,))
    d = m.to_dict()
    assert d["attachments"] == [image.ref()]
    bare = message_from_dict(d)
    assert bare.attachments[0].sha256 == image.sha256 and not bare.attachments[0].available
    assert message_from_dict(d, {image.sha256: png()}).attachments[0].data == png()


def test_token_counting_estimates_images_and_pdf_pages() -> None:
    counter = TokenCounter(lambda text: len(text))
    plain = counter.message(Message.user("hi"))
    small = Message("user", "hi", attachments=(Image.from_bytes(png(100, 75)),))
    large = Message("user", "hi", attachments=(Image.from_bytes(png(2000, 1)),
                                               Image.from_url("https://example.com/a.jpg")))
    two_pages = Message("user", "hi", attachments=(Document.from_bytes(pdf("a", "b")),))
    assert counter.message(small) - plain == 10  # 100 x 75 / 750
    assert counter.message(large) - plain == 2 + 1_600
    assert counter.message(two_pages) - plain == 4_000


def test_function_model_sees_attachments_too() -> None:
    seen: list[ModelRequest] = []

    def fn(request: ModelRequest) -> str:
        seen.append(request)
        return "ok"

    result = Agent(model=FunctionModel(fn)).run_sync(["x", Image.from_bytes(png())])
    assert result.state is RunState.COMPLETED and seen[0].messages[-1].attachments


def test_from_path_errors_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"cannot read .*missing\.png"):
        Image.from_path(tmp_path / "missing.png")
    if os.geteuid() != 0:
        locked = tmp_path / "locked.png"
        locked.write_bytes(png())
        locked.chmod(0)
        with pytest.raises(UserError, match="cannot read"):
            Image.from_path(locked)


def test_events_and_results_carry_references_never_bytes() -> None:
    picture = Image.from_bytes(png(size=5_000), name="plot.png")

    def plot() -> object:
        """Draw."""
        return ["drawn", picture]

    import asyncio

    async def run() -> list[object]:
        agent = Agent(model=ScriptedModel([ToolCall("plot", {}), "done"]), tools=[plot])
        return [e async for e in agent.stream(["Plot", Image.from_bytes(png(size=5_000))])]

    events = asyncio.run(run())
    dumped = json.dumps([e.to_dict() for e in events], default=str)  # type: ignore[attr-defined]
    assert "iVBOR" not in dumped and picture.sha256 in dumped
    assert len(dumped) < 5_000 * 2


def test_traces_record_part_types_and_sizes_never_bytes() -> None:
    pytest.importorskip("opentelemetry.sdk")
    from reactloop.testing import capture_spans

    image = Image.from_bytes(png(size=3_000), name="shot.png")
    doc = Document.from_bytes(pdf("Total: 42"), name="inv.pdf")
    with capture_spans(include_content=True) as spans:
        Agent(model=ScriptedModel(["ok"])).run_sync(["Look", image, doc])
    (chat,) = [s for s in spans if s.name.startswith("chat ")]
    attrs = dict(chat.attributes or {})
    assert list(attrs["reactloop.request.attachment.types"]) == ["image/png", "application/pdf"]
    assert list(attrs["reactloop.request.attachment.sizes"]) == [image.size, doc.size]
    messages = json.loads(str(attrs["gen_ai.input.messages"]))
    assert messages[0]["parts"][1] == {"type": "file", "modality": "image",
                                       "mime_type": "image/png",
                                       "file_id": f"sha256:{image.sha256}", "size": image.size}
    assert "iVBOR" not in json.dumps({k: str(v) for k, v in attrs.items()})


def test_a_tools_picture_for_a_text_only_model_becomes_a_line_and_an_event() -> None:
    picture = Image.from_bytes(png(seed=2), name="plot.png")

    def plot() -> object:
        """Draw."""
        return picture

    import asyncio

    model = ScriptedModel([ToolCall("plot", {}), "I cannot see it."], accepts=())

    async def run() -> list[object]:
        return [e async for e in Agent(model=model, tools=[plot]).stream("Plot it")]

    events = asyncio.run(run())
    sent = model.requests[1].messages[-1]
    assert sent.attachments == ()
    assert sent.content == ("[image plot.png (image/png, 81 bytes)]\n\n([image plot.png "
                            "(image/png, 81 bytes)] left out: model reactloop.testing:scripted "
                            "cannot take image/png)")
    omitted = [e for e in events if getattr(e, "name", None) == "attachment_omitted"]
    assert len(omitted) == 1


def test_a_fallback_model_takes_what_all_its_models_take() -> None:
    from reactloop import FallbackModel

    seeing, blind = ScriptedModel(["a"]), ScriptedModel(["b"], accepts=())
    assert FallbackModel(seeing, blind).accepts == frozenset()
    assert FallbackModel(seeing, ScriptedModel(["c"])).accepts == seeing.accepts
    with pytest.raises(UserError, match="cannot see images"):
        Agent(model=FallbackModel(seeing, blind)).run_sync(["x", Image.from_bytes(png())])
