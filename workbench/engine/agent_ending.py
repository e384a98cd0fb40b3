"""How agents of the tree end (`Endings`, held by `AgentTree` as `tree.endings`): an agent's
children end first, then the agent with one AgentFinished, and an async or fork child's end is
delivered to its parent's Inbox; a cancel asks a subtree to stop, then kills what its commands
started.

`AgentTree` (`engine/agents.py`) builds and starts the agents; it gives `Endings` the session's
store, budget, terminal and nodes, the tool context of an agent (for a defect), and what to do
when an agent has ended (`on_ended(parent)`: start the parent's queued children as a slot frees).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from workbench.core.words import agent_ended
from workbench.engine.agent_node import Agent
from workbench.engine.budget import Budget
from workbench.engine.recorder import Recorder
from workbench.engine.store import Store
from workbench.pb import workbench_pb2 as pb
from workbench.tools.registry import ToolContext, record_defect
from workbench.tools.seams import TerminalPort

STOP_WAIT = 15.0  # seconds to wait for a cancelled agent (and its subtree) to end
KILL_AFTER = 1.0  # seconds a cancelled subtree's tools get to stop their commands before its processes are killed


class Endings:
    """Ending and cancelling the agents of one session."""

    def __init__(
        self,
        store: Store,
        session_id: str,
        budget: Budget,
        terminal: TerminalPort | None,
        nodes: dict[str, Agent],
        *,
        context: Callable[[str, Recorder], ToolContext],
        on_ended: Callable[[Agent], None],
    ):
        self.store, self.session_id, self.budget, self.terminal, self.nodes = store, session_id, budget, terminal, nodes
        self.context = context  # an agent's tool context (a defect of an agent that has no loop)
        self.on_ended = on_ended  # called with the parent of each agent that ended: a running slot may be free

    async def end(
        self,
        agent: Agent,
        status: pb.AgentStatus,
        result: str,
        cause: str,
        usage: pb.Usage,
        run_status: pb.RunStatus | None = None,
    ) -> None:
        """End an agent: its children first, then one AgentFinished (and its parent's InboxItem)."""
        agent.ending = True
        if status == pb.AGENT_STATUS_COMPLETED:
            cause = ""
        elif not cause and not result:
            cause = f"it ended {agent_ended(status)} without a result or a cause"
        try:
            try:
                await self._stop_children(agent, f"its parent {agent.id} ended ({agent_ended(status)})")
            finally:  # also when cancelled again while its children stop
                if status != pb.AGENT_STATUS_COMPLETED:
                    await self._stop_commands(agent)
        finally:
            agent.ended = time.monotonic()
            finished = pb.AgentFinished(agent_id=agent.id, status=status, result=result, cause=cause, usage=usage)
            parent = agent.parent
            saved = pb.AgentInfo()
            saved.CopyFrom(agent.info)
            saved.status = status
            saved.usage.CopyFrom(usage)
            with self.store.transaction():
                self.store.save_agent(self.session_id, saved)
                if run_status is not None:
                    self.store.set_session_status(self.session_id, run_status)
                    self.store.set_session_usage(self.session_id, self.budget.used)
                agent.recorder.emit(finished)
                self.store.on_commit(lambda: setattr(agent.info, "status", status))
                if parent is not None and agent.info.mode != pb.SPAWN_MODE_SYNC and not parent.ending:
                    parent.inbox.put(
                        pb.InboxItem(
                            kind=pb.INBOX_KIND_COMPLETION,
                            child_id=agent.id,
                            child_name=agent.info.name,
                            status=status,
                            result=result,
                            cause=cause,
                            recipient_id=parent.id,
                        )
                    )
            if not agent.done.done():
                agent.done.set_result(finished)
                if agent.task is not None and parent is not None:
                    parent.running_children -= 1
            if parent is not None:
                self.on_ended(parent)

    async def _stop_children(self, agent: Agent, cause: str) -> None:
        for child in list(agent.queue):  # the queued first, so none starts as others stop
            agent.queue.remove(child)
            child.cancel_cause = cause
            await self.end(child, pb.AGENT_STATUS_CANCELLED, "", cause, pb.Usage())
        live = [c for c in agent.children if not c.done.done()]
        for child in live:
            self._request_cancel(child, cause)
        deadline = asyncio.get_running_loop().time() + STOP_WAIT
        cancelled = False
        while (waiting := [c.done for c in live if not c.done.done()]) and (
            left := deadline - asyncio.get_running_loop().time()
        ) > 0:
            try:
                await asyncio.wait(waiting, timeout=left)
            except asyncio.CancelledError:  # cancelled again while they stop: they still end first
                cancelled = True
        if cancelled:
            raise asyncio.CancelledError()

    def _request_cancel(self, agent: Agent, cause: str) -> None:
        if agent.ending or agent.done.done():
            return
        agent.cancel_cause = agent.cancel_cause or cause
        if agent.task is not None and agent.entered:
            agent.task.cancel()

    async def _stop_commands(self, agent: Agent) -> None:
        """Stop what the agent left running in the terminal host (bash, tmux windows)."""
        if self.terminal is None:
            return
        try:
            await self.terminal.stop_agent(agent.id)
        except Exception as err:
            record_defect(agent.loop.ctx if agent.loop else self.context(agent.id, agent.recorder), "stop_agent", err)

    async def kill_processes(self, agents: list[Agent]) -> None:
        """End now what these agents' commands started (SIGKILL through their cgroups): a cancel whose
        agents are still stopping after KILL_AFTER (a command that ignores Ctrl-C) keeps its 2 s
        promise this way; an agent that ends in time kills its cgroup in `_stop_commands`."""
        if self.terminal is None:
            return
        try:
            await self.terminal.kill_agents([a.id for a in agents])
        except Exception as err:
            record_defect(self.context(agents[0].id, agents[0].recorder), "kill_agents", err)

    async def cancel(self, agent_id: str, cause: str = "cancelled") -> pb.AgentFinished:
        """Cancel one agent and its subtree; its parent keeps running and hears of it."""
        agent = self.nodes[agent_id]
        if agent.parent is not None and agent in agent.parent.queue:
            agent.parent.queue.remove(agent)
            agent.cancel_cause = cause
            await self.end(agent, pb.AGENT_STATUS_CANCELLED, "", cause, pb.Usage())
        elif agent.task is not None:
            self._request_cancel(agent, cause)
            await asyncio.wait([agent.done], timeout=KILL_AFTER)  # its tools stop their commands (Ctrl-C)
            if not agent.done.done():  # still stopping: what its commands started ends now
                await self.kill_processes([agent, *agent.descendants()])
        elif agent.parent is None and not agent.done.done():
            raise ValueError("the root agent is cancelled by cancelling its run's task")
        await asyncio.wait([agent.done], timeout=STOP_WAIT)
        if agent.done.done():
            return agent.done.result()
        return pb.AgentFinished(agent_id=agent_id, status=agent.info.status, cause="still stopping")
