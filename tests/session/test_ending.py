"""No sandbox outlives the app, however it ends while its sandbox starts: a quit, its terminal
closed (SIGHUP), SIGTERM. The installed `workbench` command in a real tmux pane on the demo model,
real bwrap and tmux behind a stand-in (`tests/bwrap_stand_ins.py`) that holds the sandbox's start
in the window the test is about. kill -9 is in tests/terminal/test_sandbox_server.py."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.bwrap_stand_ins import marker_of, sandboxed_server, session_processes, stand_in
from tests.waiting import until_blocking
from workbench.terminal.leftovers import kill_marked, reap_orphans
from workbench.terminal.processes import pid_alive

pytestmark = [pytest.mark.tui, pytest.mark.tmux, pytest.mark.sandbox, pytest.mark.slow]

WORKBENCH = Path(sys.executable).with_name("workbench")


def tmux(socket: str, *args: str) -> str:
    return subprocess.run(["tmux", "-L", socket, *args], capture_output=True, text=True, check=False).stdout


def screen_until(socket: str, needle: str, timeout: float = 90.0) -> None:
    until_blocking(lambda: needle in tmux(socket, "capture-pane", "-p", "-t", "tui"), timeout, f"{needle!r} on screen")


@pytest.mark.skipif(shutil.which("tmux") is None or shutil.which("bwrap") is None, reason="needs tmux and bwrap")
@pytest.mark.parametrize(
    ("bwrap", "end"),
    [
        ("slow", "close the pane"),  # the defect seen: bwrap bound itself to init, after the app died
        ("slow", "SIGTERM"),
        ("slow", "quit"),
        ("detached", "close the pane"),  # a sandbox nothing binds to the app: its marks end it
        ("detached", "SIGTERM"),
    ],
)
def test_no_sandbox_outlives_the_app_that_ends_while_it_starts(bwrap: str, end: str, tmp_path: Path) -> None:
    assert WORKBENCH.exists(), f"{WORKBENCH} is not installed (pip install -e .)"
    workspace, data, flag = tmp_path / "empty", tmp_path / "d", tmp_path / "spawned"
    workspace.mkdir()
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "workbench" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f'bwrap_path = "{stand_in(tmp_path, bwrap, flag)}"\n')
    socket = f"wb-e2e-{uuid.uuid4().hex[:8]}"
    app = [str(WORKBENCH), "--model", "demo", "--workspace", str(workspace), "--data-dir", str(data)]
    env = {**os.environ, "TERM": "xterm-256color", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    new = ["tmux", "-L", socket, "-f", "/dev/null", "new-session", "-d", "-s", "tui", "-x", "150", "-y", "45"]
    subprocess.run([*new, *app], check=True, env=env)  # the pane's process is the app itself
    name = ""
    try:
        app_pid = int(tmux(socket, "display-message", "-p", "-t", "tui", "#{pane_pid}"))
        screen_until(socket, "demo (scripted")
        tmux(socket, "send-keys", "-t", "tui", "quick hello", "Enter")  # the session starts its terminal
        until_blocking(lambda: flag.exists() and flag.read_text().strip(), 60, "the sandbox's start")
        name = marker_of(int(flag.read_text()))
        assert name.startswith("workbench-"), name
        if bwrap == "detached":
            until_blocking(lambda: sandboxed_server(name), 30, "the detached sandbox's tmux server")
        if end == "close the pane":
            tmux(socket, "kill-server")
        elif end == "SIGTERM":
            os.kill(app_pid, signal.SIGTERM)
        else:
            tmux(socket, "send-keys", "-t", "tui", "C-c")
            screen_until(socket, "again to quit", 10)
            tmux(socket, "send-keys", "-t", "tui", "C-c")
        until_blocking(lambda: not pid_alive(app_pid), 30, "the app to end")
        until_blocking(lambda: not session_processes(name), 10, f"every process of {name} to end")
    finally:
        tmux(socket, "kill-server")
        deadline = time.monotonic() + 5  # what a failing run left: never left on the shared machine
        while name and session_processes(name) and time.monotonic() < deadline:
            kill_marked(name)
            time.sleep(0.1)
        reap_orphans(data)
