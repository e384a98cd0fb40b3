"""Deferred servers: a server with many tools costs prompt tokens in every request, subagents'
included. Past `mcp_defer_above` tools, a server is one line in the description of the small
`mcp__tools` tool instead; the model calls it with the server's name to see the tools, which are
offered from its next turn on (to every agent of the session that selects that server).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from workbench.core.feedback import Feedback
from workbench.pb import workbench_pb2 as pb
from workbench.tools.registry import Tool, ToolContext

LISTER = "mcp__tools"
DESCRIPTION = (
    "List the tools of an MCP server whose tools are not offered yet (deferred: it has many); they are "
    "offered to you from your next turn on. Deferred servers:\n"
)


def lister_tool(deferred: dict[str, tuple[int, str]], reveal: Callable[[str], list[tuple[str, str]]]) -> Tool:
    """The `mcp__tools` tool for these deferred servers (name -> (tool count, what it is))."""
    lines = [f"- {name}: {count} tools{f' ({about})' if about else ''}" for name, (count, about) in deferred.items()]
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {"server": {"type": "string", "enum": list(deferred), "description": "the server's name"}},
        "required": ["server"],
        "additionalProperties": False,
    }
    definition = pb.ToolDefinition(name=LISTER, description=DESCRIPTION + "\n".join(lines))
    definition.parameters.update(json.loads(json.dumps(schema)))

    async def call(ctx: ToolContext, server: str) -> str:
        if server not in deferred:
            raise Feedback(f"{server!r} is not a deferred MCP server; deferred: {', '.join(deferred) or '(none)'}")
        tools = reveal(server)
        listed = "\n".join(f"{name}: {description}" for name, description in tools)
        return f"MCP server {server}'s tools, offered from your next turn on:\n{listed}"

    return Tool(LISTER, call, schema, definition, read_only=True)
