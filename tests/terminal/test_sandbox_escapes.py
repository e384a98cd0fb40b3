"""The ways out of the sandbox an outside review found (issue 23), each re-run as it was found.

Real bwrap, a real tmux server with a person's real tmux client attached, real git on the host,
real Unix socket listeners; nothing mocked. What "escaped" is always a file written outside
the sandbox (under /var/tmp, on the read-only root) by a command the host ran.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pty
import signal
from collections.abc import Callable
from pathlib import Path

from tests.terminal.test_sandbox import (  # noqa: F401 - the sandbox fixtures
    Session,
    open_session,
    outside,
    person,
)


async def _attach_and_detach(s: Session) -> None:
    """A person attaches to the agent's tmux server from a terminal of their own, then leaves."""
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp("tmux", ["tmux", "-L", s.host.socket_name, "attach"])
    try:
        for _ in range(200):  # attached (the control client and the person's), or already gone
            if await asyncio.to_thread(os.waitpid, pid, os.WNOHANG) != (0, 0):
                return  # detached at once: by a hook
            if len(await s.host.tmux("list-clients")) >= 2:
                await asyncio.sleep(0.5)  # a client-attached hook runs now
                return
            await asyncio.sleep(0.02)
        raise AssertionError("the person's client did not attach")
    finally:
        with contextlib.suppress(ProcessLookupError, ChildProcessError):
            os.kill(pid, signal.SIGKILL)
            await asyncio.to_thread(os.waitpid, pid, 0)
        os.close(fd)


async def test_a_planted_tmux_hook_never_runs_when_the_person_attaches(
    open_session: Callable[..., Session],  # noqa: F811
    outside: Path,  # noqa: F811
) -> None:
    """Escape 1: a hook appended to the session's tmux.conf, then the server killed from inside so
    that the host restarts it (and reads the file again); the person attaches."""
    s = open_session()
    pwned = outside / "PWNED"
    hook = f"set-hook -g client-attached 'detach-client -E \"id > {pwned}\"'"
    conf = '"$(dirname "$(ls -d /tmp/workbench-*/bashrc | head -1)")/tmux.conf"'
    await s.call("bash", command=f"echo {_quoted(hook)} >> {conf}; echo {_quoted(hook)} >> $__wb_dir/tmux.conf")
    await s.call("bash", command="kill -9 2")  # the sandbox's tmux server
    await s.ok("bash", command="echo restarted")  # a fresh server, from the session's folder
    await _attach_and_detach(s)
    assert not pwned.exists(), pwned.read_text()
    assert "client-attached" not in (s.host.dir / "tmux.conf").read_text()  # type: ignore[operator]


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"
