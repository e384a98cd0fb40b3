"""Deferred servers: a server with many tools costs prompt tokens in every request, subagents'
included. Past `mcp_defer_above` tools, a server is one line in the description of the small
`mcp__tools` tool instead; the model calls it with the server's name to see the tools, which are
offered from its next turn on (to every agent of the session that selects that server).
"""

from __future__ import annotations

import typing
from collections.abc import Callable
from typing import Any, Literal

from workbench.core.feedback import Feedback
from workbench.tools.registry import Tool, ToolContext, declared_tool

LISTER = "mcp__tools"
REVEAL_MAX = 60  # tools one listing offers at most: providers accept about 128 tools in a request
DESCRIPTION = (
    "List the tools of an MCP server whose tools are not offered yet (deferred: it has many); they are "
    "offered to you from your next turn on. Give `match` (words of the tool's name or description) "
    f"to list only some: at most {REVEAL_MAX} are offered per listing. Deferred servers:\n"
)
Reveal = Callable[[str, str], tuple[list[tuple[str, str]], str]]


def lister_tool(deferred: dict[str, tuple[int, str]], reveal: Reveal) -> Tool:
    """The `mcp__tools` tool for these deferred servers (name -> (tool count, what it is)).
    `reveal(server, match)` offers the matching tools: (exposed name, first line of description)
    each, or none and why (too many matched)."""
    lines = [f"- {name}: {count:,} tools{f' ({about})' if about else ''}" for name, (count, about) in deferred.items()]

    async def call(ctx: ToolContext, server: str, match: str = "") -> str:
        """List a deferred server's tools (its description, with the servers, is DESCRIPTION's).

        Args:
            server: the server's name
            match: only the tools whose name or description holds these words (all of them)
        """
        if server not in deferred:
            raise Feedback(f"{server!r} is not a deferred MCP server; deferred: {', '.join(deferred) or '(none)'}")
        tools, refused = reveal(server, match)
        if refused:
            return refused
        if not tools:
            return f"MCP server {server} has no tool matching {match!r}; list again with other words"
        listed = "\n".join(f"{name}: {description}" for name, description in tools)
        return f"MCP server {server}'s tools, offered from your next turn on:\n{listed}"

    servers = typing.cast(Any, Literal)[tuple(deferred)]  # an enum of the names known now
    return declared_tool(
        call, LISTER, read_only=True, description=DESCRIPTION + "\n".join(lines), hints={"server": servers}
    )


def matching(tools: list[dict[str, Any]], match: str) -> list[dict[str, Any]]:
    """The tools whose name or description holds every word of `match` (any case)."""
    words = match.casefold().split()
    return [t for t in tools if all(w in f"{t['name']} {t.get('description', '')}".casefold() for w in words)]


def too_many(server: str, count: int, match: str, names: list[str]) -> str:
    """What a listing says when more tools matched than one listing offers."""
    shown = ", ".join(names[:100]) + (f" and {len(names) - 100:,} more" if len(names) > 100 else "")
    which = f"{count:,} tools match {match!r}" if match else f"it has {count:,} tools"
    return (
        f"MCP server {server}: {which}, too many to offer at once (at most {REVEAL_MAX}); none offered. "
        f"List again with `match` (words of the names or descriptions) to narrow it. Their names: {shown}"
    )
