"""Log lines of the libraries Workbench runs (the MCP SDK, asyncio) go to the log file in the data
folder, never to the person's terminal: the SDK's traceback for a server's unreadable line
printed itself over `workbench run`'s output (and would over the TUI)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.scripted_server import ScriptedModel, reply

pytestmark = pytest.mark.slow
GARBAGE = Path(__file__).with_name("garbage_server.py")


def test_the_mcp_sdks_traceback_goes_to_the_log_file_not_stderr(
    scripted_model: ScriptedModel, workspace: Path, tmp_path: Path
) -> None:
    config = tmp_path / "xdg-config" / "workbench" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(
        f"[mcp.servers.garbage]\ncommand = {json.dumps(sys.executable)}\nargs = [{json.dumps(str(GARBAGE))}]\n"
        'sandbox = "off"\nenv = { GARBAGE_AT = "start" }\n'
    )
    scripted_model.add(reply("done", delay=3))  # the server starts, and garbles, while the model thinks
    data = tmp_path / "data"
    done = subprocess.run(
        [sys.executable, "-m", "workbench.cli.main", "run", "--model", "openai/scripted",
         "--api-base", scripted_model.url, "--workspace", str(workspace), "--data-dir", str(data), "go"],
        capture_output=True, text=True, timeout=120,
        env={**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "xdg-config")},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    log = (data / "workbench.log").read_text()
    assert "Failed to parse JSONRPC message from server" in log, log[-3000:]
    assert "Traceback" not in done.stderr and "JSONRPC" not in done.stderr, done.stderr[-3000:]
