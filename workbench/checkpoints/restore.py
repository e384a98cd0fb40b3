"""Putting the workspace back as a checkpoint holds it.

The difference between two checkpoint trees is found by walking both and skipping every
subtree whose id is the same (time in proportion to what differs). A restore writes on the
host into a tree the agent controlled, so it follows no link on any path component: each
folder is opened relative to the one above it with O_NOFOLLOW (`confined.open_folder`), a
file is written to a temporary name and renamed over the old one inside that folder, and a
folder is removed with `descend.remove_tree`, which follows no link either (a loop, bounded descriptors).
Exact modes come from the checkpoint's meta blob, and so do the names that were one file (hard
links): each name gets its bytes back, then the names of one file are made one file again
(`relink`; a name to be made a link is not written first), so a restore keeps the link as well
as the bytes of every name.
"""

from __future__ import annotations

import errno
import json
import os
import secrets
import stat
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pygit2

from workbench.checkpoints.descend import remove_tree
from workbench.checkpoints.tree import META_BLOB, WORKSPACE_TREE, parent_of, plain_mode
from workbench.tools.files.confined import PathChanged, open_folder

TREE = pygit2.GIT_FILEMODE_TREE
LINK = pygit2.GIT_FILEMODE_LINK
FOLDERS_OPEN = 64  # folder descriptors a restore holds at most
WRITERS = 8  # threads writing restored files: each waits on the disk (rename, freeing blocks), not the CPU
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC | os.O_NOFOLLOW


@dataclass(frozen=True)
class Entry:
    mode: int  # git's file mode
    oid: pygit2.Oid


@dataclass(frozen=True)
class Change:
    """One path that differs: what it is now and what the target holds (None: nothing)."""

    path: str
    now: Entry | None
    target: Entry | None


def _tree(repo: pygit2.Repository, top: str) -> pygit2.Tree:
    obj = repo[top]
    commit_tree = obj.peel(pygit2.Tree)
    return repo[commit_tree[WORKSPACE_TREE].id].peel(pygit2.Tree)


def meta(repo: pygit2.Repository, top: str) -> dict[str, Any]:
    """A checkpoint's meta blob: `modes` (path -> exact bits), `links` (the names that are one file)."""
    data = repo[repo[top].peel(pygit2.Tree)[META_BLOB].id].peel(pygit2.Blob).data
    found: dict[str, Any] = json.loads(data)
    return found


def modes(repo: pygit2.Repository, top: str) -> dict[str, int]:
    """Exact permission bits (path -> bits; a folder's path ends with '/', the root is '/')."""
    found: dict[str, int] = meta(repo, top).get("modes", {})
    return found


def relinks(
    repo: pygit2.Repository, now: str, target: str, changes: list[Change], groups: tuple[Any, Any], *, whole: bool
) -> list[list[str]]:
    """The names to make one file again after `changes` are written: of each group the target
    holds (`groups`: the `links` of now's meta and the target's), those written and those whose
    bytes are already the target's (a name left as it is, changed outside, is not among them).
    With `whole`, also a group whose names are apart now."""
    now_groups: list[list[str]] = groups[0] or []
    target_groups: list[list[str]] = groups[1] or []
    if not target_groups:
        return []
    written = {c.path for c in changes if c.target is not None and c.target.mode not in (TREE, LINK)}
    apart = whole and now_groups != target_groups
    together = {tuple(g) for g in now_groups} if apart else set()
    now_tree, target_tree = _tree(repo, now), _tree(repo, target)
    out = []
    for group in target_groups:
        if written.isdisjoint(group) and (not apart or tuple(group) in together):
            continue
        names = [p for p in group if p in written or _same_entry(now_tree, target_tree, p)]
        if len(names) > 1:  # a name not written first: its file (maybe with names outside) is kept
            out.append(sorted(names, key=lambda p: p in written))
    return out


def link_changes(repo: pygit2.Repository, now: str, target: str) -> list[tuple[Change, bool]]:
    """The names whose bytes and mode are the same in both checkpoints but which are one file
    with other names in one and not in the other (a link broken, or made): each is written again
    by a restore (a file of its own) and made a link again where the target has it one (True)."""
    was, will = meta(repo, now).get("links", []), meta(repo, target).get("links", [])
    if was == will:
        return []
    a = {name: frozenset(group) for group in was for name in group}
    b = {name: frozenset(group) for group in will for name in group}
    now_tree, target_tree = _tree(repo, now), _tree(repo, target)
    out = []
    for name in sorted(a.keys() | b.keys()):
        if a.get(name) != b.get(name) and _same_entry(now_tree, target_tree, name):
            entry = target_tree[name]
            same = Entry(int(entry.filemode), entry.id)
            out.append((Change(name, same, same), name in b))
    return out


def _same_entry(a: pygit2.Tree, b: pygit2.Tree, path: str) -> bool:
    try:
        x, y = a[path], b[path]
    except KeyError:
        return False
    return x.id == y.id and x.filemode == y.filemode


def diff(repo: pygit2.Repository, now: str, target: str) -> list[Change]:
    """What differs between the checkpoints `now` and `target` (commit ids), folders first."""
    return _diff(repo, _tree(repo, now), _tree(repo, target))


def _entries(tree: pygit2.Tree | None) -> dict[str, Entry]:
    return {} if tree is None else {e.name: Entry(int(e.filemode), e.id) for e in tree if e.name is not None}


def _diff(repo: pygit2.Repository, a: pygit2.Tree | None, b: pygit2.Tree | None) -> list[Change]:
    """Each differing path in order, a folder before what it holds; a loop over a stack of the
    folders being compared (a chain of 1,100 folders is no recursion), equal subtrees skipped."""
    out: list[Change] = []

    def level(
        prefix: str, x: pygit2.Tree | None, y: pygit2.Tree | None
    ) -> tuple[str, dict[str, Entry], dict[str, Entry], list[str]]:
        ex, ey = _entries(x), _entries(y)
        return prefix, ex, ey, sorted(ex.keys() | ey.keys(), reverse=True)

    stack = [level("", a, b)]
    while stack:
        prefix, ea, eb, names = stack[-1]
        if not names:
            stack.pop()
            continue
        name = names.pop()
        x, y = ea.get(name), eb.get(name)
        if x == y:
            continue
        path = f"{prefix}/{name}" if prefix else name
        if x is not None and y is not None and x.mode == TREE and y.mode == TREE:
            stack.append(level(path, repo[x.oid].peel(pygit2.Tree), repo[y.oid].peel(pygit2.Tree)))
            continue
        out.append(Change(path, x, y))
        if y is not None and y.mode == TREE:
            stack.append(level(path, None, repo[y.oid].peel(pygit2.Tree)))
    return out


def files_of(changes: list[Change]) -> list[str]:
    """The paths a person reads: files and links, and folders made or removed whole."""
    return [c.path + ("/" if (c.target or c.now) and (c.target or c.now).mode == TREE else "") for c in changes]  # type: ignore[union-attr]


class Restorer:
    """Applies changes under `root`: each folder opened from the open one above it, no link
    followed; at most FOLDERS_OPEN folder descriptors held."""

    def __init__(self, root: Path, repo: pygit2.Repository):
        self.root, self.repo = root, repo
        self._folders: OrderedDict[str, int] = OrderedDict()  # the most recently used last
        self._held: set[str] = set()  # folders the writes in flight use: never closed by `_trim`

    def _folder(self, rel: str) -> int:
        """The open folder `rel` (made when missing): opened from the nearest open folder above
        it, one folder at a time (a deep chain costs one open per folder, not one per level)."""
        fd = self._folders.get(rel)
        if fd is not None:
            self._folders.move_to_end(rel)
            return fd
        parts = rel.split("/") if rel else []
        start = len(parts)
        while start > 0 and "/".join(parts[: start - 1]) not in self._folders:
            start -= 1
        if start == 0:
            if "" not in self._folders:
                self._folders[""] = open_folder(self.root, self.root, create=True)
            fd = self._folders[""]
        else:
            start -= 1
            fd = self._folders["/".join(parts[:start])]
        for i in range(start, len(parts)):
            fd = _open_below(fd, parts[i], self.root / "/".join(parts[: i + 1]))
            self._folders["/".join(parts[: i + 1])] = fd
        self._trim()
        return fd

    def _trim(self) -> None:
        """Close the least recently used folders past FOLDERS_OPEN (not the one just opened, nor
        those writes in flight hold): a restore of 3,000 folders stays under the open-file limit."""
        for rel in list(self._folders)[:-1]:
            if len(self._folders) <= FOLDERS_OPEN:
                return
            if rel not in self._held:
                os.close(self._folders.pop(rel))

    def _forget(self, rel: str) -> None:
        for key in [k for k in self._folders if k == rel or k.startswith(rel + "/")]:
            os.close(self._folders.pop(key))

    def close(self) -> None:
        for fd in self._folders.values():
            os.close(fd)
        self._folders.clear()

    def apply(
        self,
        changes: list[Change],
        target_modes: dict[str, int],
        now_modes: dict[str, int],
        *,
        whole: bool = True,
        links: Sequence[list[str]] = (),
    ) -> None:
        """Remove what the target does not hold (deepest first), then write what it holds, then
        make the names of each of `links` one file again; with `whole`, also give every other
        path whose mode differs the target's mode."""
        self.root.mkdir(parents=True, exist_ok=True)
        for change in sorted(changes, key=lambda c: -c.path.count("/")):
            if change.now is not None and (
                change.target is None or (change.now.mode == TREE) != (change.target.mode == TREE)
            ):
                self._remove(change.path)
        files = []
        later = {path for names in links for path in names[1:]}  # made links to their group's first below
        for change in changes:  # folders first, in order (a parent before its children)
            if change.target is not None and change.target.mode == TREE:
                self._write(change.path, change.target, target_modes)
            elif change.target is not None:
                if change.path not in later:  # made a link to its group's first below
                    files.append(change)
        with ThreadPoolExecutor(WRITERS) as pool:
            for batch in _batches(files, FOLDERS_OPEN // 2):
                # the batch's folders opened (or made) here and held open through its writes; the
                # files' bytes read here (libgit2 in one thread); the writes wait on the disk, in threads
                held: dict[str, int] = {}
                for change in batch:
                    parent = parent_of(change.path)
                    if parent not in held:
                        held[parent] = self._folder(parent)
                        self._held.add(parent)
                done = []
                for change in batch:
                    entry = change.target
                    assert entry is not None
                    done.append(
                        pool.submit(
                            self._write_file,
                            held[parent_of(change.path)],
                            change.path,
                            entry,
                            self._data(entry),
                            target_modes,
                        )
                    )
                for future in done:
                    future.result()
                self._held = set()
                self._trim()
        by_path = {c.path: c for c in changes}
        for names in links:
            for path in self.relink(names):  # no link could be made: the bytes are written instead
                unlinked = by_path.get(path)
                if unlinked is not None and unlinked.target is not None:
                    fd, _name = self._split(path)
                    self._write_file(fd, path, unlinked.target, self._data(unlinked.target), target_modes)
        changed = {c.path for c in changes}
        for key in sorted(target_modes.keys() | now_modes.keys() if whole else (), key=lambda k: -k.count("/")):
            path = key.rstrip("/") if key != "/" else ""
            if target_modes.get(key) != now_modes.get(key) and path not in changed:
                self._chmod(path, key.endswith("/"), target_modes.get(key))
        for change in sorted(changes, key=lambda c: -c.path.count("/")):
            if change.target is not None and change.target.mode == TREE and change.path + "/" in target_modes:
                self._chmod(change.path, True, target_modes[change.path + "/"])

    def _split(self, path: str) -> tuple[int, str]:
        parent, _, name = path.rpartition("/")
        return self._folder(parent), name

    def _remove(self, path: str) -> None:
        fd, name = self._split(path)
        try:
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            return
        if stat.S_ISDIR(st.st_mode):
            self._forget(path)
            remove_tree(fd, name)
        else:
            os.unlink(name, dir_fd=fd)

    def _write(self, path: str, entry: Entry, target_modes: dict[str, int]) -> None:
        fd, name = self._split(path)
        if entry.mode == TREE:
            try:
                os.mkdir(name, 0o755, dir_fd=fd)
            except FileExistsError:
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                if not stat.S_ISDIR(st.st_mode):
                    os.unlink(name, dir_fd=fd)
                    os.mkdir(name, 0o755, dir_fd=fd)
            return
        self._write_file(fd, path, entry, self._data(entry), target_modes)

    def _data(self, entry: Entry) -> bytes:
        return self.repo[entry.oid].peel(pygit2.Blob).data

    def _write_file(self, fd: int, path: str, entry: Entry, data: bytes, target_modes: dict[str, int]) -> None:
        """A file or link from its bytes, through a temporary name renamed over the old one in
        its folder, open already as `fd` (no lookup of the path again)."""
        name = path.rpartition("/")[2]
        tmp = f".{name[:64]}.{secrets.token_hex(4)}.wb-restore"
        if entry.mode == LINK:
            os.symlink(os.fsdecode(data), tmp, dir_fd=fd)
        else:
            mode = target_modes.get(
                path, plain_mode(0o100755 if entry.mode == pygit2.GIT_FILEMODE_BLOB_EXECUTABLE else 0o100644)
            )
            out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=fd)
            try:
                with os.fdopen(out, "wb") as fh:
                    fh.write(data)
                    os.fchmod(fh.fileno(), mode)
            except BaseException:
                os.unlink(tmp, dir_fd=fd)
                raise
        try:
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            if stat.S_ISDIR(st.st_mode):
                remove_tree(fd, name)
        except FileNotFoundError:
            pass
        os.replace(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)

    def relink(self, names: list[str]) -> list[str]:
        """Make each of `names` a hard link to the first (which holds the bytes they are to hold):
        a link made under a temporary name and renamed over the name, in the names' folders,
        following no link. The names no link could be made for (another file system, no links)."""
        first_fd, first = self._split(names[0])
        self._held.add(parent_of(names[0]))  # open through the links made to it
        try:
            return self._relink(names, first_fd, first)
        finally:
            self._held.discard(parent_of(names[0]))

    def _relink(self, names: list[str], first_fd: int, first: str) -> list[str]:
        try:
            st = os.stat(first, dir_fd=first_fd, follow_symlinks=False)
        except FileNotFoundError:
            return names[1:]
        if not stat.S_ISREG(st.st_mode):
            return names[1:]
        missed = []
        for path in names[1:]:
            fd, name = self._split(path)
            try:
                other = os.stat(name, dir_fd=fd, follow_symlinks=False)
                if (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino):
                    continue
                if stat.S_ISDIR(other.st_mode):
                    missed.append(path)  # written instead (the folder removed then)
                    continue
            except FileNotFoundError:
                pass
            tmp = f".{name[:64]}.{secrets.token_hex(4)}.wb-restore"
            try:
                os.link(first, tmp, src_dir_fd=first_fd, dst_dir_fd=fd, follow_symlinks=False)
            except OSError:  # EXDEV, EMLINK, a file system without links
                missed.append(path)
                continue
            os.replace(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
        return missed

    def _chmod(self, path: str, is_dir: bool, mode: int | None) -> None:
        if is_dir:
            target = self._folder(path) if path else self._folder("")
            os.fchmod(target, mode if mode is not None else 0o755)
            return
        fd, name = self._split(path)
        try:
            file_fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=fd)
        except OSError:
            return  # a link (modes of links are not kept) or gone
        try:
            st = os.fstat(file_fd)
            if stat.S_ISREG(st.st_mode):
                os.fchmod(file_fd, mode if mode is not None else plain_mode(st.st_mode))
        finally:
            os.close(file_fd)


def _batches(files: list[Change], folders: int) -> list[list[Change]]:
    """The files in order, cut into batches of at most `folders` distinct folders each."""
    out: list[list[Change]] = []
    seen: set[str] = set()
    for change in files:
        parent = parent_of(change.path)
        if not out or (parent not in seen and len(seen) >= folders):
            out.append([])
            seen = set()
        seen.add(parent)
        out[-1].append(change)
    return out


def _open_below(fd: int, name: str, shown: Path) -> int:
    """The folder `name` of the open folder `fd`, made when missing, never through a link
    (PathChanged, as `confined.open_folder`)."""
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=fd)
    except FileNotFoundError:
        try:
            os.mkdir(name, dir_fd=fd)
        except FileExistsError:
            pass
        return os.open(name, _DIR_FLAGS, dir_fd=fd)
    except OSError as err:
        if err.errno in (errno.ELOOP, errno.ENOTDIR):
            try:
                if stat.S_ISLNK(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
                    raise PathChanged(str(shown)) from err
            except FileNotFoundError:
                pass
        raise


def line_counts(repo: pygit2.Repository, old: str, new: str) -> dict[str, tuple[int, int]]:
    """Lines added and removed per file between two checkpoints (binary files: 0, 0)."""
    return {path: (added, removed) for path, (added, removed, _text) in patches(repo, old, new).items()}


def patches(repo: pygit2.Repository, old: str, new: str, text_limit: int = 0) -> dict[str, tuple[int, int, str]]:
    """Per file: lines added, removed, and (up to `text_limit` characters each) the unified diff."""
    a, b = _tree(repo, old), _tree(repo, new)
    found: dict[str, tuple[int, int, str]] = {}
    for patch in a.diff_to_tree(b):
        if patch is None:
            continue
        _ctx, added, removed = patch.line_stats
        text = ""
        if text_limit:
            text = patch.text or ""
            text = text if len(text) <= text_limit else text[:text_limit] + "\n… (cut)\n"
        found[patch.delta.new_file.path or patch.delta.old_file.path] = (added, removed, text)
    return found
