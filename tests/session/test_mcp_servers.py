"""`workbench mcp list` / `call` and doctor's check of MCP servers, against the real probe server."""

from __future__ import annotations

import json

import pytest

from tests.mcp.conftest import probe, with_servers
from workbench.config.mcp_servers import parse_server
from workbench.config.settings import Settings
from workbench.session.mcp_servers import call_tool, check_servers, list_servers

pytestmark = pytest.mark.slow


async def test_list_reports_each_server(settings: Settings) -> None:
    settings = with_servers(
        settings,
        probe(),
        parse_server("broken", {"command": "/nonexistent/server", "sandbox": "off", "timeout": 5}),
        parse_server("off", {"command": "x", "enabled": False}),
    )
    reports = {r.name: r for r in await list_servers(settings)}
    assert reports["probe"].state == "ready" and "probe__echo" in reports["probe"].tools
    assert reports["probe"].started_in > 0 and "sandboxed, network off" in reports["probe"].lines()[0]
    assert reports["broken"].state == "failed" and reports["broken"].reason
    assert reports["off"].lines() == ["off: x (sandboxed, network off): disabled (enabled = false)"]
    checks = await check_servers(settings)
    assert [(name, ok) for name, ok, _ in checks] == [("probe", True), ("broken", False)]


async def test_call_a_tool_by_hand(settings: Settings) -> None:
    settings = with_servers(settings, probe())
    result = await call_tool(settings, "probe__add", json.dumps({"a": 1, "b": 41}))
    assert not result.is_error and '"sum": 42' in result.output
    wrong = await call_tool(settings, "probe__nope", "{}")
    assert wrong.is_error and "probe has no tool nope" in wrong.error and "probe__add" in wrong.error
