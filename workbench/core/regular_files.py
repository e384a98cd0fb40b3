"""Reading a file only when it is a regular file: a FIFO, a device or a socket is refused at once.

Opening such a path to read could block forever or never end (a FIFO with no writer, /dev/stdin
on a terminal, /dev/zero), so the file is opened without blocking, checked with fstat on the
descriptor that was opened (no window between the check and the read), and read with a limit.
The file tools, the instructions files, skills and the config files read through here.
"""

from __future__ import annotations

import errno
import os
import stat


class NotRegularFile(OSError):
    """A path that is a FIFO, a device or a socket: opening it for reading could block forever
    or never end (a FIFO with no writer, /dev/zero), so it is refused."""

    def __init__(self, path: str | os.PathLike[str], kind: str):
        super().__init__(errno.EINVAL, f"it is {kind}, not a regular file", str(path))
        self.kind = kind


def kind_of(mode: int) -> str:
    """What a file of this mode is, in words: 'a FIFO (named pipe)', 'a character device', ..."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC  # how a file is opened to read


def read_regular(path: str | os.PathLike[str], limit: int | None = None) -> bytes:
    """The bytes of a regular file (symlinks followed), at most `limit` of them.

    The file is opened without blocking and checked before any byte is read, so a FIFO, a
    device or a socket raises NotRegularFile (an OSError) at once instead of hanging the caller
    or reading without end. A directory raises IsADirectoryError, as `open` would.
    """
    return read_opened(os.open(path, READ_FLAGS), path, limit)


def check_regular(fd: int, path: str | os.PathLike[str]) -> os.stat_result:
    """The status of an open file, or NotRegularFile / IsADirectoryError when it is not a regular file."""
    st = os.fstat(fd)
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    if not stat.S_ISREG(st.st_mode):
        raise NotRegularFile(path, kind_of(st.st_mode))
    return st


def read_opened(fd: int, path: str | os.PathLike[str], limit: int | None = None) -> bytes:
    """Read a file opened with READ_FLAGS (see `read_regular`); the descriptor is closed."""
    try:
        check_regular(fd, path)
        os.set_blocking(fd, True)
        fh = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with fh:
        return fh.read() if limit is None else fh.read(limit)
