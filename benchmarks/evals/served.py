"""The everyday eval's agent with the same GGUF behind llama-cpp-python's server, guided.

Start the server with the embedded model's GGUF and context, then point the eval at it::

    python -m llama_cpp.server --model "$(python -c 'from reactloop.models.local import \\
        default_model_path; print(default_model_path())')" --n_ctx 8192 --port 8931
    REACTLOOP_SERVED_URL=http://127.0.0.1:8931/v1 \\
        reactloop eval benchmarks/evals/everyday.yaml --agent benchmarks/evals/served.py:agent

The agent is the one ``everyday.yaml``'s ``agent:`` section describes (tools, skills,
workspace, MCP server), with ``OpenAIModel(..., guidance=Guidance())`` in place of the
embedded model: the same as ``reactloop run -m openai:smollm2 --base-url URL --guidance full``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent


def agent(cases: str = "everyday.yaml") -> Any:
    from reactloop.evals import build_agent, load_suite
    from reactloop.models._guided import guidance_for
    from reactloop.models.openai import OpenAIModel

    url = os.environ.get("REACTLOOP_SERVED_URL", "http://127.0.0.1:8931/v1")
    suite = load_suite(str(HERE / cases))
    model = OpenAIModel("smollm2", base_url=url, guidance=guidance_for("full"), timeout=600)
    return build_agent({**suite.agent, "model": model}, suite.base_dir)
