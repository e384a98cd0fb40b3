"""A session's own checkpoints: its Checkpointer, the checkpoint taken at each of the person's
prompts (a turn) and at a run's end, the turn numbering a resumed session goes on with, and the
line the model reads after a files-only rewind. Undo and rewind themselves are `session/rewind.py`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.config.settings import Settings
from workbench.engine.gates import record_checkpoint
from workbench.pb import workbench_pb2 as pb
from workbench.session.rewind import read_history

if TYPE_CHECKING:
    from workbench.checkpoints.checkpointer import Checkpointer
    from workbench.session.session import Session


def new_checkpointer(settings: Settings, session_id: str) -> Checkpointer | None:
    if not settings.checkpoints:
        return None
    from workbench.checkpoints.checkpointer import Checkpointer  # pygit2 loads only when a session opens

    return Checkpointer(settings, session_id)


def resume_checkpoints(session: Session, events: list[pb.Event]) -> None:
    """A resumed session numbers its next prompt after the stored ones, and still owes the model
    the line of a code-only rewind made since its last prompt."""
    history = read_history(events)
    if session.checkpoints is not None:
        session.checkpoints.turn = max((t.number for t in history.turns), default=0)
    session.put_back_to = history.rewound_code_to


def tell_put_back(session: Session) -> None:
    """After a code-only rewind, one line before the person's next prompt (see rewind.py)."""
    from workbench.checkpoints.history import put_back_line

    if not session.put_back_to:
        return
    note = pb.Message(role=pb.ROLE_USER, text=put_back_line(session.put_back_to), author=pb.AUTHOR_WORKBENCH)
    if session.tree.tell_root(note):
        session.put_back_to = 0


async def keep_checkpoint(session: Session, reason: pb.CheckpointReason) -> None:
    """A checkpoint of the session itself (a prompt, a run's end), recorded as the root's event."""
    if session.checkpoints is None:
        return
    cp = await session.checkpoints.take(reason)
    if cp is None or (cp.unchanged and reason == pb.CHECKPOINT_REASON_RUN_END):
        return  # a run that changed nothing ends with its own events (history.py reads it so)
    record_checkpoint(cp, session.recorder.emit, failed=cp.error)
