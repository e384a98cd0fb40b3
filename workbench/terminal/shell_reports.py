"""The channels the agent's shells report on, read by the event loop (no polling, no tmux client).

Each shell has a channel of its own that no other process in the sandbox can reach: a FIFO
named by the shell's token (128 random bits) in the session folder's `reports/`, a folder that
sandboxed commands may pass through but not list (nor, read-only, change or watch). The token
reaches the shell only in its environment; the shell keeps it in a variable it does not export
and opens the FIFO by name for each report, so no program it runs inherits a descriptor or the
name. The shell runs from an unreadable copy of bash (`sandbox_server.py`): it is not dumpable,
so no sandboxed process reads its environment, memory or descriptors through /proc or ptrace.

`ready TOKEN PID` comes once the rc file ran; `done RUN KEY STATUS PWD` (or `exit ...` from the
EXIT trap) at a command's end. KEY is the run's own secret, typed with the run line: a subshell
that an earlier command left running knows the shell's variables, and so its channel, but not a
later run's key. Text a command prints never gets here: its output goes to a file.

A report runs from an RS byte to a newline, one write of the shell's (up to bash's 1 KB output
buffer; a pipe never splits a write up to 4 KB): what is not between the two is dropped, and so
is a report longer than MAX_LINE (up to its newline) and one that is not well-formed or not
awaited. A flood costs the host reading time, never memory, and the report that follows it is
read whole.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import hmac
import logging
import os
import re
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.terminal.shell_env import decode_cwd
from workbench.terminal.state import Completion
from workbench.terminal.tmux_control import ServerGone

REPORTS = "reports"  # the channels' folder in the session's folder
RS = b"\x1e"  # starts a report (ASCII record separator); a newline ends it
MAX_LINE = 1 << 20  # bytes of one report: ~100 and the working directory (escaped), whatever its depth
READ_SIZE = 65536  # bytes read from a channel at a time
_TOKEN = re.compile(rb"[0-9a-f]{32}")  # a shell's token and a run's key: secrets.token_hex(16)
_RUN = re.compile(rb"r[0-9]{1,18}-[0-9a-f]{8}")
_STATUS = re.compile(rb"[0-9]{1,3}")
_PID = re.compile(rb"[0-9]{1,10}")

log = logging.getLogger("workbench")


def new_secret() -> str:
    """A shell's token or a run's key."""
    return secrets.token_hex(16)


@dataclass
class Channel:
    """One shell's FIFO: the host reads it and holds a writer too (so it never reads an end); its
    name stays while the shell lives (the shell opens it for each report)."""

    token: str
    path: Path
    rfd: int
    wfd: int
    line: bytearray = field(default_factory=bytearray)  # the report being read, after its RS
    within: bool = False  # since an RS, before its newline
    skipping: bool = False  # in a report past MAX_LINE: dropped up to the next newline (or RS)


@dataclass
class Run:
    key: str
    done: asyncio.Future[Completion]


class ShellReports:
    """Futures for the shells' reports: a shell's pid when it is ready, a command's Completion."""

    def __init__(self) -> None:
        self.folder: Path | None = None
        self.channels: dict[str, Channel] = {}
        self.ready: dict[str, asyncio.Future[int]] = {}
        self.runs: dict[str, Run] = {}
        self.last_run = 0
        self.dropped = 0  # reports (from an RS on) not taken: too long, not well-formed or not awaited

    def open(self, folder: Path) -> None:
        """The folder of the channels: the host may write it, the sandbox only pass through it."""
        folder.mkdir(mode=0o300, exist_ok=True)
        os.chmod(folder, 0o300)
        self.folder = folder

    def close(self) -> None:
        for token in list(self.channels):
            self.close_channel(token)
        if self.folder is not None:
            with contextlib.suppress(OSError):
                os.chmod(self.folder, 0o700)  # so that it can be removed
            self.folder = None

    # -- channels --

    def expect_ready(self, token: str) -> asyncio.Future[int]:
        """Make the channel of a shell about to start; its `ready` report sets the future."""
        assert self.folder is not None, "open() first"
        path = self.folder / token
        os.mkfifo(path, 0o600)
        rfd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        wfd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        channel = Channel(token, path, rfd, wfd)
        self.channels[token] = channel
        loop = asyncio.get_running_loop()
        loop.add_reader(rfd, self.read, channel)
        ready: asyncio.Future[int] = loop.create_future()
        self.ready[token] = ready
        return ready

    def forget_ready(self, token: str) -> None:
        self.ready.pop(token, None)

    def close_channel(self, token: str) -> None:
        """The shell is gone (its window killed): stop reading its channel."""
        channel = self.channels.pop(token, None)
        self.ready.pop(token, None)
        if channel is None:
            return
        with contextlib.suppress(OSError):  # first: a shell opening it then would wait for a reader
            channel.path.unlink()
        with contextlib.suppress(Exception):
            asyncio.get_running_loop().remove_reader(channel.rfd)
        for fd in (channel.rfd, channel.wfd):
            with contextlib.suppress(OSError):
                os.close(fd)

    # -- runs --

    def next_run_id(self) -> str:
        """A run's id, also its file names: unguessable, so a command cannot plant a file (a link, a
        folder) where a later run's output goes."""
        self.last_run += 1
        return f"r{self.last_run}-{secrets.token_hex(4)}"

    def expect_run(self, run_id: str, key: str, done: asyncio.Future[Completion]) -> None:
        self.runs[run_id] = Run(key, done)

    def forget_run(self, run_id: str) -> None:
        self.runs.pop(run_id, None)

    def fail_all(self, why: str) -> None:
        """The server went away: nothing that was awaited will be reported, no shell is left."""
        waiting: list[asyncio.Future[Any]] = [*self.ready.values(), *(run.done for run in self.runs.values())]
        for fut in waiting:
            if not fut.done():
                fut.set_exception(ServerGone(why))
                fut.exception()  # seen: a detached run's future may have no one awaiting it
        self.ready.clear()
        self.runs.clear()
        for token in list(self.channels):
            self.close_channel(token)

    # -- reading --

    def read_all(self) -> None:
        """What every shell wrote so far (a shell that just ended may have reported first)."""
        for channel in list(self.channels.values()):
            self.read(channel)

    def read(self, channel: Channel) -> None:
        """Read a piece of what the shell wrote; settle the futures its reports name."""
        if self.channels.get(channel.token) is not channel:
            return
        try:
            data = os.read(channel.rfd, READ_SIZE)
        except BlockingIOError:
            return
        except OSError as err:
            if err.errno == errno.EAGAIN:
                return
            raise
        start = 0
        while start < len(data):
            end = data.find(b"\n", start)
            stop = len(data) if end < 0 else end
            mark = data.rfind(RS, start, stop)
            if mark >= 0:  # a report starts: what came before it was not one
                channel.line.clear()
                channel.within, channel.skipping = True, False
                start = mark + 1
            if channel.within and not channel.skipping:
                if len(channel.line) + stop - start > MAX_LINE:
                    channel.line.clear()
                    channel.skipping = True
                else:
                    channel.line += data[start:stop]
            if end < 0:
                return
            if channel.within and channel.skipping:
                self.dropped += 1
            elif channel.within:
                self._report(channel, bytes(channel.line))
            channel.line.clear()
            channel.within = channel.skipping = False
            start = end + 1

    def _report(self, channel: Channel, line: bytes) -> None:
        if not self._settle(channel, line):
            self.dropped += 1
            log.debug("a shell's channel carried a line that is not an awaited report (%d bytes)", len(line))

    def _settle(self, channel: Channel, line: bytes) -> bool:
        parts = line.split(b" ", 4)
        if parts[0] == b"ready" and len(parts) == 3 and _TOKEN.fullmatch(parts[1]) and _PID.fullmatch(parts[2]):
            ready = self.ready.get(channel.token)
            if ready is None or ready.done() or not hmac.compare_digest(parts[1], channel.token.encode()):
                return False
            ready.set_result(int(parts[2]))
            return True
        if parts[0] not in (b"done", b"exit") or len(parts) != 5:
            return False
        run_id, key, status, pwd = parts[1:]
        if not (_RUN.fullmatch(run_id) and _TOKEN.fullmatch(key) and _STATUS.fullmatch(status)):
            return False
        run = self.runs.get(run_id.decode())
        if run is None or run.done.done() or not hmac.compare_digest(key, run.key.encode()):
            return False
        del self.runs[run_id.decode()]
        run.done.set_result(Completion(int(status), decode_cwd(pwd.decode(errors="replace")), parts[0] == b"exit"))
        return True
