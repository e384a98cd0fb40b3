"""MCP fixtures: the probe server (tests/mcp/probe_server.py, the SDK's MCPServer) over stdio and HTTP."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from workbench.config.mcp_servers import McpServer, parse_server
from workbench.config.settings import Settings

PROBE = Path(__file__).with_name("probe_server.py")
# The session ids of the tests' managers, unique per test process: closing a manager kills every
# process on the machine that carries its marker (`mcp-ID`), so with "s1" in every run, one run's
# close killed the servers of another run's tests going on at the same time (CI with 9 agents).
S1, S2 = f"s1-{os.getpid()}", f"s2-{os.getpid()}"


def probe_table(**extra: object) -> dict[str, object]:
    return {"command": sys.executable, "args": [str(PROBE)], **extra}


def probe(name: str = "probe", **extra: object) -> McpServer:
    """The probe server over stdio (sandboxed unless `sandbox="off"`)."""
    return parse_server(name, probe_table(**extra))


def with_servers(settings: Settings, *servers: McpServer) -> Settings:
    return replace(settings, mcp_servers={s.name: s for s in servers})


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def http_probe() -> Iterator[str]:
    """The probe server over Streamable HTTP on 127.0.0.1: its URL."""
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, str(PROBE), "--http", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.kill()
        proc.wait()
