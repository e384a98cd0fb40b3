"""`workbench mcp list` (the configured MCP servers, started: state, tools, start time) and
`workbench mcp call SERVER__tool '{json}'` (one call by hand, without the guard: the person types it)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

from workbench.cli.command import Command, UsageError
from workbench.cli.flags import settings_of, where_flags
from workbench.core.safe_text import printable


def flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", choices=("list", "call"), help="list the servers, or call one tool")
    p.add_argument("tool", nargs="?", help="with call: the tool, SERVER__tool (as `workbench mcp list` names it)")
    p.add_argument("arguments", nargs="?", default="{}", help="with call: its arguments, one JSON object")
    p.add_argument("--workspace", type=Path, help="the repository whose .workbench/config.toml counts (default: here)")
    where_flags(p)


def handle(args: argparse.Namespace) -> int:
    from workbench.session.mcp_servers import call_tool, list_servers

    settings = settings_of(args)
    if not settings.mcp_servers:
        print("workbench: no MCP servers configured ([mcp.servers.NAME] in your config)", file=sys.stderr)
        return 0 if args.action == "list" else 1
    if args.action == "list":
        if args.tool is not None:
            raise UsageError("`workbench mcp list` takes no tool")
        reports = asyncio.run(list_servers(settings))
        for report in reports:
            for line in report.lines():
                print(printable(line))
        return 0 if all(r.state in ("ready", "disabled") for r in reports) else 1
    if not args.tool:
        raise UsageError("`workbench mcp call` needs the tool: workbench mcp call SERVER__tool '{\"arg\": 1}'")
    try:
        if not isinstance(json.loads(args.arguments), dict):
            raise ValueError("not an object")
    except ValueError as err:
        raise UsageError(f'the arguments must be one JSON object, like \'{{"path": "x"}}\' ({err})') from err
    result = asyncio.run(call_tool(settings, args.tool, args.arguments, lambda text: print(printable(text), end="")))
    if result.output:
        print(printable(result.output))
    if result.is_error:
        print(f"workbench: {printable(result.error)}", file=sys.stderr)
        return 1
    return 0


COMMAND = Command(
    name="mcp",
    summary="list the MCP servers, or call one of their tools",
    description="Start the configured MCP servers and list them (state, start time, tools), or call one tool.",
    flags=flags,
    handle=handle,
)
