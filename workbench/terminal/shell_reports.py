"""The FIFO the agent's shells report on, read by the event loop (no polling, no tmux client).

`ready TOKEN PID` comes from a new shell once its rc file ran; `done TOKEN RUN STATUS PWD`
(or `exit ...` from the EXIT trap) at a command's end. Text a command prints never gets here:
its output goes to a file.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import secrets
from pathlib import Path
from typing import Any

from workbench.terminal.shell_env import decode_cwd
from workbench.terminal.state import Completion
from workbench.terminal.tmux_control import ServerGone


class ShellReports:
    """Futures for the shells' reports: a shell's pid when it is ready, a command's Completion."""

    def __init__(self) -> None:
        self.fds: tuple[int, int] | None = None
        self.buffer = b""
        self.ready: dict[str, asyncio.Future[int]] = {}
        self.runs: dict[str, asyncio.Future[Completion]] = {}
        self.last_run = 0

    def open(self, fifo: Path) -> None:
        os.mkfifo(fifo, 0o600)
        rfd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        wfd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)  # keeps the reader from seeing EOF
        self.fds = (rfd, wfd)
        asyncio.get_running_loop().add_reader(rfd, self.read)

    def close(self) -> None:
        if self.fds is None:
            return
        with contextlib.suppress(Exception):
            asyncio.get_running_loop().remove_reader(self.fds[0])
        for fd in self.fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.fds = None

    def expect_ready(self, token: str) -> asyncio.Future[int]:
        ready: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self.ready[token] = ready
        return ready

    def forget_ready(self, token: str) -> None:
        self.ready.pop(token, None)

    def next_run_id(self) -> str:
        """A run's id, also its file names: unguessable, so a command cannot plant a file (a link, a
        folder) where a later run's output goes."""
        self.last_run += 1
        return f"r{self.last_run}-{secrets.token_hex(4)}"

    def expect_run(self, run_id: str, done: asyncio.Future[Completion]) -> None:
        self.runs[run_id] = done

    def forget_run(self, run_id: str) -> None:
        self.runs.pop(run_id, None)

    def fail_all(self, why: str) -> None:
        """The server went away: nothing that was awaited will be reported."""
        waiting: list[asyncio.Future[Any]] = [*self.ready.values(), *self.runs.values()]
        for fut in waiting:
            if not fut.done():
                fut.set_exception(ServerGone(why))
                fut.exception()  # seen: a detached run's future may have no one awaiting it
        self.ready.clear()
        self.runs.clear()

    def read(self) -> None:
        """Read what the shells wrote; settle the futures their lines name."""
        if self.fds is None:
            return
        try:
            data = os.read(self.fds[0], 65536)
        except BlockingIOError:
            return
        except OSError as err:
            if err.errno == errno.EAGAIN:
                return
            raise
        self.buffer += data
        *lines, self.buffer = self.buffer.split(b"\n")
        for raw in lines:
            parts = raw.decode(errors="replace").split(" ", 4)
            if parts[0] == "ready" and len(parts) >= 3:
                ready = self.ready.pop(parts[1], None)
                if ready is not None and not ready.done():
                    ready.set_result(int(parts[2]))
            elif parts[0] in ("done", "exit") and len(parts) >= 4:
                run = self.runs.pop(parts[2], None)
                if run is not None and not run.done():
                    pwd = decode_cwd(parts[4]) if len(parts) > 4 else ""
                    run.set_result(Completion(int(parts[3]), pwd, parts[0] == "exit"))
