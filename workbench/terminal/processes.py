"""Processes seen through /proc: is a pid alive, a terminal's foreground group, killing a session;
and a child bound to this process's life from its first instruction (`ends_with_this_thread`)."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
from collections.abc import Callable

PR_SET_PDEATHSIG = 1  # prctl(2)


def pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie is not alive (os.open: the bash hot path asks twice per call; no file object)
        fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return True
    try:
        return os.read(fd, 4096).rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return True
    finally:
        os.close(fd)


def cmdline(pid: int) -> bytes:
    """The process's argv as /proc shows it (NUL-separated); b"" when unknown or gone."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read()
    except OSError:
        return b""


def cwd_of(pid: int) -> str:
    """The process's working directory; "" when unknown or gone."""
    try:
        return os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return ""


def _stat_fields(pid: int) -> list[str] | None:
    """/proc/PID/stat after the command name: state ppid pgrp session tty_nr tpgid ..."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].decode().split()
    except (OSError, IndexError):
        return None


def foreground_pgid(shell_pid: int) -> int:
    """The foreground process group of the shell's terminal (0 when unknown)."""
    fields = _stat_fields(shell_pid)
    if fields is not None:
        return int(fields[5])
    try:
        out = subprocess.run(["ps", "-o", "tpgid=", "-p", str(shell_pid)], capture_output=True, text=True)
        return int(out.stdout.strip() or 0)
    except (OSError, ValueError):
        return 0


def zombie_status(pid: int) -> int | None:
    """The exit status of a process that ended but was not reaped yet (128+N for signal N).

    None when it still runs or is gone. /proc/PID/stat's field 52 is the waitpid(2) status.
    """
    fields = _stat_fields(pid)
    if fields is None or fields[0] != "Z" or len(fields) < 50:
        return None
    code = int(fields[49])
    return 128 + (code & 0x7F) if code & 0x7F else (code >> 8) & 0xFF


def _session_pids(sid: int) -> list[int]:
    """Processes of the terminal session led by `sid` (a pane's first process)."""
    pids = []
    with contextlib.suppress(OSError):
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                fields = _stat_fields(int(entry))
                if fields is not None and int(fields[3]) == sid:
                    pids.append(int(entry))
    return pids


def kill_session(sid: int) -> None:
    if sid <= 0:  # 0 is "no session" in /proc: kernel threads and init would match
        return
    for pid in _session_pids(sid):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def start_time(pid: int) -> int:
    """When the process started (clock ticks since boot): with the pid, names one process for good."""
    fields = _stat_fields(pid)
    return int(fields[19]) if fields is not None and len(fields) > 19 else 0


def same_process(pid: int, started: int) -> bool:
    """Is `pid` still the process that started at `started` (not a reused pid)?"""
    return pid_alive(pid) and (not started or start_time(pid) == started)


def marked_pids(name: str, value: str) -> list[int]:
    """Processes whose environment holds NAME=VALUE (a session's marker); never this process."""
    entry = f"{name}={value}".encode()
    found = []
    with contextlib.suppress(OSError):
        for pid in os.listdir("/proc"):
            if not pid.isdigit() or int(pid) == os.getpid():
                continue
            try:
                with open(f"/proc/{pid}/environ", "rb") as fh:
                    env = fh.read()
            except OSError:
                continue
            if entry in env.split(b"\0"):
                found.append(int(pid))
    return found


def kill_all(pids: list[int]) -> None:
    """Stop them all first (none forks while the others die), then kill them."""
    for sig in (signal.SIGSTOP, signal.SIGKILL):
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, sig)


def ends_with_this_thread() -> Callable[[], None]:
    """A `preexec_fn` that binds the child to the thread that forks it: the kernel sends it SIGKILL
    when that thread ends (PR_SET_PDEATHSIG, kept across exec), and a child whose parent is gone
    before the binding (the kernel would never send it then) ends at once.

    Fork from the event loop's thread (asyncio.create_subprocess_exec does), never from a helper
    thread: the signal comes when the forking thread ends, not the process.
    """
    prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up before the fork: the child only calls it
    parent = os.getpid()

    def bind() -> None:
        prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != parent:  # this process died before the line above: nothing would come
            os._exit(1)

    return bind
