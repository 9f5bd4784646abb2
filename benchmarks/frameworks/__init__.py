"""One module per framework under test, each with the same small interface.

Every module defines:

- ``NAME``: the display name; ``DIST``: the distribution whose version is reported;
  ``IMPORT``: the import statement timed for the cold-start figure;
- ``PEER``: True for the peers (run in ``benchmarks/.venv-peers``), False for reactloop;
- optionally ``WORKLOADS``: the workloads it takes part in (default: all);
- ``build(delay, n_calls, counter)``: an ``async def run_once() -> int`` that performs one agent
  run of the common workload and returns the number of tool calls the framework reports.

The common workload: the model (a fake driven in-process, no network) calls ``add(a, b)``
``n_calls`` times in sequence (``a`` = the number of tool results so far, ``b`` = 1), then
answers ``"done"``; each model call first awaits ``delay`` seconds. ``counter`` is a
two-element list: ``[model calls, tool executions]``, incremented by the fake model and the
tool, so the worker can check every framework really did the work.
"""

FRAMEWORKS = ("reactloop", "reactloop_inline", "reactloop_async", "pydantic_ai", "openai_agents", "langgraph",
              "smolagents", "asyncio_baseline")
"""Module names (``frameworks.<name>_fw``), in the default order."""
