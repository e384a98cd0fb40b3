"""Rebuilding a stored session from its event log, and closing what its dead process left open.

An agent's conversation is its `message` events in order, after the system prompt its first
run started with; a compaction replaces the older messages by the summary that follows it.
"""

from __future__ import annotations

from workbench.core.feedback import interrupted
from workbench.core.words import FINAL_AGENT_STATUSES
from workbench.engine.agents import Agent
from workbench.engine.store import Recorder, Store
from workbench.pb import workbench_pb2 as pb

INTERRUPTED_CALL = "interrupted: the workbench process stopped before this call finished"
INTERRUPTED_AGENT = "the workbench process stopped while it ran"


def rebuild_messages(events: list[pb.Event], agent_id: str) -> list[pb.Message]:
    """The conversation an agent held: what its next model request would have sent."""
    messages: list[pb.Message] = []
    summary_at: int | None = None  # a compaction's summary goes after the system prompt
    for index, event in enumerate(events):
        if event.agent_id != agent_id:
            continue
        kind = event.WhichOneof("kind")
        if kind == "rewind" and event.rewind.conversation and event.rewind.conversation_seq:
            cut = event.rewind.conversation_seq  # the person rewound the conversation to before that prompt
            messages = rebuild_messages([e for e in events[:index] if e.seq < cut], agent_id)
            summary_at = None
            continue
        if kind == "run_started" and not messages and event.run_started.system_prompt:
            messages.append(pb.Message(role=pb.ROLE_SYSTEM, text=event.run_started.system_prompt))
        elif kind == "compaction":
            system = [m for m in messages if m.role == pb.ROLE_SYSTEM]
            body = [m for m in messages if m.role != pb.ROLE_SYSTEM]
            recent = max(event.compaction.messages_after - len(system) - 1, 0)
            messages = system + (body[-recent:] if recent else [])
            summary_at = len(system)
        elif kind == "message":
            if summary_at is not None:
                messages.insert(summary_at, event.message)
                summary_at = None
            else:
                messages.append(event.message)
    return messages


def mark_interrupted(store: Store, session_id: str) -> bool:
    """Mark every agent of a session whose process died without ending it INTERRUPTED.

    Each gets an AgentFinished(INTERRUPTED) and the session's status becomes INTERRUPTED;
    False when nothing was left running. Called for the sessions `reap_orphans` found, and
    again (finding nothing new) when one is resumed.
    """
    found = False
    with store.transaction():
        for info in store.agents(session_id):
            if info.status in FINAL_AGENT_STATUSES:
                continue
            found = True
            info.status = pb.AGENT_STATUS_INTERRUPTED
            store.save_agent(session_id, info)
            Recorder(store, session_id, info.id).emit(
                pb.AgentFinished(agent_id=info.id, status=info.status, cause=INTERRUPTED_AGENT)
            )
        if found:
            store.set_session_status(session_id, pb.RUN_STATUS_INTERRUPTED)
    return found


def interrupt_leftovers(store: Store, session_id: str, root: Agent, events: list[pb.Event]) -> None:
    """Mark what the dead process left running INTERRUPTED, and answer every open call of the root.

    Each agent that had not ended gets an AgentFinished(INTERRUPTED); an async child of the
    root also an Inbox item, so the model hears of it at its next turn; each call of the root
    without a result gets a synthetic "interrupted" one (with the output it had streamed), so
    the provider accepts the conversation.
    """
    loop = root.loop
    assert loop is not None
    answered = {m.tool_result.call_id for m in loop.messages if m.role == pb.ROLE_TOOL}
    open_calls = [
        call for m in loop.messages if m.role == pb.ROLE_ASSISTANT for call in m.tool_calls if call.id not in answered
    ]
    streamed: dict[str, list[str]] = {}
    for event in events:
        if event.WhichOneof("kind") == "tool_output" and event.agent_id == root.id:
            streamed.setdefault(event.tool_output.call_id, []).append(event.tool_output.text)
    recorder = Recorder(store, session_id, root.id)
    mark_interrupted(store, session_id)
    told = {e.inbox_item.child_id for e in events if e.WhichOneof("kind") == "inbox_item" and e.agent_id == root.id}
    with store.transaction():
        for call in open_calls:
            result = interrupted(call, INTERRUPTED_CALL, partial="".join(streamed.get(call.id, [])))
            recorder.emit(pb.ToolCallFinished(result=result))
            loop.messages.append(pb.Message(role=pb.ROLE_TOOL, tool_result=result))
            recorder.emit(loop.messages[-1])
        for info in store.agents(session_id):
            if info.id == root.id:
                root.info.status = info.status
            elif (
                info.status == pb.AGENT_STATUS_INTERRUPTED
                and info.parent_id == root.id
                and info.mode != pb.SPAWN_MODE_SYNC
                and info.id not in told
            ):
                root.inbox.put(
                    pb.InboxItem(
                        kind=pb.INBOX_KIND_COMPLETION,
                        child_id=info.id,
                        child_name=info.name,
                        status=info.status,
                        cause=INTERRUPTED_AGENT,
                        recipient_id=root.id,
                    )
                )
