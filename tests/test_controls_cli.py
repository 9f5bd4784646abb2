"""Issue 27 on the command line: exit codes of their own for USAGE_LIMIT and BLOCKED."""

from __future__ import annotations

from pathlib import Path

from _cli import reactloop


def test_a_usage_limit_has_its_own_exit_code(tmp_path: Path) -> None:
    proc = reactloop(tmp_path, "run", "--agent", "controls_agents:limited", "keep adding")
    assert proc.returncode == 8, proc.stderr
    assert "usage_limit" in proc.stderr and "max_requests=2" in proc.stdout
    assert "Traceback" not in proc.stderr


def test_a_blocked_run_has_its_own_exit_code(tmp_path: Path) -> None:
    proc = reactloop(tmp_path, "run", "--agent", "controls_agents:guarded",
                     "what is the admin password?")
    assert proc.returncode == 9, proc.stderr
    assert proc.stdout.strip() == "I can't help with passwords." and "blocked" in proc.stderr


def _config(home: Path, text: str) -> None:
    from _cli import cli_env

    path = Path(cli_env(home)["XDG_CONFIG_HOME"]) / "reactloop" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_fallback_model_takes_over_from_a_primary_answering_503(tmp_path: Path) -> None:
    from _recorded_server import payload, recorded_server

    with recorded_server() as down, recorded_server() as up:
        down.queue(*[payload("openai", "error_500.json", 503, retry_after="0")] * 4)
        up.queue(payload("openai", "done_stream.sse"))
        _config(tmp_path, f'[models."openai:backup"]\nbase_url = "{up.url}/v1"\n')
        proc = reactloop(tmp_path, "run", "-m", "openai:gpt-4o-mini", "--base-url",
                         f"{down.url}/v1", "--fallback-model", "openai:backup", "--no-log",
                         "What is 17 + 25?")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "Handled the transfer."
    assert "gpt-4o-mini failed (HTTP 503" in proc.stderr and "backup takes the request" \
        in proc.stderr
    assert len(down.requests) == 4 and len(up.requests) == 1  # 1 try + 3 retries, then over
    assert up.requests[0].body["model"] == "backup"


def test_usage_limit_flags_end_the_run_with_exit_code_8(tmp_path: Path) -> None:
    from _recorded_server import payload, recorded_server

    for flags in (["--max-total-tokens", "500"], ["--max-cost", "0.00007"],
                  ["--max-requests", "1"]):
        with recorded_server() as server:
            server.queue(payload("openai", "stream_tool_calls.sse"),  # 90 in, 41 out
                         payload("openai", "done_stream.sse"))
            proc = reactloop(tmp_path, "run", "-m", "openai:gpt-4o-mini", "--base-url",
                             f"{server.url}/v1", "--no-log", *flags, "Weather and 17 + 25?")
        assert proc.returncode == 8, (flags, proc.stderr)
        assert len(server.requests) == 1, flags  # the second call was never sent
        limit = {"--max-total-tokens": "max_total_tokens=500", "--max-cost": "max_cost_usd",
                 "--max-requests": "max_requests=1"}[flags[0]]
        assert limit in proc.stdout, proc.stdout


def test_limit_flags_are_checked_and_refused_with_an_agent(tmp_path: Path) -> None:
    bad = reactloop(tmp_path, "run", "--max-cost", "-1", "hi")
    assert bad.returncode == 2 and "positive number of US dollars" in bad.stderr
    both = reactloop(tmp_path, "run", "--agent", "controls_agents:limited", "--max-requests",
                     "3", "hi")
    assert both.returncode == 2 and "--max-requests" in both.stderr


def test_logs_show_the_cost_or_say_it_is_unknown(tmp_path: Path) -> None:
    from _recorded_server import payload, recorded_server

    with recorded_server() as server:
        server.queue(payload("openai", "done_stream.sse"))
        priced = reactloop(tmp_path, "run", "-m", "openai:gpt-4o-mini", "--base-url",
                           f"{server.url}/v1", "hi")
    assert priced.returncode == 0, priced.stderr
    assert reactloop(tmp_path, "run", "--agent", "controls_agents:limited", "go").returncode == 8
    listing = reactloop(tmp_path, "logs", "--json")
    import json

    runs = json.loads(listing.stdout)
    assert [r["state"] for r in runs] == ["usage_limit", "completed"]
    assert runs[0]["cost"] is None and runs[1]["cost"] > 0  # scripted: unknown; gpt-4o-mini
    shown = reactloop(tmp_path, "logs", "show", runs[0]["id"])
    assert "cost unknown" in shown.stdout + shown.stderr
