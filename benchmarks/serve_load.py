"""``reactloop serve`` under load: many concurrent SSE sessions on one real server.

    python benchmarks/serve_load.py [--sessions 200] [--rounds 3] [--json PATH]

Starts ``reactloop serve`` in a subprocess on 127.0.0.1 (a free port, a fresh SQLite store)
serving this module's ``agent``: a fake model that calls one tool, then streams a 20-word
answer — 2 iterations, ~32 events per run, 4 stored messages. Each round opens ``--sessions``
sessions at once and sends one message to each, all concurrently, with a minimal asyncio
HTTP/1.1 client (so the figures are the server's, not a client library's). Reported, as the
median over rounds:

- **events/s**: SSE events received by all clients / wall time of the round;
- **runs/s**: completed runs / wall time of the round;
- **time to first event** p50 / p99: from sending the POST to receiving the first event
  (``run_start``), over every session of every round;
- **time to run_end** p50 / p99: from sending the POST to the last event.

Every stream is checked (ends with ``run_end``, state ``completed``, the answer is its own);
a dropped or mixed-up run makes the command exit non-zero.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
WORDS = 20


def _build_agent() -> Any:
    from reactloop import Agent, ModelResponse, ToolCall, tool
    from reactloop.testing import FunctionModel

    @tool
    def echo(text: str) -> str:
        """Return the text.

        Args:
            text: anything.
        """
        return text

    def reply(request: Any) -> ModelResponse:
        last = request.messages[-1]
        if last.role == "user":
            return ModelResponse(tool_calls=[ToolCall("echo", {"text": last.content})])
        return ModelResponse(text=" ".join([last.content, *(["word"] * (WORDS - 1))]))

    model = FunctionModel(reply)
    model.requests = _NoRecord()  # a long benchmark must not keep every request
    return Agent(model=model, tools=[echo], name="serve-load")


class _NoRecord(list):  # type: ignore[type-arg]
    def append(self, item: Any) -> None:
        pass


agent = _build_agent() if __name__ != "__main__" else None
"""What ``reactloop serve --agent serve_load:agent`` serves."""


# -- the server ------------------------------------------------------------------------------

class Server:
    def __init__(self, store: Path) -> None:
        env = {k: v for k, v in os.environ.items() if k != "REACTLOOP_SERVE_TOKEN"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "reactloop", "serve", "--agent", "serve_load:agent",
             "--port", "0", "--store", str(store)],
            cwd=HERE, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.port = 0
        ready = threading.Event()

        def read() -> None:
            assert self.proc.stdout is not None
            for line in self.proc.stdout:
                found = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
                if found and not self.port:
                    self.port = int(found.group(1))
                    ready.set()
            ready.set()

        threading.Thread(target=read, daemon=True).start()
        if not ready.wait(120) or not self.port:
            self.stop()
            raise SystemExit("reactloop serve did not start")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()


# -- a minimal HTTP/1.1 client ---------------------------------------------------------------

async def _request(port: int, method: str, path: str, body: bytes = b""
                   ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, int, dict[str, str]]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    head = (f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
            "Accept: text/event-stream\r\nConnection: close\r\n\r\n").encode()
    writer.write(head + body)
    await writer.drain()
    status = int((await reader.readline()).split()[1])
    headers: dict[str, str] = {}
    while (line := await reader.readline()) not in (b"\r\n", b""):
        key, _, value = line.decode().partition(":")
        headers[key.strip().lower()] = value.strip()
    return reader, writer, status, headers


async def _body_chunks(reader: asyncio.StreamReader, headers: dict[str, str]):  # type: ignore[no-untyped-def]
    if headers.get("transfer-encoding") == "chunked":
        while True:
            size = int((await reader.readline()).strip(), 16)
            if size == 0:
                return
            yield await reader.readexactly(size)
            await reader.readexactly(2)
    else:
        yield await reader.read()


async def _create(port: int) -> str:
    reader, writer, status, headers = await _request(port, "POST", "/api/sessions", b"{}")
    body = b"".join([c async for c in _body_chunks(reader, headers)])
    writer.close()
    assert status == 201, status
    return str(json.loads(body)["id"])


async def _run(port: int, session_id: str, text: str) -> dict[str, Any]:
    started = time.perf_counter()
    reader, writer, status, headers = await _request(
        port, "POST", f"/api/sessions/{session_id}/messages", json.dumps({"text": text}).encode())
    assert status == 200, status
    first = None
    events: list[tuple[str, str]] = []
    buffer = b""
    async for chunk in _body_chunks(reader, headers):
        buffer += chunk
        while b"\n\n" in buffer:
            block, buffer = buffer.split(b"\n\n", 1)
            if block.startswith(b"event:"):
                kind, _, data = block.decode().partition("\ndata: ")
                events.append((kind[6:].strip(), data))
                if first is None:
                    first = time.perf_counter() - started
    writer.close()
    return {"first": first, "end": time.perf_counter() - started, "events": events,
            "text": text}


def _check(run: dict[str, Any]) -> None:
    kinds = [k for k, _ in run["events"]]
    if not kinds or kinds[-1] != "run_end":
        raise SystemExit(f"a stream did not end with run_end: {kinds[-3:]}")
    result = json.loads(run["events"][-1][1])["result"]
    if result["state"] != "completed" or not result["output"].startswith(run["text"] + " "):
        raise SystemExit(f"a run was mixed up or failed: {result['state']} {result['output']!r}")


async def _round(port: int, sessions: int, index: int) -> dict[str, Any]:
    ids = await asyncio.gather(*(_create(port) for _ in range(sessions)))
    t0 = time.perf_counter()
    runs = await asyncio.gather(*(_run(port, sid, f"round{index}-session{i}")
                                  for i, sid in enumerate(ids)))
    wall = time.perf_counter() - t0
    for run in runs:
        _check(run)
    n_events = sum(len(r["events"]) for r in runs)
    return {"wall": wall, "events": n_events, "runs": len(runs),
            "first": [r["first"] for r in runs], "end": [r["end"] for r in runs]}


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", dest="json_path", help="also write the figures here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(Path(tmp) / "sessions.sqlite3")
        try:
            asyncio.run(_round(server.port, 10, -1))  # warm-up
            rounds = [asyncio.run(_round(server.port, args.sessions, i))
                      for i in range(args.rounds)]
        finally:
            server.stop()
    firsts = [f for r in rounds for f in r["first"]]
    ends = [e for r in rounds for e in r["end"]]
    figures = {
        "sessions": args.sessions, "rounds": args.rounds,
        "events_per_run": rounds[0]["events"] / rounds[0]["runs"],
        "events_per_s": statistics.median(r["events"] / r["wall"] for r in rounds),
        "runs_per_s": statistics.median(r["runs"] / r["wall"] for r in rounds),
        "first_event_p50_ms": 1000 * _pct(firsts, 0.50),
        "first_event_p99_ms": 1000 * _pct(firsts, 0.99),
        "run_end_p50_ms": 1000 * _pct(ends, 0.50),
        "run_end_p99_ms": 1000 * _pct(ends, 0.99),
        "cpus": os.cpu_count(),
    }
    print(f"reactloop serve, {args.sessions} concurrent SSE sessions x {args.rounds} rounds "
          f"({figures['events_per_run']:.0f} events per run), {os.cpu_count()} CPUs")
    print("| events/s | runs/s | first event p50 | p99 | run_end p50 | p99 |")
    print("|---:|---:|---:|---:|---:|---:|")
    print(f"| {figures['events_per_s']:,.0f} | {figures['runs_per_s']:,.0f} "
          f"| {figures['first_event_p50_ms']:.0f} ms | {figures['first_event_p99_ms']:.0f} ms "
          f"| {figures['run_end_p50_ms']:.0f} ms | {figures['run_end_p99_ms']:.0f} ms |")
    if args.json_path:
        Path(args.json_path).write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
