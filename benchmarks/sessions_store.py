"""Session stores side by side: SQLite and PostgreSQL, as a session writes.

    python benchmarks/sessions_store.py                       # starts a throw-away PostgreSQL
    python benchmarks/sessions_store.py --messages 5000 --json out.json
    python benchmarks/sessions_store.py --postgres postgresql://user:pw@host/db   # your server

Without ``--postgres`` a cluster is started for the run (``initdb`` + ``pg_ctl`` on 127.0.0.1,
as ``tests/_postgres.py`` does; fsync left on, the server's defaults otherwise) and removed
afterwards. Figures, for each store:

- **append latency**: one writer appends one message at a time, as a session's write-ahead
  does (a ~400-byte tool result; each append is one committed transaction): mean, median
  and 99th percentile per message;
- **messages/s**: the same, messages per second of wall time for one writer, and for four
  writers on four sessions at once (threads in one process; SQLite's writers share one
  file lock, PostgreSQL's have a connection each);
- **send overhead**: what a ``send`` adds around the run on a 40-message session: take the
  session's writer lock, read the history under it, release it.

SQLite is measured as configured by default (WAL, ``synchronous=NORMAL``: committed data
survives a process crash) and with ``durable=True`` (``synchronous=FULL``: an fsync per
commit, it survives power loss); PostgreSQL commits are durable by default
(``synchronous_commit=on``), so compare it with the durable SQLite row. The "async commit"
row sets ``synchronous_commit=off`` through the URL
(``?options=-csynchronous_commit%3Doff``): a writer's crash still loses nothing, a server
crash may lose the last fraction of a second — the guarantee of SQLite's default.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _message(i: int) -> Any:
    from reactloop import Message

    return Message.tool(f"call_{i}", "fetch", json.dumps({"row": i, "text": "x" * 360}))


def measure_append(store: Any, n: int) -> dict[str, float]:
    """One writer appending ``n`` messages one by one to a new session."""
    session_id = uuid.uuid4().hex
    messages = [_message(i) for i in range(n)]
    latencies = []
    with store.writer(session_id) as writer:
        writer.append([messages[0]])  # creates the session; not timed
        started = time.perf_counter()
        for m in messages[1:]:
            t = time.perf_counter()
            writer.append([m])
            latencies.append(time.perf_counter() - t)
        wall = time.perf_counter() - started
    assert len(store.get(session_id)) == n, "the store lost messages"
    latencies.sort()
    return {"append_mean_us": statistics.fmean(latencies) * 1e6,
            "append_p50_us": latencies[len(latencies) // 2] * 1e6,
            "append_p99_us": latencies[int(len(latencies) * 0.99)] * 1e6,
            "messages_per_s": (n - 1) / wall}


def measure_parallel(make_store: Callable[[], Any], n: int, writers: int = 4
                     ) -> dict[str, float]:
    """``writers`` threads, each appending ``n`` messages to its own session."""
    stores = [make_store() for _ in range(writers)]
    ids = [uuid.uuid4().hex for _ in range(writers)]
    barrier = threading.Barrier(writers + 1)

    def write(store: Any, session_id: str) -> None:
        with store.writer(session_id) as w:
            barrier.wait()
            for i in range(n):
                w.append([_message(i)])

    threads = [threading.Thread(target=write, args=(s, sid)) for s, sid in zip(stores, ids,
                                                                                 strict=True)]
    for t in threads:
        t.start()
    barrier.wait()
    started = time.perf_counter()
    for t in threads:
        t.join()
    wall = time.perf_counter() - started
    for store, sid in zip(stores, ids, strict=True):
        assert len(store.get(sid)) == n, "the store lost messages"
    return {"parallel_messages_per_s": writers * n / wall}


def measure_send_overhead(store: Any, rounds: int = 200) -> dict[str, float]:
    """Take the writer lock, read a 40-message history under it, release: per send."""
    session_id = uuid.uuid4().hex
    store.append(session_id, [_message(i) for i in range(40)])
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        with store.writer(session_id) as w:
            assert len(w.get()) == 40
        times.append(time.perf_counter() - t)
    return {"send_overhead_us": statistics.median(times) * 1e6}


def measure(name: str, make_store: Callable[[], Any], n: int) -> dict[str, Any]:
    store = make_store()
    try:
        measure_append(store, min(n, 50))  # warm-up: connections, caches, first pages
        out: dict[str, Any] = {"store": name, "messages": n}
        out.update(measure_append(store, n))
        out.update(measure_parallel(make_store, max(n // 4, 10)))
        out.update(measure_send_overhead(store))
        return out
    finally:
        store.close()


@contextmanager
def postgres(url: str | None) -> Iterator[str]:
    """``url``, or a throw-away cluster's fresh database."""
    if url:
        yield url
        return
    sys.path.insert(0, str(ROOT / "tests"))
    import _postgres  # tests/_postgres.py: initdb + pg_ctl, as root via the postgres user

    reason = _postgres.missing()
    if reason:
        raise SystemExit(f"sessions_store.py: {reason} (or pass --postgres URL)")
    with _postgres.cluster(fast=False) as base:
        yield _postgres.create_database(base, "bench")


def run(n: int, postgres_url: str | None) -> list[dict[str, Any]]:
    from reactloop.sessions import PostgresStore, SQLiteStore

    folder = Path(tempfile.mkdtemp(prefix="reactloop-bench-"))
    results = []
    try:
        for name, durable in (("sqlite", False), ("sqlite durable", True)):
            path = folder / f"{name.replace(' ', '-')}.sqlite3"
            results.append(measure(name, lambda p=path, d=durable: SQLiteStore(p, durable=d),
                                   n))
        with postgres(postgres_url) as url:
            results.append(measure("postgres", lambda: PostgresStore(url), n))
            relaxed = url + ("&" if "?" in url else "?") + "options=-csynchronous_commit%3Doff"
            results.append(measure("postgres async commit", lambda: PostgresStore(relaxed), n))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return results


def table(results: list[dict[str, Any]]) -> str:
    rows = [("store", "append mean µs", "p50 µs", "p99 µs", "msg/s (1 writer)",
             "msg/s (4 writers)", "send overhead µs")]
    for r in results:
        rows.append((r["store"], f"{r['append_mean_us']:.0f}", f"{r['append_p50_us']:.0f}",
                     f"{r['append_p99_us']:.0f}", f"{r['messages_per_s']:.0f}",
                     f"{r['parallel_messages_per_s']:.0f}", f"{r['send_overhead_us']:.0f}"))
    lines = ["| " + " | ".join(row) + " |" for row in rows]
    lines.insert(1, "|" + "---|" * len(rows[0]))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=2000, help="messages per writer")
    parser.add_argument("--postgres", metavar="URL",
                        help="an existing database (default: start a throw-away cluster)")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    args = parser.parse_args()
    results = run(args.messages, args.postgres)
    print(table(results))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
