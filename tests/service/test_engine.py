"""The engine service (issue 32) as a person meets it: real engine processes, real Unix sockets,
real `workbench` client processes, litellm's real HTTP path to the scripted server.

Nothing is mocked. Each test has a data folder (so an engine) of its own and stops it at the end;
an engine killed on purpose is found by its lock file's pid.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

import workbench
from tests.scripted_server import ScriptedModel, call, reply
from tests.waiting import until_blocking
from workbench.service.place import engine_place

pytestmark = [pytest.mark.slow, pytest.mark.tmux]  # an engine imports litellm; a session starts tmux
RUN_TIMEOUT = 180  # seconds for one client process (a new engine imports litellm first)


def workbench_cmd(*argv: str | Path) -> list[str]:
    return [sys.executable, "-m", "workbench.cli.main", *map(str, argv)]


def wb(*argv: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        workbench_cmd(*argv), capture_output=True, text=True, timeout=RUN_TIMEOUT, env=env or dict(os.environ)
    )


def run_args(model: ScriptedModel, workspace: Path, data: Path, *extra: str) -> list[str | Path]:
    return [
        "run", "--model", "openai/scripted", "--api-base", model.url, "--workspace", workspace,
        "--data-dir", data, "--sandbox", "off", *extra,
    ]  # fmt: skip


def engine_pid(data: Path) -> int:
    status = wb("engine", "status", "--data-dir", data)
    assert status.returncode == 0, status.stdout + status.stderr
    return int(status.stdout.split("pid ", 1)[1].split(",", 1)[0])


def live_sessions(data: Path) -> list[list[str]]:
    """`engine status`'s session lines, each split: id, state words..., pid."""
    out = wb("engine", "status", "--data-dir", data).stdout
    return [line.split() for line in out.splitlines() if line.startswith("  ")]


def test_runs_in_the_engine_answer_as_in_process_and_share_one_engine(
    scripted_model: ScriptedModel, workspace: Path, data: Path
) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    scripted_model.add(reply("", call("read_file", path="a.txt")), reply("first answer"), reply("second answer"))
    first = wb(*run_args(scripted_model, workspace, data, "--engine", "require", "go"))
    assert first.returncode == 0, first.stderr
    assert first.stdout == "first answer\n"
    assert "workbench: session " in first.stderr and "> read_file" in first.stderr and "ok (" in first.stderr
    pid = engine_pid(data)
    second = wb(*run_args(scripted_model, workspace, data, "--engine", "require", "again"))
    assert second.returncode == 0 and second.stdout == "second answer\n", second.stderr
    assert engine_pid(data) == pid  # the same engine served both


def test_each_session_takes_its_client_s_environment_and_the_engine_holds_no_key(
    scripted_model: ScriptedModel, workspace: Path, data: Path
) -> None:
    scripted_model.add(reply("one"), reply("two"))
    for key in ("key-one-0123456789", "key-two-0123456789"):
        env = {**os.environ, "WORKBENCH_API_KEY": key}
        ran = wb(*run_args(scripted_model, workspace, data, "--engine", "require", "go"), env=env)
        assert ran.returncode == 0, ran.stderr
    assert scripted_model.authorizations == ["Bearer key-one-0123456789", "Bearer key-two-0123456789"]
    environ = Path(f"/proc/{engine_pid(data)}/environ").read_bytes()
    assert b"key-one" not in environ and b"key-two" not in environ


def test_a_killed_session_process_is_one_line_and_the_session_resumes(
    scripted_model: ScriptedModel, workspace: Path, data: Path
) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    scripted_model.add(reply("", call("read_file", path="a.txt")), reply("never", delay=60))
    client = subprocess.Popen(
        workbench_cmd(*run_args(scripted_model, workspace, data, "--engine", "require", "go")),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    until_blocking(lambda: len(scripted_model.requests) >= 2, 120, "the second model call")
    (session,) = live_sessions(data)
    os.kill(int(session[-1].rstrip(")")), signal.SIGKILL)
    _out, err = client.communicate(timeout=30)
    assert client.returncode == 75, err
    lines = [line for line in err.splitlines() if "ended mid-run" in line]
    assert len(lines) == 1 and f"--resume {session[0]}" in lines[0], err
    scripted_model.add(reply("resumed"))
    resumed = wb(*run_args(scripted_model, workspace, data, "--engine", "require", "--resume", session[0], "again"))
    assert resumed.returncode == 0 and resumed.stdout == "resumed\n", resumed.stderr


def test_a_killed_client_leaves_its_run_going_and_two_followers_see_the_same_events(
    scripted_model: ScriptedModel, workspace: Path, data: Path
) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    scripted_model.add(
        reply("", call("read_file", path="a.txt"), delay=2), reply("", call("ls", path="."), delay=2), reply("done")
    )
    client = subprocess.Popen(
        workbench_cmd(*run_args(scripted_model, workspace, data, "--engine", "require", "go")),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    until_blocking(lambda: len(scripted_model.requests) >= 1, 120, "the first model call")
    client.kill()
    client.wait()
    (session,) = live_sessions(data)
    assert session[1] == "running", session
    listed = [line for line in wb("sessions", "--data-dir", data).stdout.splitlines() if line.startswith(session[0])]
    assert len(listed) == 1 and "running (engine)" in listed[0], listed  # `workbench sessions` says it too
    followers = [
        subprocess.Popen(
            workbench_cmd("attach", session[0], "--jsonl", "--data-dir", data), stdout=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    outputs = [f.communicate(timeout=60)[0] for f in followers]
    assert [f.returncode for f in followers] == [0, 0]
    events = [[json.loads(line) for line in out.splitlines()] for out in outputs]
    seqs = [[int(e["seq"]) for e in each] for each in events]
    assert seqs[0] == seqs[1] and seqs[0] == list(range(1, len(seqs[0]) + 1)), seqs  # all, in order, once
    assert any(e.get("message", {}).get("text") == "done" for e in events[0])


def test_another_user_cannot_reach_the_engine(workspace: Path, data: Path) -> None:
    assert wb("engine", "start", "--data-dir", data).returncode == 0
    place = engine_place(data)

    def connect_as_nobody() -> str:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: another user's process
            os.close(read)
            try:
                os.setgid(65534)
                os.setuid(65534)
                s = socket.socket(socket.AF_UNIX)
                s.settimeout(5)
                s.connect(str(place.socket))
                s.sendall(b"\0\0\0\0")
                answer = s.recv(64)
                os.write(write, b"answered" if answer else b"hung up")
            except OSError as err:
                os.write(write, type(err).__name__.encode())
            os._exit(0)
        os.close(write)
        os.waitpid(pid, 0)
        with os.fdopen(read) as fh:
            return fh.read()

    assert connect_as_nobody() == "PermissionError"  # the folder is 0700
    os.chmod(place.folder.parent, 0o755)
    os.chmod(place.folder, 0o755)
    os.chmod(place.socket, 0o777)
    try:
        assert connect_as_nobody() in ("hung up", "ConnectionResetError", "BrokenPipeError")  # SO_PEERCRED: no hello
    finally:
        os.chmod(place.folder, 0o700)
        os.chmod(place.folder.parent, 0o700)


def test_starts_at_once_give_one_engine_and_a_crashed_one_is_replaced(data: Path) -> None:
    starts = [
        subprocess.Popen(workbench_cmd("engine", "start", "--data-dir", data), stdout=subprocess.PIPE, text=True)
        for _ in range(3)
    ]
    said = [s.communicate(timeout=RUN_TIMEOUT)[0] for s in starts]
    assert [s.returncode for s in starts] == [0, 0, 0]
    pids = {line.split("pid ", 1)[1].split(",", 1)[0] for line in said}
    assert len(pids) == 1, said
    crashed = int(pids.pop())
    os.kill(crashed, signal.SIGKILL)
    assert engine_place(data).socket.exists()  # what the crash left
    # a start that lost the race may still wait for the lock and take over; else the next start does
    assert wb("engine", "start", "--data-dir", data).returncode == 0
    assert engine_pid(data) not in (0, crashed)


def test_an_engine_of_another_version_makes_way_when_idle(
    scripted_model: ScriptedModel, workspace: Path, data: Path
) -> None:
    assert wb("engine", "start", "--data-dir", data).returncode == 0
    old = engine_pid(data)
    source = Path(workbench.__file__).parent / "service" / "__init__.py"
    st = source.stat()
    os.utime(source, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))  # as an upgrade or an edit would
    try:
        scripted_model.add(reply("new engine"))
        ran = wb(*run_args(scripted_model, workspace, data, "--engine", "require", "go"))
        assert ran.returncode == 0 and ran.stdout == "new engine\n", ran.stderr
        assert engine_pid(data) != old
    finally:
        os.utime(source, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_auto_runs_in_process_when_no_engine_answers_and_starts_one_for_next_time(
    scripted_model: ScriptedModel, workspace: Path, data: Path, tmp_path: Path
) -> None:
    scripted_model.add(reply("in-process"))
    ran = wb(*run_args(scripted_model, workspace, data, "--engine", "auto", "go"))
    assert ran.returncode == 0 and ran.stdout == "in-process\n", ran.stderr
    deadline = time.monotonic() + 120
    while wb("engine", "status", "--data-dir", data).returncode != 0:
        assert time.monotonic() < deadline, "no engine started for the next run"
        time.sleep(0.2)
    # a place the engine cannot use: auto still runs, require says why in one line
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    (runtime / "workbench").write_text("not a folder")
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime)}
    scripted_model.add(reply("still runs"))
    other = tmp_path / "other-data"
    ran = wb(*run_args(scripted_model, workspace, other, "--engine", "auto", "go"), env=env)
    assert ran.returncode == 0 and ran.stdout == "still runs\n", ran.stderr
    refused = wb(*run_args(scripted_model, workspace, other, "--engine", "require", "go"), env=env)
    assert refused.returncode == 2 and "engine = require" in refused.stderr and "Traceback" not in refused.stderr


def test_a_crashed_engine_leaves_its_sessions_running_and_the_next_one_adopts_them(
    scripted_model: ScriptedModel, workspace: Path, data: Path
) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    scripted_model.add(reply("", call("read_file", path="a.txt"), delay=1), reply("done after the crash", delay=12))
    detached = wb(*run_args(scripted_model, workspace, data, "--engine", "require", "--detach", "go"))
    assert detached.returncode == 0, detached.stderr
    session_id = detached.stdout.strip()
    crashed = engine_pid(data)
    os.kill(crashed, signal.SIGKILL)
    assert wb("engine", "start", "--data-dir", data).returncode == 0
    assert engine_pid(data) != crashed
    assert [s[0] for s in live_sessions(data)] == [session_id]  # adopted by the new engine
    follow = wb("attach", session_id, "--jsonl", "--data-dir", data)
    assert follow.returncode == 0, follow.stderr
    texts = [json.loads(line).get("message", {}).get("text") for line in follow.stdout.splitlines()]
    assert "done after the crash" in texts
