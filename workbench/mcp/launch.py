"""How a server is reached: a stdio program in its own bubblewrap sandbox, or a Streamable HTTP URL.

A sandboxed stdio server gets the session's filesystem policy (`terminal.sandbox.policy_for`:
`/` read-only, the workspace writable in workspace-write mode, the data folder, the Workbench
config, the person's secrets folders and host sockets hidden), a pid namespace, no capabilities,
`--die-with-parent`; its network only with its own `network = true`; extra writable folders
from its `writable`; a scratch folder of its own. Its environment holds only the basics
(PATH, HOME, ...) and the variables its `env` lists, never the person's keys, plus the session's
marker, by which the leftovers reaper finds it after a kill -9. It runs in a session of its own
with pipes for stdin and stdout: no terminal it could inject keys into.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import replace
from pathlib import Path

import httpx2
from mcp import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from workbench.config.mcp_servers import McpServer, expand, writable_paths
from workbench.config.settings import Settings
from workbench.core.feedback import Feedback
from workbench.terminal.sandbox import bwrap_argv, find_bwrap, missing_text, policy_for
from workbench.terminal.shell_env import MARKER


class NotStartable(Feedback):
    """A server that cannot be started as configured (a variable unset, bubblewrap missing)."""


def server_sandbox(settings: Settings, server: McpServer) -> Settings:
    """The session's sandbox settings for a server: its mode (workspace-write when the session's
    sandbox is off: the server's own `sandbox = "off"` is what turns it off), its own network and
    extra writable folders."""
    return replace(
        settings,
        sandbox=settings.sandbox if settings.sandbox != "off" else "workspace-write",
        sandbox_network=server.network,
        sandbox_writable=[*settings.sandbox_writable, *writable_paths(server)],
    )


def server_env(server: McpServer, marker: str, env: dict[str, str] | None = None) -> dict[str, str]:
    """The variables the server's `env` lists (values may name the person's variables), and the marker."""
    values = {name: expand(value, env, where=f"mcp.servers.{server.name}.env.{name}") for name, value in server.env}
    return {**values, MARKER: marker}


def stdio_parameters(
    settings: Settings, server: McpServer, scratch: Path, marker: str, env: dict[str, str] | None = None
) -> StdioServerParameters:
    """The command that starts `server`: inside bwrap unless its `sandbox = "off"`."""
    variables = server_env(server, marker, env)
    cwd = (settings.workspace / Path(server.cwd).expanduser()).resolve() if server.cwd else settings.workspace
    if not server.sandboxed:
        return StdioServerParameters(command=server.command, args=list(server.args), env=variables, cwd=cwd)
    policy = policy_for(server_sandbox(settings, server), settings.workspace)
    assert policy is not None
    exe = find_bwrap(policy.bwrap)
    if exe is None:
        raise NotStartable(f'MCP server {server.name}: {missing_text(policy.bwrap)} (or sandbox = "off" for it)')
    if shutil.which(server.command) is None and not Path(server.command).is_file():
        raise NotStartable(f"MCP server {server.name}: the command {server.command!r} was not found on PATH")
    scratch.mkdir(parents=True, exist_ok=True)
    argv = bwrap_argv(exe, policy, scratch, None)
    for path in program_paths(server, settings.workspace):
        argv[-1:-1] = ["--ro-bind", str(path), str(path)]
    argv[-1:-1] = ["--chdir", str(cwd)]
    return StdioServerParameters(
        command=argv[0], args=[*argv[1:], server.command, *server.args], env={**variables, "TMPDIR": "/tmp"}, cwd=cwd
    )


def program_paths(server: McpServer, workspace: Path) -> list[Path]:
    """What the server's configuration names to run that lies under /tmp, where the sandbox has an
    empty /tmp of its own: the command's installation (the folder above its `bin/`, so a virtual
    environment finds its packages) and the arguments that are files or folders there. Bound
    read-only; nothing that holds the workspace (it would lose its writable bind)."""
    tmp = Path("/tmp")
    found: list[Path] = []
    command = Path(shutil.which(server.command) or server.command).absolute()
    found.append(command.parent.parent if command.parent.name == "bin" else command.parent)
    found += [Path(arg) for arg in server.args if arg.startswith("/") and os.path.lexists(arg)]
    return [
        path
        for path in dict.fromkeys(found)
        if tmp in path.parents and not (workspace == path or path in workspace.parents or workspace in path.parents)
    ]


def http_transport(server: McpServer, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    """The Streamable HTTP transport of `server`, its headers' variables read now (a bearer token)."""
    headers = {
        name: expand(value, env, where=f"mcp.servers.{server.name}.headers.{name}") for name, value in server.headers
    }
    client = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300))
    return client, streamable_http_client(server.url, http_client=client)
