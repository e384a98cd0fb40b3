"""What an agent is doing now, in a few words, read from its latest event (the subagent tool's
`list` shows it with how long ago it changed)."""

from __future__ import annotations

from workbench.core.words import agent_ended, agent_status
from workbench.pb import workbench_pb2 as pb


def activity_of(event: pb.Event) -> str | None:
    """The activity an event shows for its agent; None for an event that changes nothing."""
    kind = event.WhichOneof("kind")
    if kind == "tool_call_started":
        return f"calling {event.tool_call_started.call.name}"
    if kind == "tool_call_finished":
        result = event.tool_call_finished.result
        return f"{result.name} {'failed' if result.is_error else 'done'}"
    if kind == "text_delta":
        return "writing"
    if kind == "retry_wait":
        return f"retrying the model call ({event.retry_wait.reason})"
    if kind == "agent_status":
        if event.agent_status.status == pb.AGENT_STATUS_WAITING:
            return "waiting for its subagents"
        if event.agent_status.status == pb.AGENT_STATUS_RUNNING:
            return "running"
        return agent_status(event.agent_status.status)
    if kind == "inbox_item":
        return "got an Inbox item"
    if kind == "agent_finished":
        return agent_ended(event.agent_finished.status)
    return None
