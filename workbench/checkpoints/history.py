"""Rewind points read from a session's event log: the person's prompts ("turns"), each tool
call's checkpoint within them, and the rewinds made so far."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from workbench.core.words import ROOT_ID
from workbench.pb import workbench_pb2 as pb


@dataclass
class CallPoint:
    """The checkpoint taken before one tool call."""

    seq: int
    agent_id: str
    call_id: str
    tool: str
    commit: str
    changed_by_it: int = -1  # files the call changed (the next checkpoint's count); -1: not known yet


@dataclass
class Turn:
    """One of the person's prompts, and the checkpoints of the calls that followed it."""

    number: int
    commit: str = ""  # the workspace as the prompt was sent
    prompt: str = ""
    conversation_seq: int = 0  # the seq of the prompt's message in the root's conversation
    calls: list[CallPoint] = field(default_factory=list)


@dataclass
class History:
    turns: list[Turn]
    last: pb.Checkpoint | None  # the newest checkpoint with a commit
    last_rewind: pb.Rewind | None  # the newest rewind, when no prompt came after it
    rewound_code_to: int = 0  # a code-only rewind not yet told to the model (its turn)


def read(events: Iterable[pb.Event]) -> History:
    turns: dict[int, Turn] = {}
    prompts = 0
    last: pb.Checkpoint | None = None
    last_rewind: pb.Rewind | None = None
    told_to = 0
    previous: CallPoint | None = None
    ended = False  # the root's run ended after `previous`: no run-end checkpoint came, so nothing changed
    for event in events:
        kind = event.WhichOneof("kind")
        if kind == "run_finished" and event.agent_id == ROOT_ID:
            ended = previous is not None
        if kind == "checkpoint":
            cp = event.checkpoint
            if not cp.commit:
                continue
            if previous is not None:  # the newest call's checkpoint: this one says what it changed
                after_end = ended and cp.reason != pb.CHECKPOINT_REASON_RUN_END
                previous.changed_by_it = 0 if cp.unchanged or after_end else cp.files_changed
                previous, ended = None, False
            last = cp
            for waiting in turns.values():  # a prompt sent before the first scan was done has no checkpoint
                # of its own: the first one after it holds the tree as it was (its calls before it changed nothing)
                if waiting.prompt and not waiting.commit:
                    waiting.commit = cp.commit
            turn = turns.setdefault(cp.turn, Turn(cp.turn))
            if cp.reason == pb.CHECKPOINT_REASON_TURN:
                turn.commit = cp.commit
            elif cp.reason == pb.CHECKPOINT_REASON_TOOL_CALL:
                previous = CallPoint(event.seq, event.agent_id, cp.call_id, cp.tool, cp.commit)
                turn.calls.append(previous)
                turn.commit = turn.commit or cp.commit
        elif kind == "rewind":
            last_rewind = event.rewind
            told_to = event.rewind.to_turn if event.rewind.code and not event.rewind.conversation else 0
        elif kind == "message" and event.agent_id == ROOT_ID and event.message.role == pb.ROLE_USER:
            told_to = 0  # the line after a code-only rewind goes before the next prompt
            if event.message.author == pb.AUTHOR_PERSON:
                prompts += 1
                turn = turns.setdefault(prompts, Turn(prompts))
                turn.prompt, turn.conversation_seq = event.message.text, event.seq
                last_rewind = None
    if previous is not None and ended:
        previous.changed_by_it = 0
    found = sorted((t for t in turns.values() if t.number > 0 and (t.commit or t.prompt)), key=lambda t: t.number)
    return History(found, last, last_rewind, told_to)


def put_back_line(turn: int) -> str:
    """What the model is told once after a code-only rewind."""
    return (
        f"(Workbench: the person put the workspace's files back to how they were before turn {turn}; "
        "what you read or wrote since may no longer be there: read files again before relying on them.)"
    )
