"""What the subagent tool of one agent may do with the tree (`AgentHandle`, its `ctx.agents`):
create children, wait for or cancel its own descendants, message any live agent."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from workbench.core.feedback import Feedback
from workbench.core.words import agent_ended
from workbench.engine.agent_node import Agent
from workbench.pb import workbench_pb2 as pb
from workbench.tools.seams import SpawnRequest

if TYPE_CHECKING:
    from workbench.engine.agents import AgentTree


class AgentHandle:
    """What the subagent tool of one agent may do with the tree (its `ctx.agents`)."""

    def __init__(self, tree: AgentTree, agent_id: str):
        self.tree, self.agent_id = tree, agent_id

    def create(self, request: SpawnRequest) -> pb.AgentInfo:
        return self.tree.spawn(self.agent_id, request).info

    def running_children(self) -> tuple[int, int]:
        """(running, queued) children of this agent."""
        me = self.tree.nodes[self.agent_id]
        return me.running_children, len(me.queue)

    async def result(self, agent_id: str) -> pb.AgentFinished:
        """Wait for a child to end; a sync child is cancelled when the waiting call is."""
        child = self._descendant(agent_id)
        try:
            return await asyncio.shield(child.done)
        except asyncio.CancelledError:
            if child.info.mode == pb.SPAWN_MODE_SYNC:
                await self.tree.cancel(child.id, f"the call of {self.agent_id} that started it was cancelled")
            raise

    def children(self) -> list[Agent]:
        """This agent's descendants, each after its parent."""
        return self.tree.nodes[self.agent_id].descendants()

    async def cancel(self, agent_id: str) -> pb.AgentFinished:
        child = self._descendant(agent_id)
        if child.done.done() or child.ending:
            raise Feedback(
                f"subagent {agent_id} has already ended ({agent_ended(child.info.status)}); nothing to cancel"
            )
        return await self.tree.cancel(agent_id, f"cancelled by {self.agent_id}")

    def message(self, agent_id: str, text: str) -> pb.AgentInfo:
        """Put a message in another live agent's Inbox; it reads it at its next turn."""
        if agent_id == self.agent_id:
            raise Feedback("an agent cannot message itself")
        target = self.tree.nodes.get(agent_id)
        if target is None:
            raise Feedback(f"no agent {agent_id!r}; {self._ids_note()}")
        if target.done.done() or target.ending:
            raise Feedback(
                f"agent {agent_id} has already ended ({agent_ended(target.info.status)}); "
                "messages reach only queued or running agents"
            )
        me = self.tree.nodes[self.agent_id]
        target.inbox.put(
            pb.InboxItem(
                kind=pb.INBOX_KIND_MESSAGE,
                child_id=self.agent_id,
                child_name=me.info.name,
                text=text,
                recipient_id=agent_id,
            )
        )
        return target.info

    def _descendant(self, agent_id: str) -> Agent:
        agent = self.tree.nodes.get(agent_id)
        if agent is None or agent not in self.tree.nodes[self.agent_id].descendants():
            raise Feedback(f"no subagent {agent_id!r} of {self.agent_id}; {self._ids_note()}")
        return agent

    def _ids_note(self) -> str:
        ids = [a.id for a in self.children()]
        return f"your subagents: {', '.join(ids)}" if ids else "you have started no subagents"
