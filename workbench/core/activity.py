"""What an agent is doing, in words: the one vocabulary of the subagent tool's `list` (through the
tree's `activity_of`), the TUI's agent rows and working line, and the headless printer. A phrase
for an agent's doing is written here and nowhere else; each client picks the ones it shows.
"""

from __future__ import annotations

from workbench.core.words import agent_ended, agent_status
from workbench.pb import workbench_pb2 as pb

QUEUED = "queued"  # created past the running limit: it waits for a slot
STARTING = "starting"  # its task was created (the tree's word)
STARTED = "started"  # its `agent_spawned` was seen (the TUI's word; a row then shows its status)
WRITING = "writing"  # the model's reply streams in
WAITING_FOR_CHILDREN = "waiting for its subagents"
GOT_INBOX_ITEM = "got an Inbox item"


def calling(name: str) -> str:
    """A tool call started (the subagent tool's `list`)."""
    return f"calling {name}"


def running(name: str, summary: str) -> str:
    """A tool call started, with what it works on (the TUI's row: `bash pytest -q`)."""
    return f"{name} {summary}".strip()


def call_ended(name: str, failed: bool) -> str:
    return f"{name} {'failed' if failed else 'done'}"


def writing_call(name: str, chars: int) -> str:
    """A tool call the model is writing (its arguments stream in)."""
    return f"writing a {name or 'tool'} call ({chars} chars)"


def retrying(reason: str) -> str:
    """A failed model call waits for its next attempt (the subagent tool's `list`)."""
    return f"retrying the model call ({reason})"


def retrying_short(reason: str) -> str:
    """The same in the TUI's narrow row and working line (the caller shortens the reason)."""
    return f"retrying ({reason})"


def retrying_in(seconds: float, reason: str) -> str:
    """The same with the wait (the headless printer's line)."""
    return f"retrying in {seconds:.1f} s ({reason})"


def status_activity(status: int) -> str:
    """An agent's new status as its activity: waiting for its children, or the status's word."""
    return WAITING_FOR_CHILDREN if status == pb.AGENT_STATUS_WAITING else agent_status(status)


def started_subagent(name: str, mode: str) -> str:
    """A parent started a child (the headless printer's line, before the child's task)."""
    return f"started subagent {name} ({mode})"


def activity_of(event: pb.Event) -> str | None:
    """The activity an event shows for its agent (the subagent tool's `list`); None for an event
    that changes nothing."""
    kind = event.WhichOneof("kind")
    if kind == "tool_call_started":
        return calling(event.tool_call_started.call.name)
    if kind == "tool_call_finished":
        result = event.tool_call_finished.result
        return call_ended(result.name, result.is_error)
    if kind == "text_delta":
        return WRITING
    if kind == "retry_wait":
        return retrying(event.retry_wait.reason)
    if kind == "agent_status":
        return status_activity(event.agent_status.status)
    if kind == "inbox_item":
        return GOT_INBOX_ITEM
    if kind == "agent_finished":
        return agent_ended(event.agent_finished.status)
    return None
