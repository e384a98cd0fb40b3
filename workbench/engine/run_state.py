"""What one run of an agent's loop knows, apart from the loop's wiring and its conversation.

`AgentLoop.run` builds a fresh `RunState` at each run's start (the person's next prompt starts a
new run of the same conversation), so nothing of a run is reset by hand and nothing of it leaks
into the next. The loop object keeps what outlives a run: its wiring (model, tools, recorder,
guard, checkpoints), the conversation, the agent's usage, and what other tasks hand it (the
person's queued prompts, how a cancel ends the run).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from workbench.engine.repeats import Repeats
from workbench.pb import workbench_pb2 as pb


@dataclass
class RunState:
    """One run's counters and memory (its calls by id, its repeats, its end)."""

    repeats: Repeats  # this run's calls: reminders, "you already have this result", the looping stop
    turns: int = 0  # model calls of this run
    outcome: pb.RunFinished | None = None  # how it ended, once it has
    asked_for_evidence: bool = False  # its answer was asked which result shows it (evidence.py)
    turned_back: str = ""  # the one line its final answer got back (turn_back.py: advice, claims, undone, rest)
    turned_back_twice: bool = False  # a second line came, with the ready call the first lacked (turn_back.py)
    announced: str = ""  # the line an answer that only announced its next step got back (announce.py)
    held: list[str] = field(default_factory=list)  # answers a Workbench line turned back, no call since: kept
    calls: list[tuple[pb.ToolCall, pb.ToolResult]] = field(default_factory=list)  # its calls as they finished
    stopped: str = ""  # why it stops after this turn's calls: it kept repeating one (looping.py)
    text_calls: dict[str, str] = field(default_factory=dict)  # call id -> why a call recovered from text cannot run
    text_notes: dict[str, list[str]] = field(default_factory=dict)  # call id -> notes for a call read from text
    started: dict[str, float] = field(default_factory=dict)  # call id -> when its tool started (for interrupted)
    abandoned: set[str] = field(default_factory=set)  # calls recorded as interrupted while their tool still ran


class RunEnded(Exception):
    """Control flow: the run ends with `status` (never fed back to the model)."""

    def __init__(self, status: pb.RunStatus, reason: str = "", text: str = ""):
        super().__init__(reason)
        self.status, self.reason, self.text = status, reason, text
