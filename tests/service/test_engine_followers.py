"""Two clients attached to one hosted run of 10,000 events each see every event once, in order
(issue 32 item 5 at scale): real engine, `workbench attach ID --jsonl` client processes."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.scripted_server import ScriptedModel, call, reply
from tests.service.test_engine import RUN_TIMEOUT, run_args, wb, workbench_cmd

pytestmark = [pytest.mark.slow, pytest.mark.tmux]
CALLS = 2_000  # read_file calls of missing files in one turn: 5 events each


def test_two_followers_of_a_10000_event_run_see_every_event_once(
    scripted_model: ScriptedModel, workspace: Path, data: Path
) -> None:
    scripted_model.add(reply("", *[call("read_file", path=f"m{i}.txt") for i in range(CALLS)], delay=2), reply("done"))
    started = wb(*run_args(scripted_model, workspace, data, "--engine", "require", "--detach", "go"))
    assert started.returncode == 0, started.stderr
    session_id = started.stdout.strip()
    attach = workbench_cmd("attach", session_id, "--jsonl", "--data-dir", data)
    followers = [
        subprocess.Popen(attach, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ))
        for _ in range(2)
    ]
    seen = []
    for follower in followers:
        out, err = follower.communicate(timeout=RUN_TIMEOUT)
        assert follower.returncode == 0, err
        seen.append([int(json.loads(line)["seq"]) for line in out.splitlines()])
    assert len(seen[0]) >= 10_000
    assert seen[0] == seen[1] == list(range(1, len(seen[0]) + 1))
