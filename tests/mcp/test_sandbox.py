"""A stdio MCP server in its sandbox: the session's filesystem policy, no network, no secrets."""

from __future__ import annotations

import asyncio
import shutil
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.mcp.conftest import probe, with_servers
from tests.mcp.test_manager import call, context, started
from workbench.config.settings import Settings
from workbench.mcp.launch import stdio_parameters
from workbench.tools.registry import Toolbox

pytestmark = pytest.mark.sandbox


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A TCP port on the host's 127.0.0.1 that accepts connections."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    yield sock
    sock.close()


async def test_a_sandboxed_server_writes_only_where_the_session_may(
    settings: Settings, tmp_path: Path, listener: socket.socket, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-of-the-person")
    outside = Path(tempfile.mkdtemp(dir="/var/tmp"))  # writable on the host, not under the sandbox's own /tmp
    manager = await started(with_servers(settings, probe(timeout=10)))
    try:
        assert manager.connections["probe"].state == "ready", manager.connections["probe"].reason
        box = Toolbox(manager.patterns(), manager)
        ctx = context(settings, [])
        inside = settings.workspace / "made-by-server.txt"
        wrote = await call(box, ctx, "probe__write_file", f'{{"path": "{inside}"}}')
        assert not wrote.is_error and inside.read_text() == "x"
        refused = await call(box, ctx, "probe__write_file", f'{{"path": "{outside / "escape.txt"}"}}')
        assert refused.is_error and "Read-only file system" in refused.error
        assert not (outside / "escape.txt").exists()
        data = await call(box, ctx, "probe__write_file", f'{{"path": "{settings.data_dir / "x.txt"}"}}')
        assert data.is_error and not (settings.data_dir / "x.txt").exists()
        port = listener.getsockname()[1]
        cut = await asyncio.wait_for(call(box, ctx, "probe__connect", f'{{"host": "127.0.0.1", "port": {port}}}'), 30)
        assert cut.is_error and ("refused" in cut.error or "unreachable" in cut.error), cut.error
        secret = await call(box, ctx, "probe__environment", '{"name": "OPENAI_API_KEY"}')
        assert secret.output == "(unset)"
    finally:
        await manager.close()
        shutil.rmtree(outside, ignore_errors=True)


async def test_network_and_env_per_server(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROBE_TOKEN", "tok-123")
    server = probe(network=True, env={"GIVEN": "${PROBE_TOKEN}"})
    params = stdio_parameters(settings, server, settings.data_dir / "scratch", "m")
    assert "--unshare-net" not in params.args and params.env is not None and params.env["GIVEN"] == "tok-123"
    closed = stdio_parameters(settings, probe(), settings.data_dir / "scratch", "m")
    assert "--unshare-net" in closed.args and closed.command.endswith("bwrap")
    off = stdio_parameters(settings, probe(sandbox="off"), settings.data_dir / "scratch", "m")
    assert "bwrap" not in off.command and off.args == [str(Path(__file__).with_name("probe_server.py"))]


def test_what_a_server_runs_from_under_tmp_is_bound_read_only(tmp_path: Path) -> None:
    """A checkout or a virtual environment under /tmp (CI's clones): the sandbox's /tmp is empty, so the
    command's installation and the files its arguments name are bound back, read-only; never a folder
    that holds the workspace."""
    from workbench.config.mcp_servers import parse_server
    from workbench.mcp.launch import program_paths

    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text("")
    script = tmp_path / "server.py"
    script.write_text("")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    server = parse_server("s", {"command": str(venv / "bin" / "python"), "args": [str(script), "--flag", "/nope"]})
    assert program_paths(server, workspace) == [venv, script]
    around = parse_server("s", {"command": str(tmp_path / "tool"), "args": [str(workspace / "x")]})
    assert program_paths(around, workspace) == []  # tmp_path holds the workspace; the workspace is bound already
    system = parse_server("s", {"command": "/bin/sh", "args": []})
    assert program_paths(system, workspace) == []  # not under /tmp: `/` is visible read-only
