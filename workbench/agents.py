"""The agent tree: the root agent of a session and its subagents, their Inboxes, cancel.

(First version: the root agent; issue 5 adds sync/async/fork children.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from workbench.config import Settings
from workbench.inbox import Inbox
from workbench.loop import AgentLoop, Budget
from workbench.model import ModelClient, ModelSpec
from workbench.pb import workbench_pb2 as pb
from workbench.prompt import system_prompt
from workbench.store import Recorder, Store
from workbench.tools import ToolContext, Toolbox

ROOT_ID = "main"

FINAL_STATUS = {
    pb.RUN_STATUS_FINISHED: pb.AGENT_STATUS_COMPLETED,
    pb.RUN_STATUS_TERMINATED: pb.AGENT_STATUS_COMPLETED,
    pb.RUN_STATUS_FAILED: pb.AGENT_STATUS_FAILED,
    pb.RUN_STATUS_BUDGET_EXHAUSTED: pb.AGENT_STATUS_FAILED,
    pb.RUN_STATUS_CANCELLED: pb.AGENT_STATUS_CANCELLED,
    pb.RUN_STATUS_WAIT_TIMEOUT: pb.AGENT_STATUS_TIMED_OUT,
}


class AgentTree:
    """Every agent of one session, sharing the store, the budget and the terminal host."""

    def __init__(self, settings: Settings, store: Store, session_id: str, terminal: Any = None):
        self.settings, self.store, self.session_id = settings, store, session_id
        self.terminal = terminal
        self.budget = Budget(settings.max_tokens, settings.max_cost)
        self.session_dir: Path = settings.sessions_dir / session_id
        self.agents: dict[str, pb.AgentInfo] = {}

    def spec(self, model: str = "") -> ModelSpec:
        return ModelSpec(
            model=model or self.settings.model,
            api_base=self.settings.api_base,
            api_key=self.settings.api_key,
            timeout=self.settings.request_timeout,
        )

    def context(self, agent_id: str, recorder: Recorder) -> ToolContext:
        return ToolContext(
            workspace=self.settings.workspace,
            settings=self.settings,
            session_dir=self.session_dir,
            agent_id=agent_id,
            on_output=recorder.output,
            publish=recorder.emit,
            terminal=self.terminal,
        )

    def set_status(self, agent_id: str, status: pb.AgentStatus.ValueType) -> None:
        """Save an agent's new status and its event in one transaction."""
        info = self.agents[agent_id]
        info.status = status
        with self.store.transaction():
            self.store.save_agent(self.session_id, info)
            Recorder(self.store, self.session_id, agent_id).emit(
                "agent_status", pb.AgentStatusChanged(agent_id=agent_id, status=status)
            )

    async def run_root(self, prompt: str, tools: list[str] | None = None) -> pb.RunFinished:
        info = pb.AgentInfo(
            id=ROOT_ID, name="main", mode=pb.SPAWN_MODE_ROOT, status=pb.AGENT_STATUS_RUNNING, prompt=prompt
        )
        info.model = self.settings.model
        info.created.GetCurrentTime()
        recorder = Recorder(self.store, self.session_id, ROOT_ID)
        toolbox = Toolbox(tools)
        info.tools.extend(toolbox.tools)
        self.agents[ROOT_ID] = info
        with self.store.transaction():
            self.store.save_agent(self.session_id, info)
            recorder.emit("agent_spawned", pb.AgentSpawned(agent=info))
        loop = AgentLoop(
            client=ModelClient(self.spec()),
            toolbox=toolbox,
            ctx=self.context(ROOT_ID, recorder),
            recorder=recorder,
            settings=self.settings,
            budget=self.budget,
            messages=[pb.Message(role=pb.ROLE_SYSTEM, text=system_prompt(self.settings))],
            inbox=Inbox(self.settings.inbox_limit, on_put=lambda item: recorder.emit("inbox_item", item)),
            on_status=lambda status: self.set_status(ROOT_ID, status),
        )
        try:
            outcome = await loop.run(prompt)
        finally:
            final = loop.outcome or pb.RunFinished(status=pb.RUN_STATUS_FAILED, reason="the run ended early")
            info.status = FINAL_STATUS.get(final.status, pb.AGENT_STATUS_FAILED)
            with self.store.transaction():
                self.store.save_agent(self.session_id, info)
                self.store.set_session_status(self.session_id, final.status)
                recorder.emit(
                    "agent_finished",
                    pb.AgentFinished(
                        agent_id=ROOT_ID, status=info.status, result=final.text, cause=final.reason, usage=final.usage
                    ),
                )
        return outcome

    async def close(self) -> None:
        """End the session's resources (the terminal host's tmux server)."""
        if self.terminal is not None:
            await self.terminal.close()
