"""One cgroup per agent inside the session's (cgroup v2): a cancel ends exactly that agent's processes.

Every window of an agent (its bash shell, its tmux tool windows) starts with its first process
waiting at a gate, a FIFO in the session's folder (`read -r _ < GATE` before the window's own
command). The host moves that process into the agent's cgroup, then opens the gate, so whatever
it starts afterwards (commands, background jobs, `setsid` and `nohup` ones, daemons that double
fork) is in that cgroup, and `cgroup.kill` ends all of it at once while the other agents'
processes run on. Without a session cgroup (no cgroup v2, or not allowed to make one here) a
window starts ungated and a cancel falls back to the pane's terminal session
(`processes.kill_session`): a process that left it with `setsid` then lives on until the
session ends (`leftovers.end_session`).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import secrets
import shlex
from collections.abc import Callable
from pathlib import Path

from workbench.terminal.leftovers import agent_cgroup, kill_cgroup, move_to_cgroup

GATE_TIMEOUT = 10.0  # seconds for a new window's first process to reach its gate
GATE_POLL = 0.001  # seconds between two tries to open the gate


def gated(command: str, gate: Path) -> str:
    """The window's command, held until the gate opens."""
    return f"read -r _ < {shlex.quote(str(gate))}; {command}"


class AgentCgroups:
    """The agents' cgroups of one session, made when an agent opens its first window."""

    def __init__(self, session_cgroup: Callable[[], Path | None]):
        self.session_cgroup = session_cgroup
        self.paths: dict[str, Path] = {}

    def of(self, agent_id: str) -> Path | None:
        """The agent's cgroup (made now if need be); None without a session cgroup."""
        session = self.session_cgroup()
        if session is None:
            return None
        path = self.paths.get(agent_id)
        if path is None or not path.is_dir():
            path = agent_cgroup(session, agent_id)
            if path is None:
                return None
            self.paths[agent_id] = path
        return path

    @staticmethod
    def gate(folder: Path) -> Path:
        gate = folder / f"gate-{secrets.token_hex(6)}"
        os.mkfifo(gate, 0o600)
        return gate

    async def admit(self, pid: int, cgroup: Path, gate: Path) -> None:
        """Move the window's first process into the agent's cgroup, then let it go on (always:
        a process that cannot be moved still runs, as without cgroups). The move is in a thread
        (a migration usually takes 0.1 ms but can wait ~15 ms on the kernel); the gate is tried on
        the event loop until the process has opened it."""
        await asyncio.to_thread(move_to_cgroup, pid, cgroup)
        for _ in range(int(GATE_TIMEOUT / GATE_POLL)):  # nothing signals its open: try, briefly
            if _open_gate(gate):
                return
            await asyncio.sleep(GATE_POLL)

    async def kill(self, agent_ids: list[str]) -> None:
        """SIGKILL every process of these agents' cgroups (and remove them)."""
        paths = [self.paths.pop(a) for a in agent_ids if a in self.paths]
        for path in paths:
            await asyncio.to_thread(kill_cgroup, path)


def _open_gate(gate: Path) -> bool:
    """Write the line the window's first process waits for; False while it has not opened the FIFO."""
    try:
        fd = os.open(gate, os.O_WRONLY | os.O_NONBLOCK)
    except OSError as err:
        return err.errno not in (errno.ENXIO, errno.EINTR)  # ENXIO: no reader yet; else give up
    with contextlib.suppress(OSError):
        os.write(fd, b"\n")
    os.close(fd)
    return True
