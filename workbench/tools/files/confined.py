"""Using a path that `paths.resolve` confined, with no window between the check and the use.

`resolve` checks where a path leads; a folder swapped for a symlink after that check (by the
agent's own bash, say) would otherwise send the open somewhere else. So:
- a read opens the file, then checks where the opened file really is (`/proc/self/fd` on
  Linux, `F_GETPATH` on macOS) before reading a byte;
- a write opens each folder below the workspace root relative to the one before it, with
  O_NOFOLLOW (creating missing ones the same way), then creates the temporary file, writes it
  and renames it over the target relative to that folder's descriptor: every step happens in
  the folder that was checked, whatever the path names by then.
Either way a swap met on the way raises `PathChanged`; `paths.resolve_and` resolves again (and
refuses, if the path now leads outside) rather than use what it found.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Callable
from pathlib import Path

from workbench.tools.files.bounded import LONG_BYTES, may_take_long
from workbench.tools.files.walk import READ_FLAGS, check_regular, opened_path, read_opened

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC


class PathChanged(Exception):
    """The path led somewhere else when it was opened than when it was checked."""

    def __init__(self, where: str):
        super().__init__(f"the path changed while it was opened (it led to {where})")
        self.where = where


def read_checked(target: Path, allowed: Callable[[Path], bool], limit: int) -> bytes:
    """The bytes of the regular file `target` (at most `limit`), read only if the file opened
    is one `allowed` accepts; else PathChanged. Over LONG_BYTES, the call moves off the loop."""
    fd = os.open(target, READ_FLAGS)
    try:
        real = opened_path(fd)
        if real is not None and not allowed(Path(real.removesuffix(" (deleted)"))):
            raise PathChanged(real)
        if check_regular(fd, target).st_size > LONG_BYTES:
            may_take_long()
    except BaseException:
        os.close(fd)
        raise
    return read_opened(fd, target, limit)


def open_folder(root: Path, folder: Path, *, create: bool) -> int:
    """A descriptor of `folder` (resolved, inside `root`), each folder below `root` opened with
    O_NOFOLLOW relative to the one before; missing ones are created when `create` is set.

    A symlink on the way raises PathChanged (a resolved path has none); a file on the way
    raises NotADirectoryError, a missing folder (without `create`) FileNotFoundError.
    """
    fd = os.open(root, _DIR_FLAGS)
    try:
        for name in folder.relative_to(root).parts:
            try:
                child = os.open(name, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                try:
                    os.mkdir(name, dir_fd=fd)
                except FileExistsError:
                    pass
                child = os.open(name, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=fd)
            except OSError as err:
                if err.errno in (errno.ELOOP, errno.ENOTDIR) and _is_link(name, fd):
                    raise PathChanged(str(folder)) from err
                if err.errno == errno.ENOTDIR:
                    raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(folder)) from err
                raise
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def _is_link(name: str, folder_fd: int) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=folder_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def write_in_folder(folder_fd: int, name: str, data: bytes, mode: int | None) -> None:
    """Write `name` in the open folder via a temporary file and a rename: never a half-written
    file. `mode` is the permission bits to keep (an existing file's); None for a new file (umask)."""
    if len(data) > LONG_BYTES:
        may_take_long()
    # the temporary name stays short: a 250-byte file name plus a prefix and suffix would not fit
    tmp = f".{name[:64]}.{secrets.token_hex(4)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666, dir_fd=folder_fd)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            if mode is not None:
                os.fchmod(fh.fileno(), mode)
            os.fsync(fh.fileno())
        os.replace(tmp, name, src_dir_fd=folder_fd, dst_dir_fd=folder_fd)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=folder_fd)
        except OSError:
            pass
        raise


def existing_mode(folder_fd: int, name: str) -> int | None:
    """The permission bits of `name` in the open folder; None when there is no such file.
    A symlink there (a resolved target is none) raises PathChanged."""
    try:
        st = os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(st.st_mode):
        raise PathChanged(name)
    return stat.S_IMODE(st.st_mode)


__all__ = ["PathChanged", "existing_mode", "open_folder", "read_checked", "write_in_folder"]
