"""The stored sessions of a data folder: list, find, prune, and read one for an export.

What `workbench sessions`, `workbench export`, `--resume`/`--continue` and the TUI's resume
picker use instead of the store itself. It opens the store for each call and closes it again.
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.config.settings import Settings
from workbench.core.words import FINAL_AGENT_STATUSES
from workbench.engine.store import Store, to_json
from workbench.engine.store_schema import StoreError
from workbench.pb import workbench_pb2 as pb
from workbench.session.errors import SessionError
from workbench.session.lock import is_locked

if TYPE_CHECKING:
    from workbench.session.rewind import TurnSummary


def event_json(event: pb.Event) -> str:
    """One event as one JSONL line: protobuf's JSON mapping with the proto (snake_case) field names."""
    return to_json(event)


def open_store(settings: Settings) -> Store:
    try:
        return Store(settings.db_path)
    except StoreError as err:
        raise SessionError(str(err)) from err


def list_sessions(settings: Settings) -> list[pb.SessionInfo]:
    """Stored sessions, newest first; `live` when another process holds one now."""
    if not settings.db_path.exists():
        return []
    store = open_store(settings)
    try:
        found = store.sessions()
        roots = store.root_statuses()
    finally:
        store.close()
    for info in found:
        info.live = is_locked(settings.sessions_dir / info.id)
        if not info.live and roots.get(info.id, pb.AGENT_STATUS_COMPLETED) not in FINAL_AGENT_STATUSES:
            info.status = pb.RUN_STATUS_INTERRUPTED  # its process died mid-run; resuming marks it so
    return found


def find_session(settings: Settings, session_id: str) -> pb.SessionInfo:
    """One stored session by id (or a unique prefix of it)."""
    return one_of(list_sessions(settings), session_id, settings)


def one_of(stored: list[pb.SessionInfo], session_id: str, settings: Settings) -> pb.SessionInfo:
    """The session of `stored` that `session_id` (or a unique prefix of it) names."""
    matches = [s for s in stored if s.id.startswith(session_id)] if session_id else []
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise SessionError(f"no session {session_id!r} in {settings.data_dir}; `workbench sessions` lists them")
    raise SessionError(f"{session_id!r} names {len(matches)} sessions; give more of the id")


def session_to_open(settings: Settings, store: Store, resume: str | None) -> str:
    """The id of the session `Session.open` opens: a new one, or the stored `resume` (an id or its
    prefix) of this workspace."""
    if resume is None:
        return store.create_session(settings.workspace, settings.model)
    info = one_of(store.sessions(), resume, settings)
    if Path(info.workspace) != settings.workspace:
        raise SessionError(
            f"session {info.id} works in {info.workspace}, not {settings.workspace}; "
            "resume it without --workspace (or from that folder)"
        )
    return info.id


def session_to_resume(
    settings: Settings, resume_id: str | None, newest: bool, workspace_given: bool, model_given: bool
) -> str | None:
    """The stored session `--resume ID` (or `--continue`: the workspace's newest) names, or None;
    it brings its workspace and model unless the flags gave them. SessionError when none is found."""
    if not (resume_id or newest):
        return None
    info = find_session(settings, resume_id) if resume_id else newest_session(settings, settings.workspace)
    if not workspace_given:
        settings.workspace = Path(info.workspace)
    if not model_given:
        settings.model = info.model
    return info.id


def newest_session(settings: Settings, workspace: Path) -> pb.SessionInfo:
    """The newest session of this workspace (`--continue`)."""
    here = str(workspace.resolve())
    for info in list_sessions(settings):
        if info.workspace == here:
            return info
    raise SessionError(f"no session of {here} to continue; start one without --continue")


def prune(settings: Settings, older_than: float) -> list[str]:
    """Delete the sessions last active more than `older_than` seconds ago (never one open elsewhere)."""
    cutoff = time.time() - older_than
    old = [s for s in list_sessions(settings) if s.updated.seconds < cutoff and not s.live]
    if not old:
        return []
    store = open_store(settings)
    try:
        for info in old:
            store.delete_session(info.id)
            shutil.rmtree(settings.sessions_dir / info.id, ignore_errors=True)
        store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        store.close()
    return [s.id for s in old]


@dataclass(frozen=True)
class Transcript:
    """One stored session as committed: its info, its agents (parents first), its events in order."""

    info: pb.SessionInfo
    agents: list[pb.AgentInfo]
    events: list[pb.Event]


def transcript(settings: Settings, session_id: str) -> Transcript:
    """The stored session `session_id` (or a unique prefix of it) names, read whole."""
    info = find_session(settings, session_id)
    store = open_store(settings)
    try:
        return Transcript(info, store.agents(info.id), list(store.events(info.id)))
    finally:
        store.close()


def agents_of(settings: Settings, session_id: str) -> tuple[pb.SessionInfo, list[pb.AgentInfo]]:
    """The stored session `session_id` names and its agents (parents first), each with its own usage."""
    info = find_session(settings, session_id)
    store = open_store(settings)
    try:
        return info, store.agents(info.id)
    finally:
        store.close()


def stored_turns(settings: Settings, session_id: str) -> tuple[pb.SessionInfo, list[TurnSummary]]:
    """A stored session's rewind points (`workbench checkpoints`), read without opening it."""

    info = find_session(settings, session_id)
    store = open_store(settings)
    try:
        events = list(store.events(info.id))
    finally:
        store.close()
    from workbench.session.rewind import summaries  # the engine's checkpoints: not for `--resume`'s lookup

    return info, summaries(settings, info, events)
