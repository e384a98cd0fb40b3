"""Transcript items: runtime state of the screen (not protocol), each wrapping the pb messages it shows."""

from __future__ import annotations

import itertools

from workbench.pb import workbench_pb2 as pb
from workbench.tui.text import argument_summary

FILE_TOOLS = ("write_file", "edit_file")
_keys = itertools.count(1)


class Item:
    """One entry of an agent's transcript; `version` goes up whenever it changes."""

    def __init__(self, seq: int, time: float) -> None:
        self.key = next(_keys)
        self.seq, self.time, self.version = seq, time, 0


class UserItem(Item):
    def __init__(self, seq: int, time: float, text: str, queued: bool = False) -> None:
        super().__init__(seq, time)
        self.text, self.queued = text, queued
        self.author: int = pb.AUTHOR_PERSON  # who wrote it: the person, a parent agent, the Inbox, Workbench
        self.starting = False  # sent before the session opened: shown at once, sent once it is open


class AssistantItem(Item):
    """Assistant text: streamed (`done` False) until its complete message arrives."""

    def __init__(self, seq: int, time: float, text: str = "", done: bool = False) -> None:
        super().__init__(seq, time)
        self.text, self.done, self.discarded = text, done, False


class ToolItem(Item):
    """One tool call: its streamed output while it runs, then its result (and a defect's traceback)."""

    def __init__(self, seq: int, time: float, call: pb.ToolCall) -> None:
        super().__init__(seq, time)
        self.call = call
        self.summary = argument_summary(call.name, call.arguments)
        self.output: list[str] = []  # streamed chunks, in order
        self.agent_id = ""
        self.result: pb.ToolResult | None = None
        self.defect: pb.Defect | None = None

    @property
    def running(self) -> bool:
        return self.result is None

    @property
    def failed(self) -> bool:
        return self.result is not None and self.result.is_error

    @property
    def streamed(self) -> str:
        return "".join(self.output)

    @property
    def diff(self) -> str:
        """The unified diff of a write_file or edit_file call ("" when there is none)."""
        if self.result is None or self.call.name not in FILE_TOOLS:
            return ""
        value = self.result.metadata.fields.get("diff")
        return value.string_value if value is not None else ""


class NoticeItem(Item):
    """One line about the run: a retry wait (with its end time), a compaction, a defect, a notice."""

    def __init__(self, seq: int, time: float, kind: str, text: str, level: str = "info") -> None:
        super().__init__(seq, time)
        self.kind, self.text, self.level = kind, text, level
        self.until = 0.0  # retry waits: when the next attempt starts (event time + seconds)
        self.detail = ""  # a defect's traceback
