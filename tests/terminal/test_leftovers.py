"""Every process started from a session's shells ends with the session, also after kill -9."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

from tests.cli.test_cli import args as cli_args
from tests.scripted_server import ScriptedModel, call, reply
from tests.tools.test_shell import Term
from tests.waiting import until, until_blocking
from workbench.terminal.host import TerminalHost
from workbench.terminal.leftovers import make_cgroup, reap_orphans, records_dir
from workbench.terminal.processes import cmdline, pid_alive

pytestmark = pytest.mark.tmux

# Each escape writes the pid of a `sleep` that must not outlive the session.
ESCAPES = {
    "disown": "sleep 3001 & echo $! > {d}/disown; disown",
    "subshell": "(sleep 3002 & echo $! > {d}/subshell)",
    "nohup": "nohup sleep 3003 > /dev/null 2>&1 & echo $! > {d}/nohup",
    "setsid": "setsid sh -c 'echo $$ > {d}/setsid; exec sleep 3004' &",
    "trap_hup": "(trap '' HUP; sleep 3005 & echo $! > {d}/trap_hup)",
    "env_i": "env -i sh -c 'echo $$ > {d}/env_i; exec sleep 3006' &",
    "setsid_env_i": "setsid env -i sh -c 'echo $$ > {d}/setsid_env_i; exec sleep 3007' &",
}
# Without a cgroup only the marker in the environment and the terminal session find them: a
# program that clears its environment AND leaves the terminal session gets out.
ESCAPE_WITHOUT_CGROUP = {"setsid_env_i"}


async def _server_running(socket: str) -> bool:
    proc = await asyncio.create_subprocess_exec("tmux", "-L", socket, "has-session", stderr=subprocess.DEVNULL)
    return await proc.wait() == 0


def _cgroup_usable() -> bool:
    probe = make_cgroup(f"probe-{uuid.uuid4().hex[:8]}")
    if probe is None:
        return False
    probe.rmdir()
    return True


async def _start_escapes(term: Term, folder: Path) -> dict[str, int]:
    command = "\n".join(e.format(d=folder) for e in ESCAPES.values()) + "\necho started"
    assert (await term.ok("bash", command=command)).endswith("started\n")
    pids = {}
    for name in ESCAPES:
        path = folder / name  # the background ones write their pid a moment later
        await until(lambda path=path: path.exists() and path.read_text().strip() != "")  # type: ignore[misc]
        pids[name] = term.host.sandbox.host_pid(int(path.read_text()))  # $$ in a sandbox is its own
    assert all(pid_alive(pid) for pid in pids.values()), pids
    return pids


def _host_pids() -> list[int]:
    return [int(entry) for entry in os.listdir("/proc") if entry.isdigit()]


async def _gone(pids: dict[str, int]) -> set[str]:
    """The escapes still alive after a few seconds' grace for the kernel to reap them."""
    for _ in range(100):
        alive = {name for name, pid in pids.items() if pid_alive(pid)}
        if not alive:
            return alive
        await asyncio.sleep(0.05)
    return alive


@pytest.mark.parametrize(
    ("cgroup", "sandbox"),
    [(True, "off"), (False, "off"), (False, "workspace-write")],
    ids=["cgroup", "marker", "sandbox"],
)
async def test_closing_the_host_ends_every_background_escape(
    cgroup: bool, sandbox: str, workspace: Path, tmp_path: Path
) -> None:
    if cgroup and not _cgroup_usable():
        pytest.skip("no cgroup v2 delegation here")
    host = TerminalHost(f"wbtest-{uuid.uuid4().hex[:10]}", use_cgroup=cgroup)
    term = Term(host, workspace, tmp_path)
    term.settings.sandbox = sandbox
    try:
        pids = await _start_escapes(term, workspace)  # the sandbox's /tmp is its own
    finally:
        await host.close()
    alive = await _gone(pids)
    # the sandbox's pid namespace ends with it: nothing escapes, cgroup or not
    expected = set() if cgroup or sandbox != "off" else ESCAPE_WITHOUT_CGROUP
    for name in alive - expected:
        os.kill(pids[name], signal.SIGKILL)
    assert alive == expected
    for name in alive:
        os.kill(pids[name], signal.SIGKILL)


async def test_stopping_one_agent_leaves_the_other_agents_commands_running(workspace: Path, tmp_path: Path) -> None:
    host = TerminalHost(f"wbtest-{uuid.uuid4().hex[:10]}")
    term = Term(host, workspace, tmp_path)
    try:
        await term.ok("bash", agent="a2", command=f"nohup sleep 3011 > /dev/null 2>&1 & echo $! > {workspace}/other")
        other = host.sandbox.host_pid(int((workspace / "other").read_text()))  # $! in the sandbox is its own
        await term.ok("bash", agent="a1", command="echo here")
        await host.stop_agent("a1")
        assert pid_alive(other)
        assert await term.ok("bash", agent="a2", command="echo still") == "still\n"
    finally:
        await host.close()
    assert not await _gone({"other": other})


OWNER = textwrap.dedent(
    """
    import asyncio, json, sys
    from pathlib import Path
    from workbench.config.settings import Settings
    from workbench.pb import workbench_pb2 as pb
    from workbench.tools.registry import Toolbox, ToolContext
    from workbench.terminal.host import TerminalHost

    async def main(data: Path, ws: Path, socket: str, command: str) -> None:
        host = TerminalHost(socket, data_dir=data, session_id="s-orphan")
        # unsandboxed: a sandbox ends with its owner (bwrap --die-with-parent: test_sandbox.py)
        settings = Settings(workspace=ws, data_dir=data, sandbox="off")
        ctx = ToolContext(workspace=ws, settings=settings, session_dir=data / "s", terminal=host)
        call = pb.ToolCall(id="c1", name="bash", arguments=json.dumps({"command": command, "timeout": 600}))
        result = await Toolbox(["bash"]).invoke(call, ctx)
        print(json.dumps({"output": result.output, "dir": str(host.dir), "server": host.server_pid,
                          "socket": host.socket_path}), flush=True)
        await asyncio.sleep(600)  # killed with SIGKILL by the test

    asyncio.run(main(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[4]))
    """
)


async def test_reap_orphans_ends_what_a_killed_owner_left(workspace: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    socket = f"wbtest-{uuid.uuid4().hex[:10]}"
    command = (
        f"nohup sleep 3021 > /dev/null 2>&1 & echo $! > {tmp_path}/nohup; "
        f"setsid sh -c 'echo $$ > {tmp_path}/setsid; exec sleep 3022' & sleep 0.1; echo started"
    )
    owner = await asyncio.create_subprocess_exec(
        sys.executable, "-c", OWNER, str(data), str(workspace), socket, command, stdout=subprocess.PIPE
    )
    assert owner.stdout is not None
    line = await asyncio.wait_for(owner.stdout.readline(), 60)
    info = json.loads(line)
    assert info["output"].endswith("started\n")
    leftovers = {"nohup": int((tmp_path / "nohup").read_text()), "setsid": int((tmp_path / "setsid").read_text())}
    leftovers["server"] = info["server"]
    assert reap_orphans(data) == []  # its owner is alive: not an orphan
    owner.kill()  # SIGKILL: no cleanup runs
    await owner.wait()
    assert all(pid_alive(pid) for pid in leftovers.values()), "kill -9 left them running"
    assert await _server_running(socket)

    assert reap_orphans(data) == ["s-orphan"]
    assert not await _gone(leftovers)
    assert not await _server_running(socket)
    assert not Path(info["dir"]).exists()
    assert not Path(info["socket"]).exists()
    assert list(records_dir(data).iterdir()) == []
    assert reap_orphans(data) == []


@pytest.mark.parametrize("end", ["finished", "sigterm"])
def test_a_workbench_run_leaves_no_process_behind(
    end: str, scripted_model: ScriptedModel, workspace: Path, tmp_path: Path
) -> None:
    command = (
        "setsid sh -c 'exec sleep 3041' &\nnohup sleep 3042 > /dev/null 2>&1 &\n"
        "(trap '' HUP; sleep 3043 &)\nsleep 0.2; echo started"
    )
    last = reply("done") if end == "finished" else reply("slow", delay=30)
    scripted_model.add(reply("", call("bash", command=command)), last)
    argv = [sys.executable, "-m", "workbench.cli.main", *cli_args(scripted_model, workspace, tmp_path, "go")]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if end == "sigterm":
        until_blocking(lambda: len(scripted_model.requests) >= 2, 60, "the second model call")
        proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == (0 if end == "finished" else 143), err
    assert "started" in json.dumps(scripted_model.requests[1])  # the sleeps were started
    # found by command line: pids written inside the sandbox are its own namespace's
    sleeps = {f"sleep\x00{n}\x00".encode() for n in (3041, 3042, 3043)}
    pids = {str(pid): pid for pid in _host_pids() if cmdline(pid) in sleeps}
    alive = asyncio.run(_gone(pids))
    for name in alive:
        os.kill(pids[name], signal.SIGKILL)
    assert not alive


def test_empty_session_cgroups_left_by_killed_owners_are_removed(tmp_path: Path) -> None:
    from workbench.terminal.leftovers import _remove_empty_cgroups, join_cgroup

    if not _cgroup_usable():
        pytest.skip("no cgroup v2 delegation here")
    empty = make_cgroup(f"wbtest-empty-{uuid.uuid4().hex[:8]}")
    busy = make_cgroup(f"wbtest-busy-{uuid.uuid4().hex[:8]}")
    assert empty is not None and busy is not None
    sleeper = subprocess.Popen(["sleep", "60"], preexec_fn=lambda: join_cgroup(busy))
    try:
        _remove_empty_cgroups(older_than=0)
        assert not empty.exists()
        assert busy.exists()  # a cgroup with a process in it is never removed
    finally:
        sleeper.kill()
        sleeper.wait()
    _remove_empty_cgroups(older_than=0)
    assert not busy.exists()
