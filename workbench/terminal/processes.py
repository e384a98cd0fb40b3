"""Processes seen through /proc: is a pid alive, a terminal's foreground group, killing a session."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess


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
