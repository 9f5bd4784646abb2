"""The README's command-line examples, executed line by line in a shell.

The model they configure (``openai:gpt-4o-mini``) is served by a loopback server replaying
streamed answers (the config's ``base_url`` points there), so nothing leaves the machine.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from _cli import cli_env
from _recorded_server import Reply, recorded_server

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()


def _cli_block() -> list[str]:
    blocks = re.findall(r"```bash\n(.*?)```", README, flags=re.S)
    (block,) = [b for b in blocks if "reactloop logs" in b]
    return [line for line in block.splitlines() if line.strip()]


def _sse(text: str) -> Reply:
    chunk = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-test",
             "choices": [{"index": 0, "delta": {"role": "assistant", "content": text},
                          "finish_reason": None}]}
    end = {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    body = f"data: {json.dumps(chunk)}\n\ndata: {json.dumps(end)}\n\ndata: [DONE]\n\n"
    return Reply(200, body.encode(), "text/event-stream")


def test_readme_command_line_examples_run(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    (work / "notes.md").write_text("- the meeting moved to Tuesday\n- bring the slides\n")
    (work / "question.txt").write_text("What is 2 + 2?\n")
    lines = _cli_block()
    with recorded_server() as server:
        env = cli_env(home)
        config = Path(env["XDG_CONFIG_HOME"]) / "reactloop" / "config.toml"
        config.parent.mkdir(parents=True)
        config.write_text(f'base_url = "{server.url}/v1"\n')
        server.queue(_sse("17 + 25 = 42"), _sse("84"), _sse("Meeting on Tuesday; slides."),
                     _sse("4"))
        outputs = []
        for line in lines:
            proc = subprocess.run(["bash", "-c", line], cwd=work, env=env, text=True,
                                  input="sk-readme-0123456789\n" if "keys set" in line else "",
                                  capture_output=True, timeout=120, check=False)
            assert proc.returncode == 0, f"{line}\n{proc.stderr}"
            outputs.append(proc)
    out = {line.split("#")[0].strip(): p for line, p in zip(lines, outputs, strict=True)}
    assert out['reactloop run "What is 17 + 25?"'].stdout == "17 + 25 = 42\n"
    assert (work / "answer.txt").read_text() == "4\n"
    first, again, summary, stdin_task = server.requests
    assert all(r.headers["authorization"] == "Bearer sk-readme-0123456789"
               for r in server.requests)  # the stored key reached the model
    assert first.body["model"] == "gpt-4o-mini"
    contents = [m["content"] for m in again.body["messages"] if m["role"] != "system"]
    assert contents == ["What is 17 + 25?", "17 + 25 = 42", "And that times 2?"]  # -c
    assert "summarise this\n\n- the meeting moved to Tuesday" in \
        summary.body["messages"][-1]["content"]
    assert stdin_task.body["messages"][-1]["content"] == "What is 2 + 2?"
    logs = out["reactloop logs -n 5"].stdout
    assert logs.count("completed") == 4 and "summarise this" in logs
    shown = out["reactloop logs show"].stdout
    assert "What is 2 + 2?" in shown and "answer · completed" in shown
    assert "openai:<name>" in out["reactloop models"].stdout
