"""``reactloop run -a FILE`` and chat's ``/attach PATH`` (issue 26), in real processes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from _cli import cli_env, reactloop
from _files import pdf, png


def _files(tmp_path: Path) -> tuple[Path, Path]:
    shot, doc = tmp_path / "shot.png", tmp_path / "invoice.pdf"
    shot.write_bytes(png())
    doc.write_bytes(pdf("Invoice total: 42 EUR"))
    return shot, doc


def test_run_attach_sends_pictures_and_documents_with_the_task(tmp_path: Path) -> None:
    shot, doc = _files(tmp_path)
    proc = reactloop(tmp_path, "run", "-q", "--agent", "attach_agents:seeing", "-a", str(shot),
                     "--attach", str(doc), "What is this?")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (f"What is this? || image image/png {len(png())} | "
                           f"document application/pdf {doc.stat().st_size}\n")


def test_attach_dash_reads_the_bytes_from_stdin(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "reactloop", "run", "-q", "--agent",
                           "attach_agents:seeing", "-a", "-", "Describe it"],
                          input=png(), capture_output=True, timeout=600, check=False,
                          env=cli_env(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.decode() == f"Describe it || image image/png {len(png())}\n"


def test_a_text_only_model_refuses_a_picture_in_one_line(tmp_path: Path) -> None:
    shot, _ = _files(tmp_path)
    proc = reactloop(tmp_path, "run", "--agent", "attach_agents:blind", "-a", str(shot),
                     "What is this?")
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert "model reactloop.testing:text-only cannot see images" in proc.stderr
    assert "use a model that can" in proc.stderr


def test_a_text_only_model_reads_a_pdfs_text_and_verbose_shows_it(tmp_path: Path) -> None:
    _, doc = _files(tmp_path)
    proc = reactloop(tmp_path, "run", "-v", "--agent", "attach_agents:blind", "-a", str(doc),
                     "What is the total?")
    assert proc.returncode == 0, proc.stderr
    assert "Invoice total: 42 EUR" in proc.stdout and proc.stdout.endswith(" || no parts\n")
    assert "<document name=\\\"invoice.pdf\\\"" in proc.stderr  # the request, as sent


def test_bad_files_are_one_line_each(tmp_path: Path) -> None:
    fake = tmp_path / "fake.png"
    fake.write_bytes(b"not a picture at all")
    big = tmp_path / "big.pdf"
    with big.open("wb") as f:
        f.truncate(50 * 1024 * 1024)
    for path, expected in ((fake, "fake.png is not an image"),
                           (big, "big.pdf is 50.0 MiB; an attachment may be at most"),
                           (tmp_path / "missing.pdf", "cannot read"),
                           (tmp_path, "is a folder")):
        proc = reactloop(tmp_path, "run", "--agent", "attach_agents:seeing", "-a", str(path),
                         "hi")
        assert proc.returncode != 0 and proc.stderr.count("\n") == 1, proc.stderr
        assert expected in proc.stderr and "Traceback" not in proc.stderr


def test_chat_attach_sends_the_file_with_the_next_message(tmp_path: Path) -> None:
    shot, _ = _files(tmp_path)
    proc = reactloop(tmp_path, "chat", "--no-log", "--agent", "attach_agents:seeing",
                     stdin=f"/attach {tmp_path / 'nope.png'}\n/attach {shot}\nWhat is it?\n"
                           "And now?\n")
    assert proc.returncode == 0, proc.stderr
    assert f"What is it? || image image/png {len(png())}" in proc.stdout
    assert "And now? || no parts" in proc.stdout  # sent once, not again
    assert "cannot read" in proc.stderr and "attached [image shot.png" in proc.stderr


def test_eval_cases_may_carry_attachments(tmp_path: Path) -> None:
    shot, doc = _files(tmp_path)
    (tmp_path / "cases.yaml").write_text(f"""
agent: attach_agents:seeing
cases:
  - name: picture and pdf
    input: What are these?
    attachments: [{shot.name}, {doc.name}]
    output: {{contains: "image image/png {len(png())} | document application/pdf"}}
  - name: missing file
    input: hi
""")
    proc = reactloop(tmp_path, "eval", str(tmp_path / "cases.yaml"), "--json",
                     str(tmp_path / "out.json"))
    assert proc.returncode == 0, proc.stderr + proc.stdout
    (tmp_path / "bad.yaml").write_text("cases:\n  - name: x\n    input: hi\n"
                                       "    attachments: [nope.png]\n")
    bad = reactloop(tmp_path, "eval", str(tmp_path / "bad.yaml"))
    assert bad.returncode != 0 and bad.stderr.count("\n") == 1
    assert "attachments: cannot read" in bad.stderr and "nope.png" in bad.stderr


def test_sessions_show_names_the_attachments(tmp_path: Path) -> None:
    shot, _ = _files(tmp_path)
    store = str(tmp_path / "s.sqlite3")
    from reactloop import Agent, Image
    from reactloop.testing import ScriptedModel

    Agent(model=ScriptedModel(["seen"])).session("pics", store=store).send_sync(
        ["Look", Image.from_path(shot)])
    proc = reactloop(tmp_path, "sessions", "show", "pics", "--store", store)
    assert proc.returncode == 0, proc.stderr
    assert f"[image shot.png (image/png, {len(png())} bytes)]" in proc.stdout + proc.stderr
