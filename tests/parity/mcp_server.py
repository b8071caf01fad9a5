"""A small stdio MCP server with instructions, for the parity scenarios (docs/parity.md §4).

JSON-RPC 2.0, one message a line: `initialize` answers with the server's instructions (what
Claude Code announces as `mcp_instructions_delta`), `tools/list` with one tool, every other
request with an empty result; notifications are read and left unanswered.
"""

from __future__ import annotations

import json
import sys
from typing import Any

NAME = "parity-notes"
INSTRUCTIONS = (
    "Use the parity-notes server to look up the project's notes by key.\n"
    "Keys are lower case; a missing key answers an empty note."
)
TOOLS = [
    {
        "name": "lookup",
        "description": "Look up a note by key.",
        "inputSchema": {
            "type": "object",
            "properties": {"key": {"type": "string"}},
            "required": ["key"],
        },
    }
]


def answer(msg: dict[str, Any]) -> dict[str, Any] | None:
    if "id" not in msg:
        return None
    method = msg.get("method")
    result: dict[str, Any]
    if method == "initialize":
        version = (msg.get("params") or {}).get("protocolVersion", "2025-06-18")
        result = {
            "protocolVersion": version,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": NAME, "version": "1.0.0"},
            "instructions": INSTRUCTIONS,
        }
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": ""}]}
    else:
        result = {}
    return {"jsonrpc": "2.0", "id": msg["id"], "result": result}


def main() -> None:
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        reply = answer(msg) if isinstance(msg, dict) else None
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
