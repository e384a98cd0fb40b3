"""Undo and rewind of a session: the workspace's files (code), the root's conversation, or both,
put back as they were before one of the person's prompts (a "turn").

A plan is made first (what will change, which of those files were changed outside Workbench
since its last checkpoint) and shown to the person; applying it restores the files from the
checkpoint store, cuts the conversation, and records a `rewind` event. The tree as it was
just before is a checkpoint too (reason REWIND), so `workbench undo` can take the rewind back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.config.settings import Settings
from workbench.core.safe_text import path_text
from workbench.core.words import ROOT_ID
from workbench.pb import workbench_pb2 as pb
from workbench.session.rebuild import rebuild_messages

if TYPE_CHECKING:
    from workbench.checkpoints.checkpointer import Checkpointer
    from workbench.checkpoints.history import History
    from workbench.checkpoints.restore import Change
    from workbench.session.session import Session


class RewindRefused(Exception):
    """The rewind cannot be made as asked: one line a person can act on."""


@dataclass
class FileChange:
    """One file a rewind changes: created, deleted or changed, with lines added and removed."""

    path: str
    kind: str
    added: int = 0
    removed: int = 0
    diff: str = ""  # the unified diff from the file as it is to the file as it will be (cut when long)


@dataclass
class RewindPlan:
    to_turn: int
    code: bool
    conversation: bool
    undo: bool
    what: str  # one line: what is put back
    now: str = ""  # the tree as it is (a REWIND checkpoint)
    target: str = ""  # the checkpoint the files go back to
    files: list[FileChange] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)  # changed outside Workbench since its last checkpoint
    conversation_seq: int = 0
    messages_dropped: int = 0
    changes: list[Change] = field(default_factory=list)
    whole: bool = True  # the whole tree goes back (False: one file, from the changed-files screen)


def read_history(events: list[pb.Event]) -> History:
    from workbench.checkpoints.history import read

    return read(events)


async def plan(session: Session, to_turn: int | None, *, code: bool = True, conversation: bool = False) -> RewindPlan:
    """What a rewind to before `to_turn` (None: undo the last turn's changes) would change."""
    from workbench.checkpoints.restore import files_of

    cps = session.checkpoints
    if session.busy:
        raise RewindRefused("a run is going: cancel it (or let it end) before a rewind")
    if cps is None and code:
        raise RewindRefused("checkpoints are off for this session (setting checkpoints), so no files can be put back")
    events = list(session.events())
    history = read_history(events)
    undo = to_turn is None
    if undo:
        conversation = False
    if not code and not conversation:
        raise RewindRefused("a rewind puts back the code, the conversation, or both: choose one")
    result = RewindPlan(to_turn or 0, code, conversation, undo, "")
    if code:
        assert cps is not None
        now = await cps.take(pb.CHECKPOINT_REASON_REWIND)
        assert now is not None
        if now.error:
            raise RewindRefused(now.error)
        session.recorder.emit(now)
        result.now = now.commit
    if undo:
        _undo_target(cps, history, result)
    else:
        turn = next((t for t in history.turns if t.number == to_turn), None)
        if turn is None:
            last = history.turns[-1].number if history.turns else 0
            raise RewindRefused(f"no turn {to_turn} in session {session.id}: its turns are 1 to {last}")
        result.what = f"before turn {turn.number} ({_short(turn.prompt)})"
        if code:
            if not turn.commit:
                raise RewindRefused(f"turn {turn.number} has no checkpoint (checkpoints were off, or failed)")
            result.target = turn.commit
        if conversation:
            if not turn.conversation_seq:
                raise RewindRefused(f"turn {turn.number}'s prompt is not in the conversation")
            result.conversation_seq = turn.conversation_seq
            result.messages_dropped = sum(
                1
                for e in events
                if e.seq >= turn.conversation_seq and e.agent_id == ROOT_ID and e.WhichOneof("kind") == "message"
            )
    if code and cps is not None and result.target:
        result.changes = cps.changes(result.now, result.target)
        found = cps.patches(result.now, result.target)
        for change, path in zip(result.changes, files_of(result.changes), strict=True):
            kind = "created" if change.now is None else "deleted" if change.target is None else "changed"
            added, removed, text = found.get(change.path, (0, 0, ""))
            result.files.append(FileChange(path, kind, added, removed, path_text(text)))
        for change, linked in cps.link_changes(result.now, result.target):  # the same bytes, other hard links
            result.changes.append(change)
            result.files.append(FileChange(change.path, "linked" if linked else "apart"))
        changed = {c.path for c in result.changes}
        for path, mode in cps.mode_changes(result.now, result.target).items():
            if path.rstrip("/") not in changed:
                result.files.append(FileChange(path, f"mode {mode:o}" if mode is not None else "mode"))
        result.outside = _outside(cps, history, result)
    return result


def _undo_target(cps: Checkpointer | None, history: History, result: RewindPlan) -> None:
    assert cps is not None
    rewind = history.last_rewind
    if rewind is not None and rewind.code and rewind.before_commit:
        result.target, result.to_turn = rewind.before_commit, rewind.to_turn
        result.what = f"as they were before the rewind to turn {rewind.to_turn} (the rewind is undone)"
        return
    now_tree = cps.tree_of(result.now)
    for turn in reversed(history.turns):
        if turn.commit and cps.tree_of(turn.commit) != now_tree:
            result.target, result.to_turn = turn.commit, turn.number
            result.what = f"before turn {turn.number} ({_short(turn.prompt)})"
            return
    raise RewindRefused("nothing to undo: the files are as they were before every turn of this session")


def _outside(cps: Checkpointer, history: History, result: RewindPlan) -> list[str]:
    """Files the rewind would change that were changed since the last checkpoint Workbench
    knows to be the tree it left (a run's end, a prompt): by the person, an editor, a build.
    After a kill -9 mid-call there is no such checkpoint: the changes are that call's."""
    last = history.last
    if last is None or last.reason not in (pb.CHECKPOINT_REASON_RUN_END, pb.CHECKPOINT_REASON_TURN):
        return []
    if last.commit == result.now:
        return []
    touched = {c.path for c in cps.changes(last.commit, result.now)}
    changing = {c.path for c in result.changes}
    return sorted(
        p for p in touched if p in changing or any(p.startswith(c + "/") or c.startswith(p + "/") for c in changing)
    )


async def apply(session: Session, plan: RewindPlan, *, overwrite_outside: bool = False) -> pb.Rewind:
    """Make the rewind: files, then the conversation; a `rewind` event records it."""
    if session.busy:
        raise RewindRefused("a run is going: cancel it (or let it end) before a rewind")
    record = pb.Rewind(
        to_turn=plan.to_turn,
        code=plan.code,
        conversation=plan.conversation,
        restored_commit=plan.target,
        before_commit=plan.now,
        undo=plan.undo,
    )
    cps = session.checkpoints
    if plan.code and cps is not None and (plan.changes or plan.files):  # files: a mode alone too
        keep = set() if overwrite_outside else set(plan.outside)
        changes = [
            c
            for c in plan.changes
            if c.path not in keep and not any(k.startswith(c.path + "/") or c.path.startswith(k + "/") for k in keep)
        ]
        cps.restore(plan.now, plan.target, changes, whole=plan.whole)
        record.files.extend(path_text(c.path) for c in changes)  # the event log's text: a name not UTF-8 escaped
    if plan.conversation and plan.conversation_seq:
        record.conversation_seq = plan.conversation_seq
        if session.tree.root is not None:
            kept = [e for e in session.events() if e.seq < plan.conversation_seq]
            session.tree.rewind_root(rebuild_messages(kept, ROOT_ID))
    session.recorder.emit(record)
    if plan.code and cps is not None:
        after = await cps.take(pb.CHECKPOINT_REASON_RUN_END)  # the tree Workbench left: later changes are outside
        if after is not None and not after.error:
            session.recorder.emit(after)
    session.put_back_to = plan.to_turn if plan.code and not plan.conversation else 0
    return record


async def restore_one(session: Session, path: str) -> pb.Rewind:
    """One file back as it was before the newest turn whose start differs from it now."""
    if Path(path).is_absolute():
        try:
            path = str(Path(path).relative_to(session.settings.workspace))
        except ValueError as err:
            raise RewindRefused(f"{path} is outside the workspace: checkpoints keep only the workspace") from err
    path = path.strip("/")
    cps = session.checkpoints
    if cps is None:
        raise RewindRefused("checkpoints are off for this session (setting checkpoints), so no file can be put back")
    events = list(session.events())
    history = read_history(events)
    whole = await plan(session, None)  # the tree as it is now becomes a checkpoint
    for turn in reversed(history.turns):
        if not turn.commit:
            continue
        changes = [c for c in cps.changes(whole.now, turn.commit) if c.path == path]
        if changes:
            one = RewindPlan(turn.number, True, False, False, f"{path} as before turn {turn.number}")
            one.now, one.target, one.changes, one.whole = whole.now, turn.commit, changes, False
            return await apply(session, one, overwrite_outside=True)
    raise RewindRefused(f"{path} is as it was before every turn of this session: nothing to put back")


def _short(prompt: str, limit: int = 50) -> str:
    line = next((x.strip() for x in prompt.splitlines() if x.strip()), "")
    return repr(line if len(line) <= limit else line[: limit - 1] + "…")


@dataclass
class CallSummary:
    agent_id: str
    tool: str
    call_id: str
    changed_by_it: int  # files the call changed (-1: not known yet, its run was cut or goes on)


@dataclass
class TurnSummary:
    """One rewind point: a prompt, the calls that followed, the files the turn changed."""

    number: int
    prompt: str
    commit: str
    calls: list[CallSummary] = field(default_factory=list)
    files: list[FileChange] = field(default_factory=list)


def summaries(settings: Settings, info: pb.SessionInfo, events: list[pb.Event]) -> list[TurnSummary]:
    """Each turn with the files it changed (from its checkpoint to the next turn's, or to the
    newest checkpoint for the last turn), with +/- line counts."""
    from workbench.checkpoints.repo import Store
    from workbench.checkpoints.restore import diff, files_of, line_counts

    history = read_history(events)
    out = [
        TurnSummary(
            t.number,
            t.prompt,
            t.commit,
            [CallSummary(c.agent_id, c.tool, c.call_id, c.changed_by_it) for c in t.calls],
        )
        for t in history.turns
    ]
    ends = [t.commit for t in out[1:]] + [history.last.commit if history.last else ""]
    if not settings.checkpoints and not any(t.commit for t in out):
        return out
    repo = Store(settings.data_dir, Path(info.workspace)).repo
    for turn, end in zip(out, ends, strict=True):
        if not turn.commit or not end or end == turn.commit:
            continue
        changes = diff(repo, turn.commit, end)
        counts = line_counts(repo, turn.commit, end)
        for change, path in zip(changes, files_of(changes), strict=True):
            kind = "created" if change.now is None else "deleted" if change.target is None else "changed"
            added, removed = counts.get(change.path, (0, 0))
            turn.files.append(FileChange(path, kind, added, removed))
    return out
