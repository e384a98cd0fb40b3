"""The client's MCP servers (session/new's and session/load's `mcpServers`) joined to the session's.

Each becomes an `[mcp.servers.NAME]` table checked like a configured one (config/mcp_servers.py):
a stdio server runs in its own sandbox (network off), an HTTP server is reached at its URL. A
name that a configured server has already gets `-client` appended. SSE and ACP-tunnelled servers
are refused with a clear error (Workbench speaks stdio and Streamable HTTP). As in a config table,
`${VAR}` in an `env` or header value is read from Workbench's environment when the server starts.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from workbench.config.mcp_servers import McpServer, ServerConfigError, parse_server
from workbench.config.settings import Settings

_UNNAMEABLE = re.compile(r"[^A-Za-z0-9_-]+")


class RefusedServer(ValueError):
    """A client's server that cannot join: the message says which and why."""


def _table(server: Any) -> dict[str, Any]:
    """The server's config table."""
    kind = getattr(server, "type", "stdio")
    name = getattr(server, "name", "?")
    if kind == "http":
        return {"url": server.url, "headers": {h.name: h.value for h in server.headers}}
    if kind == "stdio" or hasattr(server, "command"):
        return {"command": server.command, "args": list(server.args), "env": {e.name: e.value for e in server.env}}
    raise RefusedServer(
        f"MCP server {name!r}: the {kind} transport is not supported; give a stdio command or a Streamable HTTP URL"
    )


def tables(settings: Settings, given: list[Any] | None) -> dict[str, dict[str, Any]]:
    """The client's servers as config tables by the names they get beside the configured ones."""
    named: dict[str, dict[str, Any]] = {}
    for server in given or []:
        name = _UNNAMEABLE.sub("_", str(server.name)).strip("_") or "client"
        while name in settings.mcp_servers or name in named:
            name += "-client"
        named[name] = _table(server)
    return named


def join(settings: Settings, given: list[Any] | None) -> Settings:
    """The settings with the client's servers added; RefusedServer names one that cannot be."""
    if not given:
        return settings
    servers: dict[str, McpServer] = dict(settings.mcp_servers)
    for name, table in tables(settings, given).items():
        try:
            servers[name] = parse_server(name, table)
        except ServerConfigError as err:
            raise RefusedServer(f"MCP server {name!r} from the client: {err}") from err
    return replace(settings, mcp_servers=servers)
