"""What changed in the workspace since the last look: an inotify watch on each folder (Linux),
read without blocking when a checkpoint is due. Nothing runs in between: the kernel queues the
events. When the watch cannot be set up (not Linux, no watches left) or its queue overflowed,
the caller falls back to a full stat scan."""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import struct
import sys

IN_MODIFY, IN_ATTRIB, IN_CLOSE_WRITE = 0x2, 0x4, 0x8
IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE = 0x40, 0x80, 0x100, 0x200
IN_DELETE_SELF, IN_MOVE_SELF = 0x400, 0x800
IN_Q_OVERFLOW, IN_IGNORED, IN_ONLYDIR, IN_EXCL_UNLINK = 0x4000, 0x8000, 0x1000000, 0x4000000
IN_NONBLOCK, IN_CLOEXEC = os.O_NONBLOCK, os.O_CLOEXEC
MASK = (
    IN_MODIFY
    | IN_ATTRIB
    | IN_CLOSE_WRITE
    | IN_MOVED_FROM
    | IN_MOVED_TO
    | IN_CREATE
    | IN_DELETE
    | IN_DELETE_SELF
    | IN_MOVE_SELF
    | IN_ONLYDIR
    | IN_EXCL_UNLINK
)
_HEADER = struct.Struct("iIII")


class WatchUnavailable(Exception):
    """No watch: not Linux, no inotify, or no watches left (the stat scan is the fallback)."""


class Watch:
    """inotify watches on folders, keyed by their path relative to the workspace."""

    def __init__(self) -> None:
        if not sys.platform.startswith("linux"):
            raise WatchUnavailable("inotify is Linux only")
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        self._add = libc.inotify_add_watch
        self._add.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        self._rm = libc.inotify_rm_watch
        self._rm.argtypes = [ctypes.c_int, ctypes.c_int]
        fd = libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            raise WatchUnavailable(os.strerror(ctypes.get_errno()))
        self.fd = fd
        self.path_of: dict[int, str] = {}
        self.wd_of: dict[str, int] = {}

    def add(self, rel: str, folder_fd: int) -> None:
        """Watch the open folder `folder_fd` (at `rel`): through /proc, so no path is looked up again."""
        wd = self._add(self.fd, f"/proc/self/fd/{folder_fd}".encode(), MASK)
        if wd < 0:
            err = ctypes.get_errno()
            if err == errno.ENOSPC:
                raise WatchUnavailable("no inotify watches left (fs.inotify.max_user_watches)")
            raise WatchUnavailable(os.strerror(err))
        old = self.path_of.get(wd)
        if old is not None and old != rel:
            self.wd_of.pop(old, None)
        self.path_of[wd] = rel
        self.wd_of[rel] = wd

    def forget(self, rel: str) -> None:
        """Stop watching `rel` and the folders below it (they were deleted or moved away)."""
        prefix = rel + "/"
        for path in [p for p in self.wd_of if p == rel or p.startswith(prefix) or not rel]:
            wd = self.wd_of.pop(path)
            self.path_of.pop(wd, None)
            self._rm(self.fd, wd)

    def changes(self) -> tuple[set[str], set[str], bool]:
        """Paths named by the events queued since the last call: (entries changed, folders whose
        own mode changed, overflowed). Never blocks; an empty queue costs one read()."""
        named: set[str] = set()
        folders: set[str] = set()
        overflow = False
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                break
            offset = 0
            while offset < len(data):
                wd, mask, _cookie, length = _HEADER.unpack_from(data, offset)
                raw = data[offset + _HEADER.size : offset + _HEADER.size + length]
                offset += _HEADER.size + length
                if mask & IN_Q_OVERFLOW:
                    overflow = True
                    continue
                folder = self.path_of.get(wd)
                if folder is None:
                    continue
                if mask & IN_IGNORED:  # the kernel dropped the watch (the folder is gone)
                    self.path_of.pop(wd, None)
                    if self.wd_of.get(folder) == wd:
                        del self.wd_of[folder]
                    continue
                name = os.fsdecode(raw.rstrip(b"\0"))
                if name:
                    named.add(f"{folder}/{name}" if folder else name)
                elif mask & (IN_DELETE_SELF | IN_MOVE_SELF):
                    named.add(folder)
                else:
                    folders.add(folder)
        return named, folders, overflow

    def close(self) -> None:
        try:
            os.close(self.fd)
        except OSError:
            pass
