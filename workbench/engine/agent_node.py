"""One agent of the tree at runtime (`Agent`): its info, loop, Inbox, task, children and queue.

`engine/agents.py` builds, runs and ends these nodes; this module holds only the node itself.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque

from workbench.core import activity
from workbench.engine.inbox import Inbox
from workbench.engine.loop import AgentLoop
from workbench.engine.recorder import Recorder
from workbench.pb import workbench_pb2 as pb


class Agent:
    """One agent of the tree at runtime: its info, loop, Inbox, task, children and queue."""

    def __init__(self, info: pb.AgentInfo, parent: Agent | None, recorder: Recorder, inbox: Inbox):
        self.info, self.parent, self.recorder, self.inbox = info, parent, recorder, inbox
        self.loop: AgentLoop | None = None
        self.run_prompt = info.prompt
        self.children: list[Agent] = []
        self.queue: deque[Agent] = deque()  # children waiting for a running slot
        self.running_children = 0  # children started and not ended (a count: 100 spawns stay linear)
        self.task: asyncio.Task[None] | None = None
        self.done: asyncio.Future[pb.AgentFinished] = asyncio.get_running_loop().create_future()
        self.entered = False  # its task began running (before that, cancel is a flag)
        self.ending = False
        self.cancel_cause = ""
        self.started = 0.0
        self.ended = 0.0
        self.activity = activity.QUEUED
        self.activity_at = time.monotonic()

    @property
    def id(self) -> str:
        return self.info.id

    @property
    def running(self) -> bool:
        return self.task is not None and not self.done.done()

    @property
    def elapsed(self) -> float:
        """Seconds it has run (0 while queued)."""
        if not self.started:
            return 0.0
        return (self.ended or time.monotonic()) - self.started

    def descendants(self) -> list[Agent]:
        found = []
        for child in self.children:
            found.append(child)
            found.extend(child.descendants())
        return found
