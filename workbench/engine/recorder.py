"""One agent's events (`Recorder`): `emit(message)` builds the Event that carries a message and
writes it at the speed its kind needs (see `engine/store.py`): at once, with the event loop's
pass (GROUPED_KINDS, the record of a run), or merged about every 50 ms (BATCHED_KINDS).
"""

from __future__ import annotations

import time

from google.protobuf.message import Message

from workbench.engine.store import Store
from workbench.pb import workbench_pb2 as pb

BATCHED_KINDS = ("text_delta", "tool_output")  # merged per stream, written about every store.BATCH_SECONDS
# The record of a run, written at the end of the event loop's pass: nothing in memory waits for
# these commits (state that others read changes with the events outside this set, at once).
GROUPED_KINDS = frozenset(
    (
        "run_started",
        "run_finished",
        "message",
        "usage_update",
        "tool_call_started",
        "tool_call_delta",
        "tool_call_finished",
    )
)
# The oneof member of Event for each message type: Recorder.emit(message) picks it.
_KIND_OF_TYPE: dict[str, str] = {
    field.message_type.full_name: field.name for field in pb.Event.DESCRIPTOR.oneofs_by_name["kind"].fields
}


def kind_of(message: Message) -> str:
    """The Event oneof member that carries a message of this type ("tool_call_finished", ...)."""
    return _KIND_OF_TYPE[message.DESCRIPTOR.full_name]


class Recorder:
    """Events of one agent in one session: `emit(message)` builds and appends its Event."""

    def __init__(self, store: Store, session_id: str, agent_id: str):
        self.store, self.session_id, self.agent_id = store, session_id, agent_id

    def event(self, message: Message) -> pb.Event:
        """The Event carrying `message`, in the oneof member its type names."""
        event = pb.Event(session_id=self.session_id, agent_id=self.agent_id)
        now = time.time_ns()  # not Timestamp.GetCurrentTime(): a datetime round trip, a fifth of an append
        event.time.seconds, event.time.nanos = now // 1_000_000_000, now % 1_000_000_000
        getattr(event, kind_of(message)).CopyFrom(message)
        return event

    def emit(self, message: Message) -> pb.Event:
        """Record `message` as this agent's event, in the Event member its type names."""
        event = self.event(message)
        kind = event.WhichOneof("kind")
        if kind in BATCHED_KINDS:
            self.store.append_batched(event)
        elif kind in GROUPED_KINDS:
            self.store.append_grouped(event)
        else:
            self.store.append(event)
        return event

    def output(self, call_id: str, text: str) -> None:
        self.emit(pb.ToolOutputChunk(call_id=call_id, text=text))
