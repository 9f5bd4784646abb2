"""Agents across processes and vendors: the Agent2Agent protocol (A2A), called and served.

Calling: :class:`A2AAgent` is a remote A2A agent — reactloop's or any framework's — used
where a local agent is::

    from reactloop import Agent
    from reactloop.a2a import A2AAgent

    research = A2AAgent("http://127.0.0.1:8001", token=None)
    agent = Agent(model, tools=[research.as_tool()])   # the tool's one parameter: task

Serving: ``reactloop serve`` answers A2A (``/.well-known/agent-card.json``, JSON-RPC at
``/api/a2a``; see :mod:`reactloop.serve`). Both use the official ``a2a-sdk``, an optional
extra (``pip install 'reactloop[a2a]'``) that ``import reactloop`` never imports.
"""

from reactloop.a2a._client import A2AAgent, A2AReply

__all__ = ["A2AAgent", "A2AReply"]
