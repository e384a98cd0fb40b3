"""The MCP servers outside a session: `workbench mcp list`, `workbench mcp call`, `workbench doctor`.

Each starts the configured servers as a session would (sandboxed, with their settings), waits
for them, reports or calls, and stops them: nothing is left running.
"""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass

from workbench.config.settings import Settings
from workbench.mcp.manager import McpManager
from workbench.pb import workbench_pb2 as pb
from workbench.tools.registry import Toolbox, ToolContext


@dataclass(frozen=True)
class ServerReport:
    """One server as `workbench mcp list` shows it."""

    name: str
    described: str  # what it runs, and its sandbox
    state: str  # ready, failed, disabled
    reason: str
    started_in: float  # seconds its start took
    tools: tuple[str, ...]  # exposed names

    def lines(self) -> list[str]:
        if self.state == "disabled":
            return [f"{self.described}: disabled (enabled = false)"]
        if self.state != "ready":
            return [f"{self.described}: {self.state}: {self.reason}"]
        head = f"{self.described}: ready in {self.started_in:.2f} s, {len(self.tools)} tool(s)"
        return [head, *(f"  {name}" for name in self.tools)]


@asynccontextmanager
async def started_servers(settings: Settings, wait: float = 0.0) -> AsyncIterator[McpManager]:
    """Every enabled server started and waited for (each up to its start limit); stopped after."""
    session_id = f"cli-{os.getpid()}-{uuid.uuid4().hex[:6]}"
    manager = McpManager(settings, settings.data_dir / "mcp-cli" / session_id, session_id)
    manager.start()
    try:
        ready = [asyncio.wait_for(c.ready(), wait or None) for c in manager.connections.values()]
        await asyncio.gather(*ready, return_exceptions=True)
        yield manager
    finally:
        await manager.close()


async def list_servers(settings: Settings) -> list[ServerReport]:
    """Each configured server: started, its state, the time its start took, its tools."""
    reports = []
    async with started_servers(settings) as manager:
        offered = manager.tools()
        for name, server in settings.mcp_servers.items():
            connection = manager.connections.get(name)
            if connection is None:
                reports.append(ServerReport(name, server.describe(), "disabled", "", 0.0, ()))
                continue
            tools = tuple(n for n, (s, _) in manager.origins().items() if s == name and n in offered)
            reports.append(
                ServerReport(name, server.describe(), connection.state, connection.reason, connection.started_in, tools)
            )
    return reports


async def call_tool(
    settings: Settings, name: str, arguments: str, on_output: Callable[[str], None] = lambda text: None
) -> pb.ToolResult:
    """One call of an MCP tool by its exposed name, as an agent would make it (without the guard:
    the person types it); `on_output` gets its progress as it comes."""
    async with started_servers(settings) as manager:
        box = Toolbox(manager.patterns(), manager)
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        ctx = ToolContext(
            workspace=settings.workspace,
            settings=settings,
            session_dir=settings.data_dir / "mcp-cli",
            on_output=lambda call_id, text: on_output(text),
        )
        started = time.monotonic()
        result = await box.invoke(pb.ToolCall(id="cli", name=name, arguments=arguments), ctx)
        result.duration = result.duration or time.monotonic() - started
        return result


async def check_servers(settings: Settings) -> list[tuple[str, bool, str]]:
    """`workbench doctor`: (server, started and listed its tools, one line) for each enabled server."""
    checks = []
    for report in await list_servers(settings):
        if report.state == "disabled":
            continue
        ok = report.state == "ready"
        text = report.lines()[0]
        checks.append((report.name, ok, text))
    return checks
