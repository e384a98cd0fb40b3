"""Workbench on Harbor, end to end: a real `harbor run` job (Harbor 0.25.0 in its own venv) with the
Workbench agent (integrations/harbor/workbench_harbor/agent.py) over three tasks written here in
Harbor's task format, against the scripted model server: one the model solves (reward 1), one it
fails (reward 0), one past the agent's timeout (reward 0, the trajectory so far kept), one whose model
call is refused (401: the trial ends with Workbench's reason), and a task of two steps whose second
continues the first's session (`--resume-trajectory`: `workbench run --resume ID`).

Docker is not here, so the environment is the local folder stand-in
(workbench_harbor/local_env.py: each trial a private folder bound at /app, /logs, /tests, ... by
bubblewrap), and Workbench is the one of this venv (`--ak workbench=...`), not a wheel installed per
trial. What Harbor records is read back from the job's folder: each trial's result.json (reward,
exception, agent context) and its agent/trajectory.json, validated with Harbor's validator."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.harbor_venv import ROOT, harbor_python
from tests.scripted_server import Router, ScriptedModel, call, error, reply

pytestmark = [pytest.mark.harbor, pytest.mark.slow]

TASK_TOML = """version = "1.0"

[agent]
timeout_sec = {agent_timeout}

[verifier]
timeout_sec = 60.0

[environment]
workdir = "/app"
"""

TEST_SH = """#!/bin/bash
if [ "$(cat /app/answer.txt 2>/dev/null)" = "{expected}" ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt
"""


def write_task(root: Path, name: str, instruction: str, expected: str, agent_timeout: float = 120.0) -> None:
    task = root / name
    (task / "tests").mkdir(parents=True)
    (task / "environment").mkdir()
    (task / "environment" / "Dockerfile").write_text("FROM ubuntu:24.04\nWORKDIR /app\n")  # not built here
    (task / "instruction.md").write_text(instruction + "\n")
    (task / "task.toml").write_text(TASK_TOML.format(agent_timeout=agent_timeout))
    (task / "tests" / "test.sh").write_text(TEST_SH.format(expected=expected))
    (task / "tests" / "test.sh").chmod(0o755)


STEPS_TOML = """version = "1.0"

[agent]
timeout_sec = 120.0

[verifier]
timeout_sec = 60.0

[environment]
workdir = "/app"

[[steps]]
name = "one"

[[steps]]
name = "two"
"""


def write_steps_task(root: Path) -> None:
    """A task of two steps; with --resume-trajectory the second continues the first's session."""
    task = root / "steps"
    (task / "environment").mkdir(parents=True)
    (task / "environment" / "Dockerfile").write_text("FROM ubuntu:24.04\nWORKDIR /app\n")
    (task / "task.toml").write_text(STEPS_TOML)
    for name, n in (("one", 1), ("two", 2)):
        step = task / "steps" / name
        (step / "tests").mkdir(parents=True)
        (step / "instruction.md").write_text(f"STEP{n}: write {n} to answer.txt\n")
        (step / "tests" / "test.sh").write_text(TEST_SH.format(expected=str(n)))
        (step / "tests" / "test.sh").chmod(0o755)


def test_a_harbor_job_of_three_tasks_records_rewards_and_trajectories(
    tmp_path: Path, scripted_model: ScriptedModel
) -> None:
    python = harbor_python()
    tasks = tmp_path / "tasks"
    write_task(tasks, "solve", "SOLVE: write 42 to answer.txt", "42")
    write_task(tasks, "fail", "FAIL: write 42 to answer.txt", "42")
    write_task(
        tasks, "slow", "SLOW: write 42 to answer.txt", "42", agent_timeout=40.0
    )  # the session starts well before, even under load
    write_task(tasks, "refused", "REFUSED: write 42 to answer.txt", "42")
    write_steps_task(tasks)
    router = Router(
        SOLVE=[reply("writing it", call("write_file", {"path": "answer.txt", "content": "42"})), reply("done")],
        FAIL=[reply("", call("write_file", {"path": "answer.txt", "content": "41"})), reply("done")],
        SLOW=[reply("thinking", delay=120.0)],
        REFUSED=[error(401, "Incorrect API key provided", code="invalid_api_key")],
        STEP1=[  # the second step's prompt reaches the same session: its first user message is step one's
            reply("", call("write_file", {"path": "answer.txt", "content": "1"})),
            reply("one done"),
            reply("", call("write_file", {"path": "answer.txt", "content": "2"})),
            reply("two done"),
        ],
    )
    scripted_model.add(*[router] * 12)
    jobs = tmp_path / "jobs"
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT / "integrations" / "harbor"),
        "OPENAI_API_KEY": "sk-test-key",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # Harbor's litellm: no fetch of the price list (offline)
        # this checkout and its venv, which the agent runs, may be under /tmp or /root (CI's clone):
        # the trial's own /tmp and /root hide them unless bound back
        "WORKBENCH_HARBOR_HOST_PATHS": str(ROOT),
    }
    argv = [
        str(python.parent / "harbor"),
        "run",
        "--path",
        str(tasks),
        "--agent",
        "workbench_harbor.agent:Workbench",
        "-m",
        "openai/scripted",
        "--ak",
        f"api_base={scripted_model.url}",
        "--ak",
        f"workbench={Path(sys.executable).parent / 'workbench'}",
        "--ae",
        "OPENAI_API_KEY=sk-test-key",
        "--resume-trajectory",  # a multi-step task's second step continues the first's session
        "--env",
        "workbench_harbor.local_env:LocalFolderEnvironment",
        "--n-concurrent",
        "5",
        "--jobs-dir",
        str(jobs),
        "--job-name",
        "wb",
        "--yes",
        "--quiet",
    ]
    started = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path)
    took = time.monotonic() - started
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    results = {}
    for path in (jobs / "wb").glob("*/result.json"):
        result = json.loads(path.read_text())
        results[result["task_name"]] = (result, path.parent)
    assert set(results) == {"solve", "fail", "slow", "refused", "steps"}, (sorted(results), done.stdout[-2000:])

    def reward(name: str) -> float:
        rewards = (results[name][0].get("verifier_result") or {}).get("rewards") or {}
        return float(rewards.get("reward", 0.0))

    assert (reward("solve"), reward("fail"), reward("slow"), reward("refused")) == (1.0, 0.0, 0.0, 0.0), took
    refused = results["refused"][0]["exception_info"]  # a model error ends the trial with Workbench's reason
    assert refused["exception_type"] == "RuntimeError" and "401" in refused["exception_message"], refused
    solved, solved_dir = results["solve"]
    assert solved["exception_info"] is None
    assert solved["agent_result"]["n_input_tokens"] == 20 and solved["agent_result"]["n_output_tokens"] == 10
    slow, slow_dir = results["slow"]
    assert "AgentTimeoutError" in json.dumps(slow["exception_info"])
    for trial_dir in (solved_dir, results["fail"][1], slow_dir):
        trajectory = trial_dir / "agent" / "trajectory.json"
        check = subprocess.run(
            [str(python), "-m", "harbor.utils.trajectory_validator", str(trajectory)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert check.returncode == 0, check.stdout + check.stderr
    steps = json.loads((solved_dir / "agent" / "trajectory.json").read_text())["steps"]
    assert steps[2]["tool_calls"][0]["function_name"] == "write_file"
    kept = json.loads((slow_dir / "agent" / "trajectory.json").read_text())["steps"]
    assert kept[1]["message"].startswith("SLOW:")  # the trajectory up to the signal
    steps, steps_dir = results["steps"]
    assert [(r["step_name"], r["verifier_result"]["rewards"]["reward"]) for r in steps["step_results"]] == [
        ("one", 1.0),
        ("two", 1.0),
    ]
    second = json.loads((steps_dir / "steps" / "two" / "agent" / "trajectory.json").read_text())
    prompts = [s["message"] for s in second["steps"] if s["source"] == "user"]
    assert [p.split(":")[0] for p in prompts] == ["STEP1", "STEP2"]  # one session, resumed
    print(f"harbor job of 5 trials: {took:.1f} s")
