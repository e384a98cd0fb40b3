"""Going down a folder tree depth first through descriptors, with a bounded number of them open.

A walk that opened every subfolder of a folder before going into the first one held a
descriptor per folder waiting (3,000 sibling folders: "Too many open files" under the common
limit of 1,024); one that kept a descriptor per level held 1,100 for a chain of 1,100 folders.
`Descent` keeps the open folders of the path being walked, each opened relative to the one
above with O_NOFOLLOW, and never more than `keep` of them: past that the upper ones are
closed and, when the walk comes back to one, opened again from the nearest open folder above
it, each step checked to be the same folder (device and inode) as the first time. A folder
moved or replaced meanwhile raises `FolderMoved` (an OSError): what is below it is left for the
next look. The walk itself is a loop, never a recursion.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC | os.O_NOFOLLOW
KEEP = 32  # folder descriptors a walk holds at most (the top one included)


class FolderMoved(OSError):
    """A folder of the walk is not where it was (moved, replaced, removed) when opened again."""

    def __init__(self, name: str):
        super().__init__(errno.ESTALE, "the folder changed while it was walked", name)


@dataclass(slots=True)
class _Level:
    name: str  # its name in the folder above ("" for the top)
    ident: tuple[int, int]  # st_dev, st_ino of the folder first opened
    fd: int | None  # None: closed for now (opened again when needed)


def _ident(st: os.stat_result) -> tuple[int, int]:
    return st.st_dev, st.st_ino


class Descent:
    """The open folders from the walk's top to the folder it is in; the top's descriptor is
    taken over (closed by `close`)."""

    def __init__(self, top_fd: int, keep: int = KEEP):
        self.keep = max(keep, 2)
        self.levels = [_Level("", _ident(os.fstat(top_fd)), top_fd)]
        self.open = 1

    @property
    def depth(self) -> int:
        """Folders entered below the top (0: at the top)."""
        return len(self.levels) - 1

    def fd(self) -> int:
        """The descriptor of the folder the walk is in, opened again if it was closed (with the
        few above it, which the walk is likely to come back to next)."""
        level = self.levels[-1]
        if level.fd is not None:
            return level.fd
        last = len(self.levels) - 1
        above = max(i for i, lv in enumerate(self.levels) if lv.fd is not None)
        fd = self.levels[above].fd
        assert fd is not None
        for i in range(above + 1, last + 1):
            lv = self.levels[i]
            parent = fd
            try:
                fd = os.open(lv.name, DIR_FLAGS, dir_fd=parent)
            finally:
                if self.levels[i - 1].fd != parent:
                    os.close(parent)  # an in-between folder opened only to pass through it
            if _ident(os.fstat(fd)) != lv.ident:
                os.close(fd)
                raise FolderMoved(lv.name)
            if i > last - self.keep // 2 or i == last:
                lv.fd = fd
                self.open += 1
        self._bound()
        return fd

    def enter(self, name: str) -> tuple[int, os.stat_result]:
        """Open the folder `name` of the current one (no link followed) and go into it: its
        descriptor (owned by the walk) and status. OSError when it cannot be opened."""
        child = os.open(name, DIR_FLAGS, dir_fd=self.fd())
        st = os.fstat(child)
        self.levels.append(_Level(name, _ident(st), child))
        self.open += 1
        self._bound()
        return child, st

    def leave(self) -> str:
        """Close the current folder and go back up to the one above; its name."""
        level = self.levels.pop()
        if level.fd is not None:
            os.close(level.fd)
            self.open -= 1
        return level.name

    def _bound(self) -> None:
        """Close the uppermost open folders but the top until `keep` are open (they are opened
        again if the walk needs them: most are passed through and left without another look)."""
        for lv in self.levels[1:-1]:
            if self.open <= self.keep:
                return
            if lv.fd is not None:
                os.close(lv.fd)
                lv.fd = None
                self.open -= 1

    def close(self) -> None:
        for lv in self.levels:
            if lv.fd is not None:
                os.close(lv.fd)
                lv.fd = None
        self.levels.clear()
        self.open = 0


def entries(fd: int) -> list[tuple[str, os.stat_result | None]]:
    """The entries of an open folder with their status (None: it went away meanwhile)."""
    found: list[tuple[str, os.stat_result | None]] = []
    with os.scandir(fd) as it:
        for entry in it:
            try:
                found.append((entry.name, entry.stat(follow_symlinks=False)))
            except OSError:
                found.append((entry.name, None))
    return found


def _clear(fd: int) -> list[str]:
    """Remove what is not a folder in the open folder `fd`; the names of its folders."""
    folders = []
    for name, st in entries(fd):
        if st is not None and stat.S_ISDIR(st.st_mode):
            folders.append(name)
            continue
        try:
            os.unlink(name, dir_fd=fd)
        except FileNotFoundError:
            pass
    return folders


def remove_tree(parent_fd: int, name: str) -> None:
    """Remove the folder `name` of `parent_fd` and all below it, following no link (a link is
    removed, not what it leads to), in a loop with a bounded number of descriptors open."""
    walk = Descent(os.open(name, DIR_FLAGS, dir_fd=parent_fd))
    try:
        pending = [_clear(walk.fd())]  # each level's folders still to remove
        while True:
            if pending[-1]:
                try:
                    fd, _st = walk.enter(pending[-1].pop())
                except FileNotFoundError:
                    continue
                pending.append(_clear(fd))
                continue
            pending.pop()
            if walk.depth == 0:
                break
            done = walk.leave()
            os.rmdir(done, dir_fd=walk.fd())
    finally:
        walk.close()
    os.rmdir(name, dir_fd=parent_fd)
