"""`workbench mcp list`, `workbench mcp call` and doctor's server lines, with the probe server in the user config."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.mcp.conftest import PROBE
from tests.scripted_server import ScriptedModel, reply
from workbench.cli.main import main
from workbench.config.settings import Settings
from workbench.session.doctor import main as doctor

pytestmark = pytest.mark.slow


def user_config(tmp_path: Path, text: str) -> None:
    folder = Path(os.environ["XDG_CONFIG_HOME"]) / "workbench"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.toml").write_text(text)


PROBE_TABLE = f'[mcp.servers.probe]\ncommand = "{sys.executable}"\nargs = ["{PROBE}"]\n'


def test_list_and_call(tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    user_config(tmp_path, PROBE_TABLE)
    where = ["--workspace", str(workspace), "--data-dir", str(tmp_path / "data")]
    assert main(["mcp", "list", *where]) == 0
    out = capsys.readouterr().out
    assert "probe: " in out and "(sandboxed, network off): ready in" in out and "  probe__echo" in out
    assert main(["mcp", "call", "probe__echo", '{"text": "by hand \\u001b[31m"}', *where]) == 0
    assert capsys.readouterr().out == "by hand \\x1b[31m\n"  # a tool's text is data: no escape reaches the terminal
    assert main(["mcp", "call", "probe__refuse", "{}", *where]) == 1
    assert "refused: no" in capsys.readouterr().err
    assert main(["mcp", "call", "probe__echo", "[1]", *where]) == 2
    assert "one JSON object" in capsys.readouterr().err


def test_doctor_checks_each_server(tmp_path: Path) -> None:
    from tests.mcp.conftest import probe
    from workbench.config.mcp_servers import parse_server

    servers = {
        "probe": probe(),
        "gone": parse_server("gone", {"command": "/nonexistent/x", "sandbox": "off", "timeout": 5}),
    }
    settings = Settings(data_dir=tmp_path / "data", mcp_servers=servers)
    import io

    out = io.StringIO()
    assert doctor(settings, out) == 1
    text = out.getvalue()
    assert "ok   mcp probe: probe: " in text and "FAIL mcp gone: gone: /nonexistent/x (sandbox off)" in text


def test_the_header_names_the_servers_and_those_without_sandbox(
    scripted_model: ScriptedModel, workspace: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    user_config(tmp_path, PROBE_TABLE + PROBE_TABLE.replace("probe]", "loose]") + 'sandbox = "off"\n')
    scripted_model.add(reply("fine"))
    argv = ["run", "--model", "openai/scripted", "--api-base", scripted_model.url, "--workspace", str(workspace)]
    assert main([*argv, "--data-dir", str(tmp_path / "d"), "hello"]) == 0
    header = capsys.readouterr().err.splitlines()[0]
    assert header.endswith(" · MCP probe, loose (sandbox off)")
