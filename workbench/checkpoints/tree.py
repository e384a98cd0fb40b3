"""The workspace's tree in memory, and how it is written to the store: only the trees of the
folders on the path of a change are written again.

What a git tree cannot hold goes into a small `meta` blob beside it: each file's and folder's
exact mode where it is not git's 644/755 (a 0600 secret stays 0600), and the names that are one
file (hard links, `links`). Empty folders are empty trees. A checkpoint's top tree holds `w`
(the workspace) and `m` (the meta blob). Names are the bytes they are on disk (`write_tree`).
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass, field

import pygit2

WORKSPACE_TREE, META_BLOB = "w", "m"


@dataclass(slots=True)
class Item:
    mode: int  # st_mode: type and permission bits
    oid: pygit2.Oid
    sig: tuple[int, int, int]  # mtime_ns, size, inode
    ignored: bool
    racy: bool


@dataclass
class Scan:
    """What one checkpoint's look at the tree found."""

    changed: set[str] = field(default_factory=set)  # paths looked at again that differ (folders too)
    files: set[str] = field(default_factory=set)  # files and links made, changed or removed
    skipped: list[str] = field(default_factory=list)  # one line each


def git_mode(mode: int) -> int:
    if stat.S_ISLNK(mode):
        return pygit2.GIT_FILEMODE_LINK
    return pygit2.GIT_FILEMODE_BLOB_EXECUTABLE if mode & 0o100 else pygit2.GIT_FILEMODE_BLOB


def plain_mode(mode: int) -> int:
    """The permission bits git's mode stands for: what a restore gives when meta says nothing."""
    if stat.S_ISDIR(mode):
        return 0o755
    return 0o755 if mode & 0o100 else 0o644


def write_tree(repo: pygit2.Repository, entries: list[tuple[bytes, int, pygit2.Oid]]) -> pygit2.Oid:
    """A tree object of (name, git mode, id) entries, each name the bytes it is on disk: one
    that is not UTF-8 (a Latin-1 archive's `caf\\xe9.txt`) is kept as it is, where pygit2's
    TreeBuilder takes only text. In git's order (a folder's name sorts as if it ended with '/')."""
    ordered = sorted(entries, key=lambda e: e[0] + b"/" if e[1] == pygit2.GIT_FILEMODE_TREE else e[0])
    data = b"".join(b"%o %s\0%s" % (mode, name, oid.raw) for name, mode, oid in ordered)
    return repo.odb.write(pygit2.enums.ObjectType.TREE, data)


def parent_of(rel: str) -> str:
    return rel.rpartition("/")[0]


def join(rel: str, name: str) -> str:
    return f"{rel}/{name}" if rel else name


class MemoryTree:
    """Files, links and folders with their blobs, modes and written tree ids."""

    def __init__(self, repo: pygit2.Repository):
        self.repo = repo
        self.items: dict[str, Item] = {}
        self.dirs: dict[str, int] = {}  # folder -> permission bits ("" is the root)
        self.children: dict[str, set[str]] = {}
        self.trees: dict[str, pygit2.Oid] = {}  # folders whose tree is written and unchanged since
        self.ignored_dirs: set[str] = set()  # ignored folders kept (small enough)
        self.ignored_bytes = 0
        self.odd_modes: dict[str, int] = {}  # path -> permission bits that git's mode does not say
        self.meta: pygit2.Oid | None = None

    def _gone(self, rel: str) -> None:
        """The folder `rel` left the tree (a watch on it ends)."""

    def _item_gone(self, rel: str) -> None:
        """The file or link `rel` left the tree."""

    def _link_groups(self) -> list[list[str]]:
        """The names that are one file (hard links), two or more to a group."""
        return []

    def _link(self, rel: str) -> None:
        """`rel` is in its folder (and each folder above it in its own)."""
        self._invalidate(rel)
        while rel:
            parent, _, name = rel.rpartition("/")
            kids = self.children.setdefault(parent, set())
            if name in kids:
                break
            kids.add(name)
            rel = parent

    def _invalidate(self, rel: str) -> None:
        """The trees of `rel` and of each folder above it are to be written again."""
        while True:
            self.trees.pop(rel, None)
            if not rel:
                return
            rel = parent_of(rel)

    def _drop(self, rel: str, scan: Scan) -> None:
        """`rel` (and all below it) is gone."""
        was_folder = rel in self.dirs or not rel
        below = [rel]  # rel and everything below it, each folder before what it holds (no recursion)
        for path in below:
            if path in self.dirs or not path:
                below.extend(join(path, name) for name in self.children.get(path, ()))
        for path in reversed(below):
            item = self.items.pop(path, None)
            if item is not None:
                if item.ignored:
                    self.ignored_bytes -= item.sig[1]
                scan.changed.add(path)
                scan.files.add(path)
                self._item_gone(path)
            if self.odd_modes.pop(path, None) is not None:
                self.meta = None
            if path in self.dirs or not path:
                self.children.pop(path, None)
                if path:
                    self.dirs.pop(path, None)
                self.trees.pop(path, None)
                self.ignored_dirs.discard(path)
                scan.changed.add(path)
        if was_folder:
            self._gone(rel)  # the watches on it and on every folder below it end
        if rel:
            parent, _, name = rel.rpartition("/")
            kids = self.children.get(parent)
            if kids is not None and name in kids:
                kids.discard(name)
                self._invalidate(parent)

    def _set_dir_mode(self, rel: str, perm: int) -> None:
        self.dirs[rel] = perm
        self.children.setdefault(rel, set())
        key = rel + "/" if rel else "/"
        if perm != 0o755:
            if self.odd_modes.get(key) != perm:
                self.odd_modes[key] = perm
                self.meta = None
        elif self.odd_modes.pop(key, None) is not None:
            self.meta = None

    def write(self) -> pygit2.Oid:
        """The top tree of the checkpoint: the workspace's tree and the meta blob beside it."""
        if self.meta is None:
            meta: dict[str, object] = {"modes": self.odd_modes}
            groups = self._link_groups()
            if groups:  # without links the blob is as it was before links were kept
                meta["links"] = groups
            self.meta = self.repo.create_blob(json.dumps(meta, sort_keys=True).encode())
        top = self.repo.TreeBuilder()
        top.insert(WORKSPACE_TREE, self._tree(""), pygit2.GIT_FILEMODE_TREE)
        top.insert(META_BLOB, self.meta, pygit2.GIT_FILEMODE_BLOB)
        return top.write()

    def _tree(self, rel: str) -> pygit2.Oid:
        """The tree of the folder `rel`, writing those below it not written yet: children
        before their folder, in a loop (a chain of 1,100 folders is no recursion)."""
        stack = [(rel, False)]
        while stack:
            folder, ready = stack.pop()
            if folder in self.trees:
                continue
            if not ready:
                stack.append((folder, True))
                for name in self.children.get(folder, ()):
                    sub = join(folder, name)
                    if sub in self.dirs and sub not in self.items and sub not in self.trees:
                        stack.append((sub, False))
                continue
            entries: list[tuple[bytes, int, pygit2.Oid]] = []
            for name in self.children.get(folder, ()):
                sub = join(folder, name)
                item = self.items.get(sub)
                if item is not None:
                    entries.append((os.fsencode(name), git_mode(item.mode), item.oid))
                elif sub in self.dirs:
                    entries.append((os.fsencode(name), pygit2.GIT_FILEMODE_TREE, self.trees[sub]))
            self.trees[folder] = write_tree(self.repo, entries)
        return self.trees[rel]
