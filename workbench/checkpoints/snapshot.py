"""The workspace as the store sees it, kept in memory between checkpoints so that a checkpoint
costs time in proportion to what changed.

A full scan (the session's first checkpoint, or the fallback when no watch runs) walks every
folder through descriptors opened with O_NOFOLLOW and hashes each file into the store (a file
whose status is unchanged since it was hashed keeps its blob). After that only the paths the
watch or the file tools named are looked at again. The ignore rules are those found at the
first scan: a `.gitignore` the agent writes later changes nothing here.

The tree in memory and how it is written is `tree.py`; the names of a file with more than one
(hard links), looked at again together, are `links.py`.
"""

from __future__ import annotations

import errno
import io
import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path

import pygit2

from workbench.checkpoints.descend import Descent, entries
from workbench.checkpoints.links import Links
from workbench.checkpoints.tree import Item, MemoryTree, Scan, join, parent_of, plain_mode
from workbench.checkpoints.watch import Watch, WatchUnavailable
from workbench.tools.files.walk import Ignore, ignore_for

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC | os.O_NOFOLLOW
_OUT_OF = (errno.EMFILE, errno.ENFILE, errno.ENOMEM)  # not a folder that went away: the scan fails, naming it
# a FIFO swapped in for a file opens at once (and is then not read); no link is followed
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY
_READ_WHOLE = 1 << 20  # a file up to this is read in one piece; a larger one is streamed into the store
RACY_NS = 2_000_000_000  # a file changed this close to its hashing is hashed again at the next scan
PROJECT_CONFIG = ".workbench"  # terminal.protected.PROJECT_CONFIG (that package is not below this one)


@dataclass(frozen=True)
class Limits:
    """What a checkpoint keeps (bytes; 0: no limit)."""

    file: int = 0  # a file over this is skipped, with a notice
    ignored_file: int = 1_000_000  # an ignored file over this is skipped
    ignored_total: int = 50_000_000  # ignored files kept in all; an ignored tree over it is skipped


def _raise_if_out_of(err: OSError) -> None:
    """A scan passes over what went away or cannot be read, never over a lack of descriptors or
    memory: that would record the folders it could not open as deleted."""
    if err.errno in _OUT_OF:
        raise err


class OverCap(Exception):
    """Hashing on would take the store over its cap (a home folder taken for a workspace)."""


class Snapshot(MemoryTree):
    """The tree of `root` in memory, written to `repo` incrementally."""

    def __init__(self, root: Path, repo: pygit2.Repository, limits: Limits, *, watch: bool = True):
        super().__init__(repo)
        self.root, self.limits = root, limits
        self.rules: dict[str, Ignore] = {}  # the ignore rules of each folder at the first scan
        self.skipped_trees: set[str] = set()  # ignored folders too large to keep
        self.scanned = False
        self.budget: int | None = None  # bytes that may still go into the store (None: no cap)
        self.full_scan_due = True
        self.dirty: set[str] = set()
        self.links = Links()
        self._replacing = ""
        self.watch: Watch | None = None
        self.watch_error = ""
        if watch:
            try:
                self.watch = Watch()
            except WatchUnavailable as err:
                self.watch_error = str(err)

    # --- what changed ---------------------------------------------------------------------

    def mark(self, rel: str) -> None:
        """A path the file tools wrote (relative to the root)."""
        self.dirty.add(rel)

    def anything_may_have_changed(self) -> None:
        """Without a watch, what a command, the person or another process did is found only by a
        full scan (a file whose status is unchanged keeps its blob: no file is read again)."""
        if self.watch is None:
            self.full_scan_due = True

    def pending(self) -> bool:
        """Anything to look at since the last checkpoint (cheap: one read of the watch's queue)."""
        if self.watch is not None:
            named, folders, overflow = self.watch.changes()
            self.dirty |= named
            for folder in folders:
                self._dir_mode(folder)
            if overflow:
                self.full_scan_due = True
        return self.full_scan_due or bool(self.dirty)

    def update(self) -> Scan:
        """Look again at what may have changed; the changed paths and the notices."""
        scan = Scan()
        self.links.hashed.clear()
        try:
            if self.full_scan_due:
                self.full_scan_due = False
                self.dirty.clear()
                self._rescan("", scan, first=not self.scanned)
                self.scanned = True
                self.links.look.clear()  # every name was looked at
                self.links.fresh.clear()
                return scan
            dirty, self.dirty = sorted(self.dirty, key=lambda p: (p.count("/"), p)), set()
            done: list[str] = []
            for rel in dirty:
                if any(rel.startswith(d + "/") for d in done):
                    continue  # a folder above it was scanned again
                if self._rescan(rel, scan, first=False):
                    done.append(rel)
            self._other_names(set(dirty), scan)
            return scan
        except BaseException:
            self.full_scan_due = True  # the look failed half-way (no descriptor left): the next one is whole
            raise

    def _other_names(self, seen: set[str], scan: Scan) -> None:
        """The other names of each file that changed through one of its names (hard links)."""
        while True:
            names = [name for name in self.links.others() + self._older_names() if name not in seen]
            if not names:
                return
            seen.update(names)
            for name in names:
                self._rescan(name, scan, first=False)

    # --- scanning -------------------------------------------------------------------------

    def _openparent_of(self, rel: str) -> int | None:
        """The folder holding `rel`, each folder opened without following a link; None when
        there is no such folder (any more) or a link stands on the way."""
        fd = os.open(self.root, _DIR_FLAGS)
        try:
            for name in [p for p in parent_of(rel).split("/") if p]:
                child = os.open(name, _DIR_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = child
        except OSError as err:
            os.close(fd)
            _raise_if_out_of(err)
            return None
        return fd

    def _excluded(self, rel: str) -> bool:
        """Never kept: the user's .git (any repository's), the workspace's .workbench/ (the
        project's config, read-only to the agent's commands), and what is inside a skipped tree."""
        parts = rel.split("/")
        if ".git" in parts or parts[0] == PROJECT_CONFIG:
            return True
        return any("/".join(parts[:i]) in self.skipped_trees for i in range(1, len(parts) + 1))

    def _ignored(self, rel: str, is_dir: bool) -> bool:
        parent = parent_of(rel)
        if parent in self.ignored_dirs:
            return True
        folder = parent
        while folder not in self.rules and folder:
            folder = parent_of(folder)
        rules = self.rules.get(folder)
        return rules is not None and rules.ignored(rel, is_dir)

    def _rescan(self, rel: str, scan: Scan, *, first: bool) -> bool:
        """Look at `rel` again (recursively for a folder); True when it was a folder."""
        if rel and self._excluded(rel):
            return False
        if not rel:
            try:
                fd = os.open(self.root, _DIR_FLAGS)
            except OSError as err:
                _raise_if_out_of(err)
                self._drop("", scan)
                return True
            st = os.fstat(fd)
            if first:
                self.rules[""] = ignore_for(self.root, "").child(self.root, "")
            self._scan_dir("", fd, st, scan, ignored=False, first=first)
            return True
        parent_fd = self._openparent_of(rel)
        if parent_fd is None:
            self._drop(rel, scan)
            return False
        name = rel.rpartition("/")[2]
        try:
            try:
                st = os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
            except OSError as err:
                _raise_if_out_of(err)
                self._drop(rel, scan)
                return False
            if stat.S_ISDIR(st.st_mode):
                if rel in self.items:
                    self._drop(rel, scan)
                try:
                    fd = os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
                except OSError as err:
                    _raise_if_out_of(err)
                    self._drop(rel, scan)
                    return True
                ignored = self._ignored(rel, True)
                self._scan_dir(rel, fd, st, scan, ignored=ignored, first=False)
                return True
            if rel in self.dirs:
                self._drop(rel, scan)
            self._file(rel, name, parent_fd, st, scan, self._ignored(rel, False), trust_sig=False)
            return False
        finally:
            os.close(parent_fd)

    def _scan_dir(self, rel: str, fd: int, st: os.stat_result, scan: Scan, *, ignored: bool, first: bool) -> None:
        """Scan the open folder `fd` (closed here) and everything below it: depth first, one
        folder at a time, holding the descriptors of the path walked (at most descend.KEEP),
        never one per folder waiting (3,000 sibling folders outran the open-file limit)."""
        if ignored and rel not in self.ignored_dirs and not self._fits_ignored(fd):
            os.close(fd)
            self._drop(rel, scan)
            self.skipped_trees.add(rel)
            scan.skipped.append(f"{rel}/ (ignored, over {self.limits.ignored_total // 1_000_000} MB in all)")
            return
        walk = Descent(fd)
        try:
            folders = [rel]
            pending = [self._enter_dir(rel, fd, st, scan, ignored, first)]  # each level's subfolders to go into
            while pending:
                if not pending[-1]:
                    pending.pop()
                    folders.pop()
                    if walk.depth:
                        walk.leave()
                    continue
                name, sub_ignored, newly_ignored = pending[-1].pop()
                sub = join(folders[-1], name)
                try:
                    sfd, sst = walk.enter(name)
                except OSError as err:
                    _raise_if_out_of(err)
                    continue  # gone, or not a folder any more: the next look sees what is there
                if newly_ignored and not self._fits_ignored(sfd):
                    walk.leave()
                    self._drop(sub, scan)
                    self.skipped_trees.add(sub)
                    scan.skipped.append(f"{sub}/ (ignored, over {self.limits.ignored_total // 1_000_000} MB in all)")
                    continue
                folders.append(sub)
                pending.append(self._enter_dir(sub, sfd, sst, scan, sub_ignored, first))
        finally:
            walk.close()

    def _enter_dir(
        self, folder: str, dfd: int, dst: os.stat_result, scan: Scan, ignored: bool, first: bool
    ) -> list[tuple[str, bool, bool]]:
        """Take in the open folder `folder`: its mode, its files; its subfolders to go into
        (name, ignored, newly ignored here)."""
        if folder not in self.dirs:
            scan.changed.add(folder)
            self._link(folder)
        self._set_dir_mode(folder, stat.S_IMODE(dst.st_mode))
        if ignored:
            self.ignored_dirs.add(folder)
        else:
            self.ignored_dirs.discard(folder)
            if first and folder:
                self.rules[folder] = self.rules[parent_of(folder)].child(self.root / folder, folder)
        if self.watch is not None:
            try:
                self.watch.add(folder, dfd)
            except WatchUnavailable as err:
                self.watch.close()
                self.watch, self.watch_error = None, str(err)
                self.full_scan_due = True
        try:
            found = entries(dfd)
        except OSError as err:
            _raise_if_out_of(err)  # not an empty folder: a checkpoint that cannot see it fails, naming why
            found = []
        for gone in self.children.get(folder, set()) - {name for name, _ in found}:
            self._drop(join(folder, gone), scan)
        subfolders: list[tuple[str, bool, bool]] = []
        for name, est in found:
            sub = join(folder, name)
            if name == ".git" or sub in self.skipped_trees or sub == PROJECT_CONFIG or est is None:
                continue
            if stat.S_ISDIR(est.st_mode):
                if sub in self.items:
                    self._drop(sub, scan)
                sub_ignored = ignored or self._ignored(sub, True)
                subfolders.append((name, sub_ignored, sub_ignored and not ignored))
            else:
                if sub in self.dirs:
                    self._drop(sub, scan)
                sub_ignored = ignored or self._ignored(sub, False)
                self._file(sub, name, dfd, est, scan, sub_ignored, trust_sig=True)
        return subfolders

    def _fits_ignored(self, fd: int) -> bool:
        """Whether an ignored folder's small files fit in what is left of the ignored budget
        (counted without hashing, stopping as soon as they do not; depth first, bounded
        descriptors, as the scan)."""
        budget = self.limits.ignored_total - self.ignored_bytes if self.limits.ignored_total else None
        if budget is None:
            return True
        total = 0
        walk = Descent(os.dup(fd))
        try:
            pending: list[list[str]] = []
            dfd: int | None = walk.fd()
            while True:
                if dfd is not None:
                    below = []
                    try:
                        found = entries(dfd)
                    except OSError as err:
                        _raise_if_out_of(err)
                        found = []
                    for name, est in found:
                        if est is None:
                            continue
                        if stat.S_ISDIR(est.st_mode):
                            below.append(name)
                        elif not self.limits.ignored_file or est.st_size <= self.limits.ignored_file:
                            total += est.st_size
                            if total > budget:
                                return False
                    pending.append(below)
                    dfd = None
                if not pending:
                    return True
                if not pending[-1]:
                    pending.pop()
                    if walk.depth:
                        walk.leave()
                    continue
                try:
                    dfd, _st = walk.enter(pending[-1].pop())
                except OSError as err:
                    _raise_if_out_of(err)
        finally:
            walk.close()

    def _file(
        self, rel: str, name: str, dfd: int, st: os.stat_result, scan: Scan, ignored: bool, *, trust_sig: bool
    ) -> None:
        old = self.items.get(rel)
        self._replacing = rel  # dropped to be kept again: not gone from its inode's names
        try:
            self._keep_file(rel, name, dfd, st, scan, ignored, trust_sig=trust_sig)
        finally:
            self._replacing = ""
        new = self.items.get(rel)
        if new is None:
            self.links.forget(rel)
        elif st.st_nlink > 1 or rel in self.links.key_of:
            self.links.note(rel, st, changed=new is not old)

    def _older_names(self) -> list[str]:
        """The names kept before of files first seen with more than one link in this look (a
        link made to a kept file): found by inode number in one pass over the kept files."""
        fresh, self.links.fresh = self.links.fresh, set()
        inodes = {key & (1 << 64) - 1 for key in fresh}
        if not inodes:
            return []
        return [rel for rel, item in self.items.items() if item.sig[2] in inodes and rel not in self.links.key_of]

    def _keep_file(
        self, rel: str, name: str, dfd: int, st: os.stat_result, scan: Scan, ignored: bool, *, trust_sig: bool
    ) -> None:
        if not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
            self._drop(rel, scan)  # a FIFO, a socket, a device: not kept
            return
        sig = (st.st_mtime_ns, st.st_size, st.st_ino)
        old = self.items.get(rel)
        if trust_sig and old is not None and old.sig == sig and old.mode == st.st_mode and not old.racy:
            return
        limit = self.limits.ignored_file if ignored else self.limits.file
        over_total = (
            ignored and self.limits.ignored_total and self.ignored_bytes + st.st_size > self.limits.ignored_total
        )
        if stat.S_ISREG(st.st_mode) and ((limit and st.st_size > limit) or over_total):
            if old is not None:
                self._drop(rel, scan)
            what = "ignored, " if ignored else ""
            scan.skipped.append(f"{rel} ({what}{st.st_size:,} bytes, over the limit)")
            return
        if self.budget is not None:
            self.budget -= st.st_size
            if self.budget < 0:
                raise OverCap(f"the workspace holds more than the checkpoint store may (at {rel})")
        try:
            if stat.S_ISLNK(st.st_mode):
                oid = self.repo.create_blob(os.fsencode(os.readlink(name, dir_fd=dfd)))
            else:
                read = self.links.blob(st, lambda: self._blob(name, dfd))
                if read is None:  # something else was swapped in since the look (a FIFO): not kept
                    self._drop(rel, scan)
                    return
                oid, st = read
                sig = (st.st_mtime_ns, st.st_size, st.st_ino)
        except OSError as err:
            _raise_if_out_of(err)
            return  # it went away or is unreadable now: the next look sees what is there
        racy = time.time_ns() - st.st_mtime_ns < RACY_NS
        if old is not None and old.oid == oid and old.mode == st.st_mode:
            old.sig, old.racy = sig, racy
            return
        if old is not None:
            self._drop(rel, scan)
        self.items[rel] = Item(st.st_mode, oid, sig, ignored, racy)
        if ignored:
            self.ignored_bytes += st.st_size
        self._link(rel)
        perm = stat.S_IMODE(st.st_mode)
        if not stat.S_ISLNK(st.st_mode) and perm != plain_mode(st.st_mode):
            self.odd_modes[rel] = perm
            self.meta = None
        scan.changed.add(rel)
        scan.files.add(rel)

    def _blob(self, name: str, dfd: int) -> tuple[pygit2.Oid, os.stat_result] | None:
        """The file's bytes as a blob (no filters), and the status of what was read; None when
        what the name opens now is not a regular file. Opened once, without following a link or
        blocking, checked with fstat before a byte is read, and read from that descriptor only:
        a FIFO swapped in by a racing command is never read (a read of it would block for good)."""
        fd = os.open(name, _FILE_FLAGS, dir_fd=dfd)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                return None
            if st.st_size <= _READ_WHOLE:
                chunks = []
                while chunk := os.read(fd, _READ_WHOLE + 1):  # it may have grown since the fstat
                    chunks.append(chunk)
                return self.repo.create_blob(b"".join(chunks)), st
            with io.FileIO(fd, "rb", closefd=False) as fh:
                return self.repo.create_blob_fromiobase(fh), st
        finally:
            os.close(fd)

    # --- the tree in memory ---------------------------------------------------------------

    def _dir_mode(self, rel: str) -> None:
        """A folder's own mode may have changed (a chmod of it)."""
        if rel not in self.dirs:
            return
        fd = self._openparent_of(rel + "/x")
        if fd is None:
            return
        try:
            self._set_dir_mode(rel, stat.S_IMODE(os.fstat(fd).st_mode))
        finally:
            os.close(fd)

    def _item_gone(self, rel: str) -> None:
        if rel != self._replacing:
            self.links.forget(rel)

    def _link_groups(self) -> list[list[str]]:
        return self.links.groups()

    def write(self) -> pygit2.Oid:
        if self.links.changed:  # the names that are one file changed: the meta blob is written again
            self.links.changed, self.meta = False, None
        return super().write()

    def _gone(self, rel: str) -> None:
        if self.watch is not None:
            self.watch.forget(rel)

    def close(self) -> None:
        if self.watch is not None:
            self.watch.close()
            self.watch = None
