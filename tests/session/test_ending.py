"""No sandbox outlives the app, however it ends while its sandbox starts: a quit, its terminal
closed (SIGHUP), SIGTERM. The installed `workbench` command in a real tmux pane on the demo model,
real bwrap and tmux behind a stand-in (`tests/bwrap_stand_ins.py`) that holds the sandbox's start
in the window the test is about. kill -9 is in tests/terminal/test_sandbox_server.py."""

from __future__ import annotations

import json
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


def _launch(tmp_path: Path, socket: str, config: str) -> tuple[int, Path]:
    """The demo in a tmux pane whose process is the app itself, with `config` as the person's
    config; the app's pid and its data folder once it shows its first frame."""
    assert WORKBENCH.exists(), f"{WORKBENCH} is not installed (pip install -e .)"
    workspace, data = tmp_path / "empty", tmp_path / "d"
    workspace.mkdir()
    user_config = Path(os.environ["XDG_CONFIG_HOME"]) / "workbench" / "config.toml"
    user_config.parent.mkdir(parents=True)
    user_config.write_text(config)
    app = [str(WORKBENCH), "--model", "demo", "--workspace", str(workspace), "--data-dir", str(data)]
    env = {**os.environ, "TERM": "xterm-256color", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    new = ["tmux", "-L", socket, "-f", "/dev/null", "new-session", "-d", "-s", "tui", "-x", "150", "-y", "45"]
    subprocess.run([*new, *app], check=True, env=env)
    app_pid = int(tmux(socket, "display-message", "-p", "-t", "tui", "#{pane_pid}"))
    screen_until(socket, "demo (scripted")
    return app_pid, data


def _end(socket: str, app_pid: int, end: str) -> None:
    if end == "close the pane":
        tmux(socket, "kill-server")
    elif end == "SIGTERM":
        os.kill(app_pid, signal.SIGTERM)
    else:
        tmux(socket, "send-keys", "-t", "tui", "C-c")
        screen_until(socket, "again to quit", 10)
        tmux(socket, "send-keys", "-t", "tui", "C-c")
    until_blocking(lambda: not pid_alive(app_pid), 30, "the app to end")


def _end_leftovers(socket: str, name: str, data: Path) -> None:
    """What a failing run left: never left on the shared machine."""
    tmux(socket, "kill-server")
    deadline = time.monotonic() + 5  # a stand-in that sleeps may start bwrap a moment later
    while name and session_processes(name) and time.monotonic() < deadline:
        kill_marked(name)
        time.sleep(0.1)
    reap_orphans(data)


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
    socket, flag, name = f"wb-e2e-{uuid.uuid4().hex[:8]}", tmp_path / "spawned", ""
    app_pid, data = _launch(tmp_path, socket, f'bwrap_path = "{stand_in(tmp_path, bwrap, flag)}"\n')
    try:
        tmux(socket, "send-keys", "-t", "tui", "quick hello", "Enter")  # the session starts its terminal
        until_blocking(lambda: flag.exists() and flag.read_text().strip(), 60, "the sandbox's start")
        name = marker_of(int(flag.read_text()))
        assert name.startswith("workbench-"), name
        if bwrap == "detached":
            until_blocking(lambda: sandboxed_server(name), 30, "the detached sandbox's tmux server")
        _end(socket, app_pid, end)
        until_blocking(lambda: not session_processes(name), 10, f"every process of {name} to end")
    finally:
        _end_leftovers(socket, name, data)


@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
def test_an_unsandboxed_tmux_server_ends_with_the_app_whose_pane_closed(tmp_path: Path) -> None:
    """With the sandbox off the server is tmux's own daemon: nothing binds it to the app. Before,
    a closed pane left it running until the next start's reaper."""
    socket, name = f"wb-e2e-{uuid.uuid4().hex[:8]}", ""
    app_pid, data = _launch(tmp_path, socket, 'sandbox = "off"\n')
    try:
        tmux(socket, "send-keys", "-t", "tui", "quick hello", "Enter")

        def started() -> str:
            for path in (data / "terminals").glob("workbench-*.json"):
                record = json.loads(path.read_text() or "{}")
                if record.get("server_pid"):
                    return str(record["socket_name"])
            return ""

        until_blocking(started, 60, "the session's tmux server")
        name = started()
        assert session_processes(name)
        _end(socket, app_pid, "close the pane")
        until_blocking(lambda: not session_processes(name), 10, f"every process of {name} to end")
    finally:
        _end_leftovers(socket, name, data)
