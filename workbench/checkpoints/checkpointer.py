"""One session's checkpoints: taken before each tool call that can change the workspace, at
each of the person's prompts and when a run ends; each is a commit in the workspace's store
before the call runs (the caller records it as a `checkpoint` event).

The first look at the tree (hashing every file) starts in the background as the session
opens; a checkpoint asked for meanwhile waits for it. After that a checkpoint reads the
watch's queue and, when nothing changed, costs that one read and no commit.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from pathlib import Path

import pygit2

from workbench.checkpoints.repo import REF_PREFIX, Store, size_of
from workbench.checkpoints.restore import (
    Change,
    Restorer,
    diff,
    line_counts,
    link_changes,
    meta,
    modes,
    patches,
    relinks,
)
from workbench.checkpoints.snapshot import Limits, OverCap, Snapshot
from workbench.checkpoints.tree import Scan
from workbench.config.settings import Settings
from workbench.core.causes import advice
from workbench.core.safe_text import path_text
from workbench.pb import workbench_pb2 as pb

log = logging.getLogger("workbench")

FILE_TOOLS = frozenset(("write_file", "edit_file"))
REASON_WORDS = {
    pb.CHECKPOINT_REASON_TOOL_CALL: "tool call",
    pb.CHECKPOINT_REASON_TURN: "prompt",
    pb.CHECKPOINT_REASON_REWIND: "before a rewind",
    pb.CHECKPOINT_REASON_RUN_END: "run ended",
}


class CheckpointFailed(Exception):
    """No checkpoint could be taken: one line a person can act on."""


def limits_of(settings: Settings) -> Limits:
    return Limits(
        file=settings.checkpoint_file_limit,
        ignored_file=settings.checkpoint_ignored_file_limit,
        ignored_total=settings.checkpoint_ignored_total,
    )


class Checkpointer:
    """The checkpoints of one session of one workspace."""

    def __init__(self, settings: Settings, session_id: str, *, watch: bool = True):
        self.settings, self.session_id = settings, session_id
        self.workspace = settings.workspace
        self.enabled = settings.checkpoints
        self.refuse_on_failure = settings.checkpoint_failure == "refuse"
        self.turn = 0
        self.last = ""  # the newest commit of this session
        self._watch = watch
        self._store: Store | None = None
        self._snapshot: Snapshot | None = None
        self._first: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()
        self._store_bytes = 0
        self._scan: Scan | None = None  # what the first look found, for the first checkpoint
        self._last_tree: pygit2.Oid | None = None
        self._closed = False
        self._closing = threading.Lock()  # close() and the first scan's thread: one of them ends the watch
        self._told: set[str] = set()  # skip notices already given

    # --- taking checkpoints ---------------------------------------------------------------

    def start(self) -> None:
        """Begin the first look at the tree in the background (call on the session's event loop)."""
        if self.enabled and self._first is None:
            self._first = asyncio.create_task(asyncio.to_thread(self._open), name="first checkpoint scan")

    def _open(self) -> None:
        store = Store(self.settings.data_dir, self.workspace)
        snapshot = Snapshot(self.workspace, store.repo, limits_of(self.settings), watch=self._watch)
        self._store_bytes = size_of(store.path)
        cap = self.settings.checkpoint_store_cap
        if cap:  # uncompressed bytes hashed, a bound above what they take in the store
            snapshot.budget = cap - self._store_bytes
        ref = store.repo.references.get(REF_PREFIX + self.session_id)
        if ref is not None:  # a resumed session: its chain goes on
            commit = store.repo[ref.target].peel(pygit2.Commit)
            self.last, self._last_tree = str(commit.id), commit.tree_id
        try:
            first = snapshot.update()
            top = snapshot.write()  # the tree as the session opens: the first checkpoint's parent
            if top != self._last_tree:
                self.last = store.commit(self.session_id, top, f"session opened: turn {self.turn}")
                self._last_tree = top
            self._scan = Scan(skipped=first.skipped)  # its notices go with the first checkpoint
        finally:
            with self._closing:
                self._store, self._snapshot = store, snapshot
                if self._closed:  # the session closed while this scan ran (in its thread): the watch ends here
                    snapshot.close()

    @property
    def ready(self) -> bool:
        """The first look at the tree is done: a checkpoint now takes milliseconds."""
        return self._first is not None and self._first.done()

    @property
    def store(self) -> Store:
        if self._store is None:
            self._open()
        assert self._store is not None
        return self._store

    def mark(self, path: Path) -> None:
        """A file the file tools wrote (absolute or relative to the workspace)."""
        if self._snapshot is not None:
            try:
                self._snapshot.mark(str(path.relative_to(self.workspace)) if path.is_absolute() else str(path))
            except ValueError:
                pass

    def after_call(self, tool: str, arguments: str) -> None:
        """A tool call ran: the file tools name the path they wrote; anything else (bash, tmux,
        a subagent, an MCP tool) may have changed anything."""
        if self._snapshot is None:
            return
        if tool in FILE_TOOLS:
            try:
                path = json.loads(arguments).get("path")
            except (ValueError, AttributeError):
                path = None
            if isinstance(path, str) and path:
                self.mark(Path(path) if Path(path).is_absolute() else self.workspace / path)
                return
        self._snapshot.anything_may_have_changed()

    async def take(
        self, reason: pb.CheckpointReason, *, call_id: str = "", tool: str = "", agent: str = ""
    ) -> pb.Checkpoint | None:
        """A checkpoint of the tree now, committed before this returns; None when switched off.
        A failure is returned as a checkpoint with `error` set (never raised)."""
        if not self.enabled:
            return None
        async with self._lock:
            cp = pb.Checkpoint(reason=reason, turn=self.turn, call_id=call_id, tool=tool)
            try:
                await self._ready()
                snapshot = self._snapshot
                assert snapshot is not None
                scan, self._scan = self._scan or Scan(), None
                if reason != pb.CHECKPOINT_REASON_TOOL_CALL:
                    snapshot.anything_may_have_changed()  # the person may have edited files since
                if not snapshot.pending() and self.last and not scan.changed:
                    cp.commit, cp.unchanged = self.last, True  # nothing changed: no new commit
                    self._tell(scan, cp)
                    return cp
                more = await asyncio.to_thread(snapshot.update)
                scan.changed |= more.changed
                scan.files |= more.files
                scan.skipped += more.skipped
                top = await asyncio.to_thread(snapshot.write)
                self._tell(scan, cp)
                if top == self._last_tree and self.last:
                    cp.commit, cp.unchanged = self.last, True
                    return cp
                self._check_cap()
                message = f"{REASON_WORDS.get(reason, 'checkpoint')}: turn {self.turn} {agent} {tool} {call_id}"
                cp.commit = self.store.commit(self.session_id, top, message.strip())
                cp.files_changed = len(scan.files)
                self.last, self._last_tree = cp.commit, top
                self._store_bytes += sum(snapshot.items[p].sig[1] for p in scan.changed if p in snapshot.items) // 3
            except OverCap as err:
                cp.error = path_text(
                    f"no checkpoint of the workspace could be taken: {err}, {self.settings.checkpoint_store_cap:,} "
                    "bytes (checkpoint_store_cap); raise it, prune with `workbench sessions --prune`, or work in a "
                    "smaller folder"
                )
                log.warning("%s", cp.error)
            except (OSError, pygit2.GitError, CheckpointFailed) as err:
                hint = advice(err, "free some space")
                cp.error = path_text(
                    f"no checkpoint of the workspace could be taken: {err}{'; ' + hint if hint else ''}"
                )
                log.warning("%s", cp.error)
            return cp

    def _tell(self, scan: Scan, cp: pb.Checkpoint) -> None:
        """What the scan skipped, each line once in the session."""
        for line in scan.skipped:
            if line not in self._told:
                self._told.add(line)
                cp.skipped.append(path_text(line))  # a name that is not UTF-8 shown escaped

    async def _ready(self) -> None:
        """The first look is done. One that failed (no descriptor left, say) raises once, for the
        checkpoint that waited on it; the next checkpoint tries again (the snapshot's next update
        is a whole look, or the store is opened anew), not fail for the rest of the session."""
        if self._first is not None and self._first.done() and not self._first.cancelled():
            if self._first.exception() is not None:
                if self._snapshot is not None:
                    return
                self._first = None
        if self._first is None:
            self.start()
        assert self._first is not None
        await asyncio.shield(self._first)

    def _check_cap(self) -> None:
        cap = self.settings.checkpoint_store_cap
        if cap and self._store_bytes > cap:
            raise CheckpointFailed(
                f"the checkpoint store {self.store.path} holds {self._store_bytes / 1e9:.1f} GB, over its cap "
                f"(checkpoint_store_cap, {cap / 1e9:.1f} GB); `workbench sessions --prune` frees it"
            )

    # --- restoring ------------------------------------------------------------------------

    def changes(self, now: str, target: str) -> list[Change]:
        return diff(self.store.repo, now, target)

    def restore(self, now: str, target: str, changes: list[Change], *, whole: bool = True) -> None:
        """Put the files of `changes` back as `target` holds them (`now`: the tree as it is); with
        `whole` (the whole tree goes back), the modes of the other paths too. Names that were one
        file (hard links) are made one file again."""
        repo = self.store.repo
        restorer = Restorer(self.workspace, repo)
        try:
            was, will = meta(repo, now), meta(repo, target)
            links = relinks(repo, now, target, changes, (was.get("links"), will.get("links")), whole=whole)
            restorer.apply(changes, will.get("modes", {}), was.get("modes", {}), whole=whole, links=links)
        finally:
            restorer.close()

    def link_changes(self, now: str, target: str) -> list[tuple[Change, bool]]:
        """Files whose bytes are the same in both but which are one file with other names in one
        and not in the other (hard links), each with whether `target` has it linked: a restore
        writes them again and links them as `target` has them."""
        return link_changes(self.store.repo, now, target)

    def mode_changes(self, now: str, target: str) -> dict[str, int | None]:
        """Paths whose exact mode differs (a folder's ends with '/'): the target's bits, or None for git's plain one."""
        a, b = modes(self.store.repo, now), modes(self.store.repo, target)
        return {path: b.get(path) for path in a.keys() | b.keys() if a.get(path) != b.get(path)}

    def tree_of(self, commit: str) -> str:
        """The top tree of a checkpoint: equal trees, equal workspaces (modes included)."""
        return str(self.store.repo[commit].peel(pygit2.Commit).tree_id)

    def line_counts(self, old: str, new: str) -> dict[str, tuple[int, int]]:
        return line_counts(self.store.repo, old, new)

    def patches(self, old: str, new: str, text_limit: int = 20_000) -> dict[str, tuple[int, int, str]]:
        return patches(self.store.repo, old, new, text_limit)

    def close(self) -> None:
        """End the watch; a first scan still running ends it itself when done (its thread uses it)."""
        with self._closing:
            self._closed = True
            if self._snapshot is not None:
                self._snapshot.close()
