"""A closed terminal (a real SIGHUP to a `workbench run` client) under an engine: by default the
hosted run goes on without its client; with `engine_hangup = cancel` the client cancels it first
(issue 32 item 4). Real engine, real client processes, the scripted model server."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

from tests.scripted_server import ScriptedModel, call, reply
from tests.service.test_engine import RUN_TIMEOUT, live_sessions, run_args, workbench_cmd
from tests.waiting import until_blocking

pytestmark = [pytest.mark.slow, pytest.mark.tmux]


def _client(model: ScriptedModel, workspace: Path, data: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        workbench_cmd(*run_args(model, workspace, data, "--engine", "require", "go")),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1", **env},
    )


def test_a_closed_terminal_leaves_the_hosted_run_going_by_default(
    scripted_model: ScriptedModel, workspace: Path, data: Path
) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    scripted_model.add(
        reply("", call("read_file", path="a.txt")), reply("", call("ls", path="."), delay=3), reply("kept going")
    )
    client = _client(scripted_model, workspace, data, {})
    until_blocking(lambda: len(scripted_model.requests) >= 2, RUN_TIMEOUT, "the second model call")
    client.send_signal(signal.SIGHUP)
    client.communicate(timeout=30)
    assert client.returncode == -signal.SIGHUP
    until_blocking(lambda: len(scripted_model.requests) >= 3, 60, "the run's third model call, without its client")


def test_engine_hangup_cancel_cancels_the_run_when_its_terminal_closes(
    scripted_model: ScriptedModel, workspace: Path, data: Path
) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    scripted_model.add(reply("", call("read_file", path="a.txt")), reply("never", delay=30), reply("not asked"))
    client = _client(scripted_model, workspace, data, {"WORKBENCH_ENGINE_HANGUP": "cancel"})
    until_blocking(lambda: len(scripted_model.requests) >= 2, RUN_TIMEOUT, "the second model call")
    client.send_signal(signal.SIGHUP)
    _out, err = client.communicate(timeout=30)
    assert client.returncode == 129, err
    assert "workbench: cancelled by a closed terminal (SIGHUP) after" in err
    until_blocking(lambda: not any("running" in line for line in live_sessions(data)), 30, "the run to end")
    assert len(scripted_model.requests) == 2
