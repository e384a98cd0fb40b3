"""Workbench's own object store for one workspace: a bare git repository in the data folder.

pygit2 (libgit2 in this process) writes the objects: no process per checkpoint, no filters
(blobs are made from the bytes on disk), and no one's git configuration (the global and
system search paths point at an empty folder of ours). Each session keeps its chain of
checkpoint commits under `refs/workbench/<session id>`; sessions of one workspace share the
objects. The git command line is used only to pack and prune (`workbench sessions --prune`),
with GIT_CONFIG_GLOBAL=/dev/null and GIT_CONFIG_NOSYSTEM=1.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import time
from pathlib import Path

import pygit2
from pygit2.enums import ConfigLevel

REF_PREFIX = "refs/workbench/"
PRUNE_GRACE = "1.hour.ago"  # objects younger than this stay: another session may be writing them
LEFTOVER_AGE = 3600  # seconds: a temporary object file older than this is a write that was killed
# libgit2 writes an object under a temporary name in objects/, then renames it: a kill -9 mid-way
# leaves it (`git gc` removes only tmp_*, never streamed_*)
LEFTOVERS = ("tmp_object_git2_", "streamed_git2_")
_SIGNATURE = pygit2.Signature("workbench", "workbench@localhost")
_isolated = False


def _isolate(data_dir: Path) -> None:
    """libgit2 reads no global, XDG or system configuration of the person's (once per process)."""
    global _isolated
    if _isolated:
        return
    empty = data_dir / "checkpoints" / ".no-config"
    empty.mkdir(parents=True, exist_ok=True)
    for level in (ConfigLevel.GLOBAL, ConfigLevel.XDG, ConfigLevel.SYSTEM, ConfigLevel.PROGRAMDATA):
        pygit2.settings.search_path[level] = str(empty)
    _isolated = True


def store_dir(data_dir: Path, workspace: Path) -> Path:
    """The store of `workspace`: one per workspace path, shared by its sessions."""
    key = hashlib.sha256(str(workspace).encode()).hexdigest()[:16]
    return data_dir / "checkpoints" / f"{workspace.name[:40]}-{key}"


def git_env(store: Path) -> dict[str, str]:
    """The environment of a git command on the store: no one's configuration, no work tree."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_DIR=str(store), GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1", GIT_TERMINAL_PROMPT="0")
    return env


class Store:
    """The repository: blobs, trees and commits; one ref per session."""

    def __init__(self, data_dir: Path, workspace: Path):
        _isolate(data_dir)
        self.path = store_dir(data_dir, workspace)
        if (self.path / "HEAD").exists():
            self.repo = pygit2.Repository(str(self.path), pygit2.enums.RepositoryOpenFlag.BARE)
            drop_leftovers(self.path)
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.repo = pygit2.init_repository(str(self.path), bare=True)
            (self.path / "workspace").write_text(f"{workspace}\n")

    def commit(self, session_id: str, tree: pygit2.Oid, message: str) -> str:
        """A checkpoint commit on the session's chain; the ref moves to it before this returns."""
        ref = REF_PREFIX + session_id
        parents = []
        try:
            parents = [self.repo.references[ref].target]
        except KeyError:
            pass
        oid = self.repo.create_commit(ref, _SIGNATURE, _SIGNATURE, message, tree, parents)
        return str(oid)

    def drop_session(self, session_id: str) -> None:
        try:
            self.repo.references.delete(REF_PREFIX + session_id)
        except KeyError:
            pass

    def sessions(self) -> list[str]:
        return [r.removeprefix(REF_PREFIX) for r in self.repo.references if r.startswith(REF_PREFIX)]


def drop_leftovers(store: Path, older_than: float = LEFTOVER_AGE) -> int:
    """Remove the temporary object files of writes killed mid-way (a checkpoint of a session
    killed with -9), once older than `older_than` seconds: a write in flight (another session
    of the workspace) keeps its file fresh. How many were removed."""
    cutoff, removed = time.time() - older_than, 0
    try:
        found = os.scandir(store / "objects")
    except OSError:
        return 0
    with found:
        for entry in found:
            if not entry.name.startswith(LEFTOVERS):
                continue
            try:
                if entry.is_file(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_mtime < cutoff:
                    os.unlink(entry.path)
                    removed += 1
            except OSError:
                pass  # gone meanwhile, or another process's to remove
    return removed


def size_of(folder: Path) -> int:
    """Bytes the files below `folder` take."""
    total = 0
    for root, _dirs, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total


def pack_and_prune(store: Path) -> None:
    """Pack what the refs reach; drop the rest once older than the grace period (another
    session of the workspace may be writing objects it has not referenced yet)."""
    subprocess.run(
        ["git", "-c", "gc.auto=0", "gc", "--quiet", f"--prune={PRUNE_GRACE}"],
        env=git_env(store),
        cwd=store,
        check=True,
        capture_output=True,
        timeout=600,
    )


def stores(data_dir: Path) -> list[Path]:
    root = data_dir / "checkpoints"
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if (p / "HEAD").exists())


def prune(data_dir: Path, keep: set[str]) -> tuple[int, int, int]:
    """Drop the checkpoints of every session not in `keep` (deleted ones), then pack and prune
    each store; (refs dropped, bytes before, bytes after) over all stores."""
    dropped = before = after = 0
    for path in stores(data_dir):
        before += size_of(path)
        repo = pygit2.Repository(str(path), pygit2.enums.RepositoryOpenFlag.BARE)
        for ref in [r for r in repo.references if r.startswith(REF_PREFIX)]:
            if ref.removeprefix(REF_PREFIX) not in keep:
                repo.references.delete(ref)
                dropped += 1
        pack_and_prune(path)
        after += size_of(path)
    return dropped, before, after


def total_size(data_dir: Path) -> tuple[int, int]:
    """(stores, bytes) of every workspace's checkpoint store."""
    found = stores(data_dir)
    return len(found), sum(size_of(p) for p in found)
