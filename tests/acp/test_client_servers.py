"""The client's MCP servers as checked server tables (workbench/acp/client_servers.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from acp.schema import AcpMcpServer, EnvVariable, HttpHeader, HttpMcpServer, McpServerStdio

from workbench.acp.client_servers import RefusedServer, join
from workbench.config.mcp_servers import parse_server
from workbench.config.settings import Settings


def test_stdio_and_http_servers_join_beside_the_configured_ones(tmp_path: Path) -> None:
    settings = Settings(workspace=tmp_path, mcp_servers={"docs": parse_server("docs", {"command": "docs-server"})})
    given = [
        McpServerStdio(name="docs", command="/bin/zed-docs", args=["--stdio"], env=[EnvVariable(name="A", value="1")]),
        HttpMcpServer(
            type="http", name="my tools!", url="http://127.0.0.1:9/mcp", headers=[HttpHeader(name="X", value="y")]
        ),
    ]
    joined = join(settings, given)
    assert sorted(joined.mcp_servers) == ["docs", "docs-client", "my_tools"]
    stdio = joined.mcp_servers["docs-client"]
    assert (stdio.command, stdio.args, stdio.env, stdio.sandboxed, stdio.network) == (
        "/bin/zed-docs",
        ("--stdio",),
        (("A", "1"),),
        True,
        False,
    )
    assert joined.mcp_servers["my_tools"].url == "http://127.0.0.1:9/mcp"
    assert settings.mcp_servers.keys() == {"docs"}  # the settings given are left as they were
    assert join(settings, []) is settings


def test_a_transport_workbench_does_not_speak_is_refused_by_name(tmp_path: Path) -> None:
    with pytest.raises(RefusedServer, match="'bridge': the acp transport is not supported"):
        join(Settings(workspace=tmp_path), [AcpMcpServer(type="acp", name="bridge", server_id="1")])
    with pytest.raises(RefusedServer, match="MCP server 'empty' from the client"):
        join(Settings(workspace=tmp_path), [McpServerStdio(name="empty", command="", args=[], env=[])])
