"""A stdio MCP server of protocol 2025-11-25, written on the wire (JSON-RPC lines, no SDK), for
URL-mode elicitation, the one version that has both of its halves: ``elicitation/create`` with
``mode: "url"`` and an ``elicitationId``, and the ``notifications/elicitation/complete`` the
server sends when the out-of-band step is done (2026-07-28 removed the notification).

Tools:

* ``sign_in``: asks the client, inside the call, to send the user to a URL; when the user
  accepts, the (simulated) site finishes at once and the server sends the completion
  notification before it answers.
* ``link_account``: the first call fails with ``-32042`` (URL elicitation required) naming a
  URL, and the server sends the completion notification right after; a call after that
  succeeds. ``link_account`` with ``complete: false`` never completes.
"""

from __future__ import annotations

import json
import sys
from typing import Any

VERSION = "2025-11-25"
TOOLS = [
    {"name": "sign_in", "description": "Sign in at the provider's site (URL elicitation).",
     "inputSchema": {"type": "object", "properties": {}}},
    {"name": "link_account", "description": "Link the account (needs a URL step first).",
     "inputSchema": {"type": "object", "properties": {"complete": {"type": "boolean"}}}},
]
linked = False


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def receive() -> dict[str, Any] | None:
    line = sys.stdin.readline()
    return json.loads(line) if line else None


def result_text(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": False}


def complete(elicitation_id: str) -> None:
    send({"method": "notifications/elicitation/complete",
          "params": {"elicitationId": elicitation_id}})


def sign_in() -> dict[str, Any]:
    send({"id": "ask-1", "method": "elicitation/create", "params": {
        "mode": "url", "message": "Sign in to Example to continue.",
        "url": "https://example.com/sign-in?session=abc", "elicitationId": "sign-in-1"}})
    while True:
        message = receive()
        if message is None:
            sys.exit(0)
        if message.get("id") == "ask-1" and "method" not in message:
            break
    action = (message.get("result") or {}).get("action", "error")
    if action != "accept":
        return result_text(f"not signed in: {action}")
    complete("sign-in-1")
    return result_text("signed in")


def link_account(request_id: Any, arguments: dict[str, Any]) -> None:
    global linked
    if linked:
        send({"id": request_id, "result": result_text("account linked")})
        return
    send({"id": request_id, "error": {
        "code": -32042, "message": "Link your account first.",
        "data": {"elicitations": [{"mode": "url", "message": "Link your Example account.",
                                   "url": "https://example.com/link?user=7",
                                   "elicitationId": "link-1"}]}}})
    if arguments.get("complete", True):
        linked = True
        complete("link-1")


def main() -> None:
    while (message := receive()) is not None:
        method, request_id = message.get("method"), message.get("id")
        if request_id is None:
            continue  # notifications
        if method == "initialize":
            send({"id": request_id, "result": {
                "protocolVersion": VERSION, "capabilities": {"tools": {}},
                "serverInfo": {"name": "url-demo", "version": "1"}}})
        elif method == "tools/list":
            send({"id": request_id, "result": {"tools": TOOLS}})
        elif method == "tools/call" and message["params"]["name"] == "sign_in":
            send({"id": request_id, "result": sign_in()})
        elif method == "tools/call" and message["params"]["name"] == "link_account":
            link_account(request_id, message["params"].get("arguments") or {})
        elif method == "ping":
            send({"id": request_id, "result": {}})
        else:
            send({"id": request_id, "error": {"code": -32601,
                                              "message": f"Method not found: {method}"}})


if __name__ == "__main__":
    main()
