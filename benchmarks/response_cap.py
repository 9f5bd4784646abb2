"""Peak memory while a loopback server streams a huge response into the OpenAI adapter.

A server that ignores ``max_tokens`` streams ``--mb`` megabytes of text (100 by default) as
Chat Completions chunks of ``--delta`` characters; the real ``openai`` SDK reads them through
:class:`reactloop.models.openai.OpenAIModel`. With the default size cap (1 MiB of text plus
arguments when ``max_tokens`` is unset) the adapter stops reading at the cap and the response
ends with ``finish_reason="length"``; ``--cap N`` sets ``max_response_chars`` instead (a cap
above the response size shows what one whole response costs). ``--agent`` streams through
``Agent.stream`` (the loop, its events and the history) instead of the adapter alone.

Prints the characters received, the finish reason, the peak of traced Python allocations
(tracemalloc) and the process's peak RSS. The server runs in a child process, so the RSS is
the client's alone. A functional check, not a timing: the figures are memory, and hold on a
loaded machine too.

    python benchmarks/response_cap.py                      # 100 MB offered, default cap
    python benchmarks/response_cap.py --mb 20 --cap 30000000 --delta 64   # one whole 20 MB reply
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import resource
import socket
import sys
import tracemalloc
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MB = 1_000_000


def _serve(port_out: Any, total: int, delta: int) -> None:
    """The misbehaving server: chunked SSE, generated on the fly (it holds no response)."""
    piece = ("x" * (delta - 1)) + " "

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            event = f"data: {json.dumps({'choices': [{'index': 0, 'delta': {'content': piece}}]})}\n\n"
            batch = event * max(1, 65536 // len(event))  # one write per ~64 KB
            per_batch = len(batch) // len(event) * delta
            try:
                sent = 0
                while sent < total:
                    self._chunk(batch.encode())
                    sent += per_batch
                end = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
                self._chunk(f"data: {json.dumps(end)}\n\ndata: [DONE]\n\n".encode())
                self.wfile.write(b"0\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client stopped reading at its cap

        def _chunk(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    port_out.put(server.server_address[1])
    server.serve_forever()


def _rss_mb() -> float:
    # ru_maxrss is in kilobytes on Linux
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def _adapter(model: Any) -> tuple[int, str | None]:
    from reactloop.messages import Message
    from reactloop.models import ModelRequest, ModelResponse, TextDelta

    request = ModelRequest("", (Message.user("Write forever."),))
    received, finish = 0, None
    async for item in model.stream(request):
        if isinstance(item, TextDelta):
            received += len(item.text)  # the consumer keeps nothing, as a UI forwarding deltas
        elif isinstance(item, ModelResponse):
            finish = item.finish_reason
            received = len(item.text or "")
    await model.aclose()
    return received, finish


async def _agent(model: Any) -> tuple[int, str | None]:
    from reactloop import Agent
    from reactloop.events import ModelResponseEvent

    received, finish = 0, None
    async for event in Agent(model=model, max_iterations=1).stream("Write forever."):
        if isinstance(event, ModelResponseEvent):
            received, finish = len(event.response.text or ""), event.response.finish_reason
    await model.aclose()
    return received, finish


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=100, help="megabytes the server offers")
    parser.add_argument("--delta", type=int, default=16, help="characters per streamed chunk")
    parser.add_argument("--cap", type=int, default=None, help="max_response_chars (default: "
                        "the adapter's, 1 MiB without max_tokens)")
    parser.add_argument("--agent", action="store_true", help="stream through Agent.stream")
    parser.add_argument("--no-tracemalloc", action="store_true", help="RSS only (faster)")
    args = parser.parse_args()

    ports: Any = multiprocessing.Queue()
    server = multiprocessing.Process(target=_serve, args=(ports, int(args.mb * MB), args.delta),
                                     daemon=True)
    server.start()
    port = ports.get(timeout=30)
    with socket.create_connection(("127.0.0.1", port), timeout=5):
        pass

    from reactloop.models.openai import OpenAIModel

    cap_option = {} if args.cap is None else {"max_response_chars": args.cap}
    model = OpenAIModel("huge", base_url=f"http://127.0.0.1:{port}/v1", api_key="none",
                        timeout=600, **cap_option)
    base_rss = _rss_mb()
    if not args.no_tracemalloc:
        tracemalloc.start()
    received, finish = asyncio.run((_agent if args.agent else _adapter)(model))
    traced = tracemalloc.get_traced_memory()[1] / MB if tracemalloc.is_tracing() else None
    tracemalloc.stop()
    server.terminate()

    cap = f"{args.cap:,}" if args.cap else "default (1 MiB without max_tokens)"
    print(f"offered        {args.mb:g} MB in chunks of {args.delta} characters")
    print(f"cap            {cap}; path: {'Agent.stream' if args.agent else 'adapter'}")
    print(f"received       {received:,} characters, finish_reason={finish!r}")
    if traced is not None:
        print(f"peak traced    {traced:.1f} MB (tracemalloc, Python allocations while streaming)")
    print(f"peak RSS       {_rss_mb():.1f} MB (process; {base_rss:.1f} MB before streaming)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
