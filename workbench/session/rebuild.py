"""Rebuilding a stored session from its event log, and closing what its dead process left open.

An agent's conversation is its `message` events in order, after the system prompt its first
run started with; a compaction replaces the older messages by the summary that follows it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.core.feedback import interrupted
from workbench.core.words import FINAL_AGENT_STATUSES, ROOT_ID
from workbench.engine.agent_node import Agent
from workbench.engine.looping import JUDGE as LOOPING_JUDGE
from workbench.engine.recorder import Recorder
from workbench.engine.store import Store
from workbench.pb import workbench_pb2 as pb

if TYPE_CHECKING:
    from workbench.engine.agents import AgentTree

INTERRUPTED_CALL = "interrupted: the workbench process stopped before this call finished"
INTERRUPTED_AGENT = "the workbench process stopped while it ran"
WAITED = "; the workbench process ended while it waited for the person"  # a looping agent's


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


def mark_interrupted(store: Store, session_id: str) -> dict[str, tuple[pb.AgentStatus, str]]:
    """End every agent of a session whose process died without ending it: INTERRUPTED, or, for an
    agent that waited for the person because it kept repeating a call (engine/looping.py), FAILED
    as stopped, the way a headless run ends it (it stays stopped, not interrupted).

    Each gets an AgentFinished and the session's status becomes INTERRUPTED (STOPPED when only
    looping agents were left). Returns the agents ended: id -> (status, cause); empty when nothing
    was left running. Called for the sessions `reap_orphans` found, and again (finding nothing
    new) when one is resumed.
    """
    ended: dict[str, tuple[pb.AgentStatus, str]] = {}
    agents = [a for a in store.agents(session_id) if a.status not in FINAL_AGENT_STATUSES]
    looping = _looping(store, session_id) if agents else {}
    with store.transaction():
        for info in agents:
            stopped = looping.get(info.id, "")
            status = pb.AGENT_STATUS_FAILED if stopped else pb.AGENT_STATUS_INTERRUPTED
            cause = f"stopped: {stopped}{WAITED}" if stopped else INTERRUPTED_AGENT
            info.status = status
            store.save_agent(session_id, info)
            Recorder(store, session_id, info.id).emit(pb.AgentFinished(agent_id=info.id, status=status, cause=cause))
            ended[info.id] = (status, cause)
        if ended:
            only_looping = all(status == pb.AGENT_STATUS_FAILED for status, _ in ended.values())
            store.set_session_status(session_id, pb.RUN_STATUS_STOPPED if only_looping else pb.RUN_STATUS_INTERRUPTED)
    return ended


def _looping(store: Store, session_id: str) -> dict[str, str]:
    """Agents whose last open review was the repeat detector's: id -> what it kept repeating."""
    open_reviews: dict[str, tuple[str, str]] = {}  # call id -> (agent, reason)
    for event in store.events(session_id):
        kind = event.WhichOneof("kind")
        if kind == "guard_decision" and event.guard_decision.judge == LOOPING_JUDGE:
            d = event.guard_decision
            open_reviews[d.call_id] = (event.agent_id, d.reason.split(". ")[0])
        elif kind == "review_decided":
            open_reviews.pop(event.review_decided.call_id, None)
        elif kind == "tool_call_finished":
            open_reviews.pop(event.tool_call_finished.result.call_id, None)
    return {agent: reason for agent, reason in open_reviews.values()}


def unanswered_calls(messages: list[pb.Message]) -> list[pb.ToolCall]:
    """The tool calls of a conversation that have no result in it, in order."""
    answered = {m.tool_result.call_id for m in messages if m.role == pb.ROLE_TOOL}
    return [call for m in messages if m.role == pb.ROLE_ASSISTANT for call in m.tool_calls if call.id not in answered]


def interrupt_leftovers(
    store: Store, session_id: str, root: Agent, events: list[pb.Event], open_calls: list[pb.ToolCall]
) -> None:
    """Mark what the dead process left running INTERRUPTED, and answer every open call of the root.

    Each agent that had not ended gets an AgentFinished(INTERRUPTED); an async child of the
    root also an Inbox item, so the model hears of it at its next turn; each call of the root
    without a result (`open_calls`, read from the conversation the root was rebuilt with) gets a
    synthetic "interrupted" one (with the output it had streamed), so the provider accepts the
    conversation.
    """
    loop = root.loop
    assert loop is not None
    streamed: dict[str, list[str]] = {}
    for event in events:
        if event.WhichOneof("kind") == "tool_output" and event.agent_id == root.id:
            streamed.setdefault(event.tool_output.call_id, []).append(event.tool_output.text)
    recorder = root.recorder
    # what a dead process left ended now or when it was reaped at start: (interrupted, or stopped looping)
    causes = {
        e.agent_finished.agent_id: e.agent_finished.cause
        for e in events
        if e.WhichOneof("kind") == "agent_finished"
        and e.agent_finished.cause
        and (e.agent_finished.cause == INTERRUPTED_AGENT or e.agent_finished.cause.endswith(WAITED))
    }
    causes.update({agent_id: cause for agent_id, (_, cause) in mark_interrupted(store, session_id).items()})
    told = {e.inbox_item.child_id for e in events if e.WhichOneof("kind") == "inbox_item" and e.agent_id == root.id}
    with store.transaction():
        for call in open_calls:
            result = interrupted(call, INTERRUPTED_CALL, partial="".join(streamed.get(call.id, [])))
            recorder.emit(pb.ToolCallFinished(result=result))
            loop.append(pb.Message(role=pb.ROLE_TOOL, tool_result=result))
        for info in store.agents(session_id):
            if info.id == root.id:
                root.info.status = info.status
            elif (
                info.status in (pb.AGENT_STATUS_INTERRUPTED, pb.AGENT_STATUS_FAILED)
                and info.id in causes
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
                        cause=causes[info.id],
                        recipient_id=root.id,
                    )
                )


def rebuild_tree(tree: AgentTree, store: Store, session_id: str, events: list[pb.Event]) -> bool:
    """A stored session's tree as its process left it: child ids go on from the highest one, the
    budget spent counts on, the root holds its conversation, what was left running is interrupted.
    False when the session has no root agent yet (nothing ran)."""
    agents = store.agents(session_id)
    tree.restore(agents)
    for event in reversed(events):
        if event.WhichOneof("kind") == "usage_update":
            tree.budget.used.CopyFrom(event.usage_update.session_total)
            break
    root_info = next((a for a in agents if a.id == ROOT_ID), None)
    if root_info is None:
        return False
    messages = rebuild_messages(events, ROOT_ID)
    root = tree.make_root(root_info.prompt, list(root_info.tools), messages, announce=False)
    root.info.CopyFrom(root_info)
    assert root.loop is not None
    root.loop.usage.CopyFrom(root_info.usage)  # its own calls of earlier processes count on
    interrupt_leftovers(store, session_id, root, events, unanswered_calls(messages))
    return True
