"""An MCP server over stdio that starts well and then answers a tool call with garbage.

It speaks JSON-RPC by hand (no SDK), so it can answer what the SDK's server never would: on
`tools/call` it writes GARBAGE_LINE (default: a line that is not JSON) to stdout instead of a
result, then waits; with GARBAGE_AT=start it writes it right after answering `initialize`.
Run: `python tests/mcp/garbage_server.py`.
"""

from __future__ import annotations

import json
import os
import sys
import time

GARBAGE = os.environ.get("GARBAGE_LINE", "Segmentation fault (core dumped) in handler")
AT_START = os.environ.get("GARBAGE_AT") == "start"


def garbage() -> None:
    sys.stdout.write(GARBAGE + "\n")
    sys.stdout.flush()


def send(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main() -> None:
    for line in sys.stdin:
        request = json.loads(line)
        method, rid = request.get("method"), request.get("id")
        if method == "initialize":
            result = {
                "protocolVersion": request["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "garbage", "version": "1"},
            }
            send({"jsonrpc": "2.0", "id": rid, "result": result})
            if AT_START:
                garbage()
        elif method == "tools/list":
            tool = {"name": "answer", "description": "Answer garbage.", "inputSchema": {"type": "object"}}
            send({"jsonrpc": "2.0", "id": rid, "result": {"tools": [tool]}})
        elif method == "tools/call":
            garbage()
        elif rid is not None:
            send({"jsonrpc": "2.0", "id": rid, "result": {}})
    time.sleep(3600)


if __name__ == "__main__":
    main()
