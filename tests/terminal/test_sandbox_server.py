"""The sandboxed tmux server never outlives the process that started it, even when that process
is killed with -9 while the sandbox is still starting (real bwrap and tmux, started by a real
TerminalHost in a process of its own; `tests/bwrap_stand_ins.py` widens the kernel's windows)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.bwrap_stand_ins import sandboxed_server, session_processes, stand_in
from tests.waiting import until_blocking
from workbench.config.settings import Settings
from workbench.terminal.leftovers import kill_marked, reap_orphans

pytestmark = [pytest.mark.tmux, pytest.mark.sandbox]

# A workbench process as far as the sandbox goes: it starts the session's server, then waits.
OWNER = """
import asyncio, sys
from pathlib import Path
from workbench.config.settings import Settings
from workbench.terminal.host import TerminalHost

async def main() -> None:
    workspace, data, name, bwrap = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[4]
    host = TerminalHost(name, data_dir=data, session_id=name)
    host.sandbox.configure(Settings(workspace=workspace, data_dir=data, bwrap_path=bwrap), workspace)
    try:
        await host.ensure_started()
    except Exception as err:  # the detached stand-in's sandbox is not bwrap's child: the start fails
        print(err, flush=True)
    await asyncio.sleep(600)

asyncio.run(main())
"""


def _owner(workspace: Path, data: Path, name: str, bwrap: Path) -> subprocess.Popen[bytes]:
    argv = [sys.executable, "-c", OWNER, str(workspace), str(data), name, str(bwrap)]
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, cwd=Path.cwd())


def _end_leftovers(name: str, data: Path) -> None:
    """What a failing run left (a test never leaves a sandbox behind on the shared machine)."""
    deadline = time.monotonic() + 5  # a stand-in that sleeps may exec bwrap a moment later
    while session_processes(name) and time.monotonic() < deadline:
        kill_marked(name)
        time.sleep(0.1)
    reap_orphans(data)


def test_a_kill_9_while_bwrap_starts_leaves_no_sandbox(workspace: Path, tmp_path: Path) -> None:
    """Defect seen on the shared machine: workbench died after it started bwrap and before bwrap set
    its parent death signal, so bwrap set it against init and the sandbox lived on. bwrap's process
    is bound to the starting thread before its exec now: nothing needs a later start to reap it."""
    name, data, flag = f"wbtest-orphan-{uuid.uuid4().hex[:8]}", tmp_path / "data", tmp_path / "spawned"
    owner = _owner(workspace, data, name, stand_in(tmp_path, "slow", flag))
    try:
        until_blocking(flag.exists, 60, "the sandbox's start")
        owner.kill()  # kill -9: no cleanup of its own runs
        owner.wait()
        until_blocking(lambda: not session_processes(name), 10, "every process of the session to end")
    finally:
        owner.kill()
        owner.wait()
        _end_leftovers(name, data)


def test_what_a_kill_9_leaves_in_a_sandbox_ends_at_the_next_start(workspace: Path, tmp_path: Path) -> None:
    """The window no binding closes (bwrap killed with its owner before the sandbox's init bound itself
    to bwrap): the sandbox runs on, in the session's cgroup and with its marker, until the next
    workbench start on that data folder ends it (`Session.open` runs `reap_orphans`)."""
    from workbench.session.session import Session

    name, data, flag = f"wbtest-orphan-{uuid.uuid4().hex[:8]}", tmp_path / "data", tmp_path / "spawned"
    owner = _owner(workspace, data, name, stand_in(tmp_path, "detached", flag))
    try:
        until_blocking(lambda: sandboxed_server(name), 60, "the sandbox's tmux server")
        owner.kill()
        owner.wait()
        time.sleep(1)
        assert sandboxed_server(name), "the window this test is about: the server outlives its killed owner"

        async def next_start() -> None:
            session = await Session.open(Settings(workspace=workspace, data_dir=data, model="demo"))
            await session.close()

        asyncio.run(next_start())
        until_blocking(lambda: not session_processes(name), 10, "every process of the session to end")
        assert not (data / "terminals" / f"{name}.json").exists()
    finally:
        owner.kill()
        owner.wait()
        _end_leftovers(name, data)
