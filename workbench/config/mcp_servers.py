"""MCP servers in the config: `[mcp.servers.NAME]` tables, checked once, with the hash that allows them.

A server table is a table of its own (not flattened into settings): `command`, `args`, `env`,
`cwd` (a program over stdio), or `url` and `headers` (Streamable HTTP); `enabled`; `tools` (an
allow list of globs); `timeout`; `network`, `writable`, `sandbox` (the stdio server's sandbox);
`read_only` (globs of tools the guard may treat as only reading). `env` and `headers` values may
name environment variables (`"${GITHUB_TOKEN}"`), read when the server starts, so the config
holds no secret.

A project config (which a cloned repository brings, and the agent can write) may add a server
only when the person's user config allows that exact table by its hash (`mcp_allowed`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SANDBOX_CHOICES = ("on", "off")
_KEYS = {
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "headers",
    "enabled",
    "tools",
    "timeout",
    "network",
    "writable",
    "sandbox",
    "read_only",
}
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")
_NAME = re.compile(r"[A-Za-z0-9_-]+")


class ServerConfigError(ValueError):
    """A server table that cannot be used; the message names the server and the key."""


@dataclass(frozen=True)
class McpServer:
    """One configured MCP server (a stdio program or a Streamable HTTP URL)."""

    name: str
    command: str = ""
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()  # (variable, value that may name variables)
    cwd: str = ""
    url: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    enabled: bool = True
    tools: tuple[str, ...] = ()  # globs of the server's tool names offered; empty: all
    timeout: float = 60.0  # seconds of one call (and of the start); 0: no limit
    network: bool = False
    writable: tuple[str, ...] = ()
    sandbox: str = "on"
    read_only: tuple[str, ...] = ()  # globs of tool names that only read (true: all)
    table_hash: str = field(default="", compare=False)

    @property
    def transport(self) -> str:
        return "http" if self.url else "stdio"

    @property
    def sandboxed(self) -> bool:
        return self.transport == "stdio" and self.sandbox != "off"

    def describe(self) -> str:
        """One line for doctor, the header and `workbench mcp list`."""
        if self.url:
            return f"{self.name}: {self.url} (Streamable HTTP)"
        where = "sandbox off" if self.sandbox == "off" else f"sandboxed, network {'on' if self.network else 'off'}"
        return f"{self.name}: {' '.join([self.command, *self.args])} ({where})"


def table_hash(name: str, table: dict[str, Any]) -> str:
    """The hash a user config names in `mcp_allowed` to let a project config add this exact table."""
    text = json.dumps({"name": name, **table}, sort_keys=True, separators=(",", ":"), default=str)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()[:32]


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ServerConfigError(f"{where} must be a list of strings, got {value!r}")
    return tuple(value)


def _mapping(value: Any, where: str) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ServerConfigError(f"{where} must be a table of strings, got {value!r}")
    return tuple((str(k), v) for k, v in value.items())


def parse_server(name: str, table: Any) -> McpServer:
    """One `[mcp.servers.NAME]` table checked; ServerConfigError names what is wrong."""
    where = f"mcp.servers.{name}"
    if not _NAME.fullmatch(name):
        raise ServerConfigError(f"{where}: a server's name may hold only letters, digits, '_' and '-'")
    if not isinstance(table, dict):
        raise ServerConfigError(f"{where} must be a table ([mcp.servers.{name}]), got {table!r}")
    unknown = sorted(set(table) - _KEYS)
    if unknown:
        raise ServerConfigError(f"{where}: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(_KEYS))}")
    command, url = table.get("command", ""), table.get("url", "")
    if not isinstance(command, str) or not isinstance(url, str):
        raise ServerConfigError(f"{where}: command and url must be strings")
    if bool(command) == bool(url):
        raise ServerConfigError(f"{where}: give either command (a program over stdio) or url (Streamable HTTP)")
    if url and not url.startswith(("http://", "https://")):
        raise ServerConfigError(f"{where}.url must start with http:// or https://, got {url!r}")
    timeout = table.get("timeout", 60.0)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout < 0:
        raise ServerConfigError(f"{where}.timeout must be seconds (0: no limit), got {timeout!r}")
    for key in ("enabled", "network"):
        if not isinstance(table.get(key, False), bool):
            raise ServerConfigError(f"{where}.{key} must be true or false, got {table[key]!r}")
    sandbox = table.get("sandbox", "on")
    if sandbox not in SANDBOX_CHOICES:
        raise ServerConfigError(f"{where}.sandbox must be 'on' or 'off', got {sandbox!r}")
    read_only = table.get("read_only", [])
    read_only_globs = ("*",) if read_only is True else () if read_only is False else _strings(read_only, where)
    cwd = table.get("cwd", "")
    if not isinstance(cwd, str):
        raise ServerConfigError(f"{where}.cwd must be a path, got {cwd!r}")
    return McpServer(
        name=name,
        command=command,
        args=_strings(table.get("args", []), f"{where}.args"),
        env=_mapping(table.get("env", {}), f"{where}.env"),
        cwd=cwd,
        url=url,
        headers=_mapping(table.get("headers", {}), f"{where}.headers"),
        enabled=table.get("enabled", True),
        tools=_strings(table.get("tools", []), f"{where}.tools"),
        timeout=float(timeout),
        network=table.get("network", False),
        writable=_strings(table.get("writable", []), f"{where}.writable"),
        sandbox=sandbox,
        read_only=read_only_globs,
        table_hash=table_hash(name, table),
    )


def parse_servers(tables: Any) -> dict[str, McpServer]:
    """`[mcp.servers]` read: each NAME's table checked."""
    if not isinstance(tables, dict):
        raise ServerConfigError(f"mcp.servers must hold tables [mcp.servers.NAME], got {tables!r}")
    return {name: parse_server(name, table) for name, table in tables.items()}


def expand(value: str, env: dict[str, str] | None = None, *, where: str) -> str:
    """`${VAR}` and `$VAR` in a config value replaced by the variable; a KeyError-free message if unset."""
    env = dict(os.environ) if env is None else env

    def one(match: re.Match[str]) -> str:
        var = match.group(1) or match.group(2)
        if var not in env:
            raise ServerConfigError(f"{where} names the environment variable {var}, which is not set")
        return env[var]

    return _VARIABLE.sub(one, value)


def writable_paths(server: McpServer) -> list[Path]:
    return [Path(os.path.expanduser(p)).resolve() for p in server.writable]
