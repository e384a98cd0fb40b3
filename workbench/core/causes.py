"""What a failed write or open means for a person: a full disk, the open-file limit, or the
error itself. "Free some space" is advice only for a disk that is full (ENOSPC, EDQUOT, SQLite's
SQLITE_FULL); "Too many open files" names the limit and how to raise it."""

from __future__ import annotations

import errno
import resource
import sys

SQLITE_FULL = 13  # sqlite3.Error.sqlite_errorcode of "database or disk is full"
_FULL = (errno.ENOSPC, errno.EDQUOT)


def disk_full(err: BaseException) -> bool:
    """The disk (or the quota) is full."""
    if isinstance(err, OSError):
        return err.errno in _FULL
    sqlite3 = sys.modules.get("sqlite3")  # not imported here: the app's start does without it
    if sqlite3 is not None and isinstance(err, sqlite3.Error):
        return getattr(err, "sqlite_errorcode", None) == SQLITE_FULL or "disk is full" in str(err)
    return False


def out_of_files(err: BaseException) -> bool:
    """The process has no file descriptor left (EMFILE; libgit2 says it only in words)."""
    if isinstance(err, OSError) and err.errno is not None:
        return err.errno == errno.EMFILE
    return "Too many open files" in str(err)


def open_file_limit() -> str:
    """The soft and hard limits of open files, as `ulimit -n` and `ulimit -Hn` say them."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    shown = ["unlimited" if n == resource.RLIM_INFINITY else str(n) for n in (soft, hard)]
    return f"{shown[0]} (at most {shown[1]})"


def advice(err: BaseException, full: str) -> str:
    """What the person can do: `full` (the caller's words for freeing space) when the disk is
    full, how to raise the open-file limit when that ran out, nothing otherwise."""
    if disk_full(err):
        return full
    if out_of_files(err):
        return f"the open-file limit of this process is {open_file_limit()}: raise it with `ulimit -n` and run again"
    if isinstance(err, OSError) and err.errno == errno.ENFILE:
        return "the system has no file descriptor left (fs.file-max): close some programs and run again"
    return ""
