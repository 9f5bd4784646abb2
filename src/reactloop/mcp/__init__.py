"""MCP servers as tool sources (feature C1), and reactloop tools served over MCP.

Built on the official ``mcp`` SDK, an optional extra (``pip install 'reactloop[mcp]'``);
``import reactloop`` never imports it, and this package imports it only when a server is
opened or served::

    from reactloop import Agent
    from reactloop.mcp import MCPServer, load_mcp_config

    time = MCPServer.stdio("mcp-server-time")             # tools: time_get_current_time, …
    docs = MCPServer.http("https://mcp.deepwiki.com/mcp")  # tools: deepwiki_…
    agent = Agent(model, mcp_servers=[time, docs, *load_mcp_config("mcp.json")])

Each run starts the servers, lists their tools and stops the servers when it ends. A server
that stops is restarted once; a call that provably never reached it is sent again, any other
gets an error result naming the server. Events: ``mcp_warning`` (custom event) with ``server``,
``kind`` (``skipped``, ``connection_lost``, ``restarted``, ``restart_failed``,
``stdout_noise``: lines on a stdio server's stdout that are not JSON-RPC, ignored), ``message``
and ``stderr_tail``.

Beyond tools (``MCPServer.stdio/http/sse(..., sampling=, sampling_model=, elicitation=,
roots=, resources=)``): sampling answered by the run's model (``mcp_sampling`` events,
:mod:`~reactloop.mcp._sampling`), elicitation by a handler (``mcp_elicitation``,
:mod:`~reactloop.mcp._elicitation`), progress (``mcp_progress``), server logs (the
``reactloop.mcp.<server>`` loggers), tool-list changes (``mcp_tools_changed``), resources and
prompts (two tools for the model; ``list_resources``, ``read_resource``,
``subscribe_resource`` → ``mcp_resource_updated``, ``list_prompts``, ``get_prompt`` on what
``open()`` yields), roots; see :mod:`~reactloop.mcp._client_side`. OAuth for remote servers
(``MCPServer.http(url, oauth=True)``, ``await server.login()``, ``reactloop mcp login``):
:mod:`~reactloop.mcp._oauth`.
"""

from reactloop.mcp._config import load_mcp_config
from reactloop.mcp._elicitation import Elicitation, ElicitationAnswer
from reactloop.mcp._tool_source import MCPServer, MCPServerError, MCPTool, MCPTools

__all__ = ["Elicitation", "ElicitationAnswer", "MCPServer", "MCPServerError", "MCPTool",
           "MCPTools", "load_mcp_config", "serve_stdio"]


async def serve_stdio(tools: object = (), *, agent: object = None, name: str = "reactloop") -> None:
    """Serve reactloop tools (and optionally an agent, as the tool ``run_agent``) as an MCP
    server over stdin/stdout until the client disconnects. See :mod:`reactloop.mcp._serve`."""
    from reactloop.mcp._serve import serve_stdio as _serve

    await _serve(tools, agent=agent, name=name)
