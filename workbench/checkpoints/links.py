"""Hard links: the names of each kept file that has more than one (issue 39 item 7).

A write through one name changes the bytes of every name, but the watch hears only of the name
written (an event is reported in the folder of the name a file was opened by). So the scans note
each file whose link count is above one under its (device, inode), and when one of its names
changed or went away, its other names are looked at again in the same checkpoint: a stat each,
and the bytes hashed once for all of them (`blob`). The cost is bounded by what changed: a tree of
5,000 files linked twice (`cp -al`, pnpm) costs one dictionary entry per name and nothing per
checkpoint until one of them changes. A link made during the session to a file kept under one
name (`ln plain.txt new.txt`) is a new inode here: the kept files are searched once by inode
number for its older name (one pass over them, only in a look that found such a link).

A checkpoint keeps the names that are one file in its meta blob (`links`), so a restore can make
them one file again (`restore.Restorer.relink`). Names outside the workspace (pnpm's store) are
not seen: a write through such a name is found by the next full scan only.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def inode_of(st: os.stat_result) -> int:
    return st.st_dev << 64 | st.st_ino


class Links:
    """Names by inode for the kept files with more than one link; what to look at again."""

    def __init__(self) -> None:
        self.key_of: dict[str, int] = {}  # name -> inode, for files with more than one link
        self.names: dict[int, list[str]] = {}  # inode -> its names kept
        self.look: set[int] = set()  # inodes one of whose names changed: their other names are looked at again
        self.fresh: set[int] = set()  # inodes first noted in this look: a link made to a file kept as one name
        self.hashed: dict[tuple[int, int, int, int], Any] = {}  # this look's blobs by inode, mtime, ctime, size
        self.changed = False  # the groups of two names or more changed (the meta blob is written again)

    def note(self, rel: str, st: os.stat_result, *, changed: bool) -> None:
        """`rel` is kept, as `st` says; `changed`: its bytes or mode differ from what was kept."""
        old = self.key_of.get(rel)
        new = inode_of(st) if st.st_nlink > 1 else None
        if old != new:
            if old is not None:
                self._remove(rel, old)
            if new is not None:
                self.key_of[rel] = new
                names = self.names.get(new)
                if names is None:
                    names = self.names[new] = []
                    self.fresh.add(new)
                names.append(rel)
                self.changed = self.changed or len(names) > 1
        if changed and new is not None:
            self.look.add(new)

    def forget(self, rel: str) -> None:
        """`rel` is no longer kept (gone, or not a file): its other names may have changed with it."""
        key = self.key_of.get(rel)
        if key is not None:
            self._remove(rel, key)

    def _remove(self, rel: str, key: int) -> None:
        del self.key_of[rel]
        names = self.names[key]
        names.remove(rel)
        self.changed = self.changed or len(names) > 0
        if names:
            self.look.add(key)
        else:
            del self.names[key]

    def others(self) -> list[str]:
        """The names of the inodes to look at again (the list to look at is emptied)."""
        found = sorted({name for key in self.look for name in self.names.get(key, ())})
        self.look.clear()
        return found

    def blob(self, st: os.stat_result, make: Callable[[], T | None]) -> T | None:
        """What `make` reads of the file (its blob): read once in a look for all the names of one
        unchanged inode (None, nothing read, is not kept)."""
        if st.st_nlink < 2:
            return make()
        sig = (inode_of(st), st.st_mtime_ns, st.st_ctime_ns, st.st_size)
        found: T | None = self.hashed.get(sig)
        if found is None:
            found = make()
            if found is not None:
                self.hashed[sig] = found
        return found

    def groups(self) -> list[list[str]]:
        """The names that are one file, two or more to a group (for the meta blob)."""
        return sorted(sorted(names) for names in self.names.values() if len(names) > 1)
