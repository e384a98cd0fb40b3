"""The agent tree: the root agent of a session and its subagents, their Inboxes, cancel.

A child is `sync` (the parent's tool call waits for it), `async` (it runs in the background
and its completion arrives in the parent's Inbox) or `fork` (async, starting from a copy of
the parent's conversation). Children past the running limit wait QUEUED and start as their
siblings finish. Whatever happens to a child (an answer, a model failure, a timeout, a
cancel, a crash) ends it with one AgentFinished event; an async or fork child's end is also
an InboxItem of its parent. An agent that ends first ends its children, so the tree closes
bottom up and no task outlives the run.

This module builds and starts the agents; the rules a spawn request must meet are in
`engine/spawning.py`, ending and cancelling in `engine/agent_ending.py` (`Endings`, held as `endings`),
the node in `engine/agent_node.py` and the tool side, `AgentHandle` (`ctx.agents`), in
`engine/agent_handle.py`.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.config.settings import Settings, bound
from workbench.core.activity import STARTING, activity_of
from workbench.core.feedback import Feedback
from workbench.core.safe_text import printable
from workbench.core.words import ROOT_ID
from workbench.engine.agent_ending import Endings
from workbench.engine.agent_handle import AgentHandle
from workbench.engine.agent_node import Agent
from workbench.engine.budget import Budget
from workbench.engine.inbox import Inbox
from workbench.engine.loop import AgentLoop
from workbench.engine.prompt import system_prompt
from workbench.engine.recorder import Recorder
from workbench.engine.spawning import CHILD_NOTE, FORK_NOTE, check_spawn, child_info, child_tools, fork_history
from workbench.engine.store import Store
from workbench.engine.tool_profile import narrowed
from workbench.guard.guardrail import Guard
from workbench.mcp.manager import McpManager
from workbench.model.gateway import ModelClient, ModelSpec, litellm_knows, missing_keys
from workbench.model.port import ModelFactory
from workbench.pb import workbench_pb2 as pb
from workbench.tools.registry import Toolbox, ToolContext, record_defect
from workbench.tools.seams import SpawnRequest, TerminalPort
from workbench.tools.skills import discover

if TYPE_CHECKING:
    from workbench.checkpoints.checkpointer import Checkpointer

FINAL_STATUS = {
    pb.RUN_STATUS_FINISHED: pb.AGENT_STATUS_COMPLETED,
    pb.RUN_STATUS_TERMINATED: pb.AGENT_STATUS_COMPLETED,
    pb.RUN_STATUS_FAILED: pb.AGENT_STATUS_FAILED,
    pb.RUN_STATUS_BUDGET_EXHAUSTED: pb.AGENT_STATUS_FAILED,
    pb.RUN_STATUS_CANCELLED: pb.AGENT_STATUS_CANCELLED,
    pb.RUN_STATUS_WAIT_TIMEOUT: pb.AGENT_STATUS_TIMED_OUT,
    pb.RUN_STATUS_STOPPED: pb.AGENT_STATUS_FAILED,  # it kept repeating a call; the cause says which
}


class AgentTree:
    """Every agent of one session, sharing the store, the budget and the terminal host."""

    def __init__(
        self,
        settings: Settings,
        store: Store,
        session_id: str,
        terminal: TerminalPort | None = None,
        guard: Guard | None = None,
        mcp: McpManager | None = None,
        checkpoints: Checkpointer | None = None,
        root_recorder: Recorder | None = None,
        models: ModelFactory = ModelClient,
    ):
        self.settings, self.store, self.session_id = settings, store, session_id
        self.models = models  # each agent's model from its spec: litellm's client, or a test's fake
        # the root's events, the session's own among them (the Session records through this one)
        self.root_recorder = root_recorder or Recorder(store, session_id, ROOT_ID)
        self.checkpoints = checkpoints  # shared by every agent: a child's calls are kept like the root's
        self.terminal = terminal
        self.mcp = mcp  # the session's MCP servers, whose tools agents select by `server__*`
        self.guard = guard  # the session's guard, shared by every agent (None: every call runs)
        self.budget = Budget(settings.max_tokens, settings.max_cost)
        self.session_dir: Path = settings.sessions_dir / session_id
        self.nodes: dict[str, Agent] = {}  # every agent of the session; `.info` is its live AgentInfo
        self._spawned = 0
        self._base_prompt: tuple[pb.Message | None, str] = (None, "")  # (the parent's reply it was read for, text)
        self._unsubscribe = store.subscribe(self._note_activity, session_id)
        self.endings = Endings(
            store, session_id, self.budget, terminal, self.nodes, context=self.context, on_ended=self._start_queued
        )

    def spec(self, model: str = "", parent: str = "") -> ModelSpec:
        """The model of an agent: its parent's (or the session's), with the same endpoint and key.

        A child that names a model of another provider gets that provider's own endpoint and
        key (litellm reads them from the environment), not its parent's.
        """
        inherited = parent or self.settings.model
        model = model or inherited
        same_endpoint = model.split("/")[0] == inherited.split("/")[0]
        return ModelSpec(
            model=model,
            api_base=self.settings.api_base if same_endpoint else "",
            api_key=self.settings.api_key if same_endpoint else "",
            timeout=self.settings.request_timeout,
            max_output_tokens=self.settings.max_output_tokens,
            call_deadline=self.settings.model_call_deadline,
            answer_reminder=self.settings.answer_reminder,
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
            agents=AgentHandle(self, agent_id),
        )

    def set_status(self, agent_id: str, status: pb.AgentStatus) -> None:
        """Save an agent's new status and its event in one transaction; memory follows the commit."""
        node = self.nodes[agent_id]
        info = node.info
        saved = pb.AgentInfo()
        saved.CopyFrom(info)
        saved.status = status
        if node.loop is not None:
            saved.usage.CopyFrom(node.loop.usage)  # its own calls so far: `workbench sessions ID` reads them live
        with self.store.transaction():
            self.store.save_agent(self.session_id, saved)
            node.recorder.emit(pb.AgentStatusChanged(agent_id=agent_id, status=status))
            self.store.on_commit(lambda: setattr(info, "status", status))

    # --- building and registering an agent ------------------------------------------------

    def _build(
        self,
        info: pb.AgentInfo,
        parent: Agent | None,
        messages: list[pb.Message],
        spec: ModelSpec,
        *,
        announce: bool = True,
    ) -> Agent:
        recorder = self.root_recorder if info.id == ROOT_ID else Recorder(self.store, self.session_id, info.id)
        inbox = Inbox(
            self.settings.inbox_limit,
            on_put=recorder.emit,
            on_commit=self.store.on_commit,
            hints=self.settings.recovery_hints,
        )
        agent = Agent(info, parent, recorder, inbox)
        toolbox = Toolbox(list(info.tools), self.mcp)
        agent.loop = AgentLoop(
            client=self.models(spec),
            toolbox=toolbox,
            ctx=self.context(info.id, recorder),
            recorder=recorder,
            settings=self.settings,
            budget=self.budget,
            messages=messages,
            inbox=inbox,
            on_status=lambda status: self.set_status(info.id, status),
            guard=self.guard,
            checkpoints=self.checkpoints,
        )
        if parent is not None:
            agent.loop.prompt_author = pb.AUTHOR_PARENT
        self.nodes[info.id] = agent
        if parent is not None:
            parent.children.append(agent)
        if announce:  # not for a root rebuilt from the log: it is there already
            with self.store.transaction():
                self.store.save_agent(self.session_id, info)
                recorder.emit(pb.AgentSpawned(agent=info))
        return agent

    # --- the root -------------------------------------------------------------------------

    @property
    def root(self) -> Agent | None:
        return self.nodes.get(ROOT_ID)

    def make_root(
        self,
        prompt: str,
        tools: list[str] | None = None,
        messages: list[pb.Message] | None = None,
        *,
        announce: bool = True,
    ) -> Agent:
        """The session's root agent, new (a system prompt) or rebuilt from `messages` (a resume)."""
        info = pb.AgentInfo(
            id=ROOT_ID, name=ROOT_ID, mode=pb.SPAWN_MODE_ROOT, status=pb.AGENT_STATUS_RUNNING, prompt=prompt
        )
        info.model = self.settings.model
        info.created.GetCurrentTime()
        names = list(Toolbox(tools).tools)
        skills, problems = discover(self.settings)
        if tools is None and not skills:  # no skill installed: the tool could only fail
            names.remove("skill")
        if tools is None:  # the tool_profile setting (tool_profile.py); an explicit list is kept
            names = narrowed(names, self.settings.tool_profile, litellm_knows(self.spec()))
        if self.mcp is not None and (tools is None or not announce):  # every MCP server's tools, as they
            names += [p for p in self.mcp.patterns() if p not in names]  # come and go (resumed: as configured now)
        info.tools.extend(names)
        new = not messages
        if not messages:
            messages = [pb.Message(role=pb.ROLE_SYSTEM, text=system_prompt(self.settings))]
        root = self._build(info, None, messages, self.spec(), announce=announce)
        if new:  # the person hears of each broken skill once, as the session starts; the run goes on
            for problem in problems:
                root.recorder.emit(pb.Notice(level="warning", text=f"skill skipped: {printable(str(problem))}"))
        return root

    def restore(self, agents: list[pb.AgentInfo]) -> None:
        """Continue a stored session: child ids go on from the highest one used."""
        ids = [int(a.id[1:]) for a in agents if a.id[:1] == "a" and a.id[1:].isdigit()]
        self._spawned = max(ids, default=0)

    async def run_root(self, prompt: str, tools: list[str] | None = None) -> pb.RunFinished:
        """Run the session's root agent on `prompt` (the first run builds it); its children end
        with the run. The root stays for the next prompt: the conversation goes on. Cancellation
        is re-raised."""
        agent = self.root or self.make_root(prompt, tools)
        loop = agent.loop
        assert loop is not None
        if agent.ending or agent.info.status != pb.AGENT_STATUS_RUNNING:  # a second run of the root
            agent.ending, agent.cancel_cause = False, ""
            agent.done = asyncio.get_running_loop().create_future()
            agent.children = [c for c in agent.children if not c.done.done()]
            self.set_status(agent.id, pb.AGENT_STATUS_RUNNING)
        agent.entered, agent.started, agent.ended = True, time.monotonic(), 0.0
        try:
            return await loop.run(prompt)
        finally:
            final = loop.outcome or pb.RunFinished(status=pb.RUN_STATUS_FAILED, reason="the run ended early")
            status = FINAL_STATUS.get(final.status, pb.AGENT_STATUS_FAILED)
            await self.endings.end(agent, status, final.text, final.reason, final.usage, run_status=final.status)

    # --- what the Session asks of the root (its verbs: the Session never reaches into the loop) ---

    def queue_prompt(self, text: str) -> None:
        """The person's prompt for the running root, at its next turn (AgentLoop.queue_prompt)."""
        root = self.root
        if root is not None and root.loop is not None:
            root.loop.queue_prompt(text)

    def root_outcome(self) -> pb.RunFinished | None:
        """How the root's current (or last) run ended; None while it goes, or before it ran."""
        root = self.root
        return root.loop.outcome if root is not None and root.loop is not None else None

    def drop_prompts(self) -> None:
        """The prompts queued for the root go (the person cancelled the run)."""
        root = self.root
        if root is not None and root.loop is not None:
            root.loop.drop_prompts()

    def next_prompt(self) -> str:
        """A prompt queued for the root as its run ended, taken ('' when none: the runs end)."""
        root = self.root
        return root.loop.next_prompt() if root is not None and root.loop is not None else ""

    def tell_root(self, message: pb.Message) -> bool:
        """A message joins the root's conversation (recorded); False when there is no root yet."""
        root = self.root
        if root is None or root.loop is None:
            return False
        root.loop.append(message)
        return True

    def rewind_root(self, messages: list[pb.Message]) -> None:
        """The root's conversation as a rewind put it back."""
        root = self.root
        if root is not None and root.loop is not None:
            root.loop.replace_conversation(messages)

    async def compact_root(self) -> bool:
        """Summarize the root's older turns now; False when there is no conversation yet. Raises
        NothingToCompact or ModelCallFailed (AgentLoop.compact_now)."""
        root = self.root
        if root is None or root.loop is None:
            return False
        await root.loop.compact_now()
        return True

    # --- children -------------------------------------------------------------------------

    def spawn(self, parent_id: str, request: SpawnRequest) -> Agent:
        """Create a child of `parent_id`: running now, or QUEUED past the running limit.

        A creation error is Feedback (the subagent tool's error result), and nothing starts.
        """
        parent = self.nodes[parent_id]
        check_spawn(self.settings, parent, request, len(self.nodes) - 1)
        allowed = child_tools(self.settings, parent, request)
        spec = self.spec(request.model, parent.info.model)
        if request.model and request.model != parent.info.model and (missing := missing_keys(spec)):
            raise Feedback(  # else the child fails after its retries (docs/DECISIONS.md)
                f"model {request.model!r} cannot be called from here: {' and '.join(missing)} is not set. Leave "
                f"model empty to run the subagent on your own model ({parent.info.model})"
            )
        self._spawned += 1
        info = child_info(parent, request, allowed, f"a{self._spawned}")
        if request.mode == "fork":
            assert parent.loop is not None
            messages = fork_history(parent.loop.messages)
        else:
            note = CHILD_NOTE.format(name=info.name, id=info.id, parent=parent_id)
            messages = [pb.Message(role=pb.ROLE_SYSTEM, text=self._child_base_prompt(parent) + note)]
        has_slot = parent.running_children < bound(self.settings.max_running_children)
        if has_slot:
            info.status = pb.AGENT_STATUS_RUNNING
        agent = self._build(info, parent, messages, spec)
        if request.mode == "fork":
            agent.run_prompt = FORK_NOTE.format(name=info.name, id=info.id, prompt=request.prompt)
        if request.mode != "sync":
            parent.inbox.expect(info.id)
        if has_slot:
            self._start(agent)
        else:
            parent.queue.append(agent)
        return agent

    def _child_base_prompt(self, parent: Agent) -> str:
        """The system prompt's common part for a child (instructions, skills): read once for all
        the children one reply of `parent` starts (a fan-out of 100 reads the files once)."""
        reply = parent.loop.messages[-1] if parent.loop is not None and parent.loop.messages else None
        cached_reply, text = self._base_prompt
        if reply is None or cached_reply is not reply:
            text = system_prompt(self.settings)
            self._base_prompt = (reply, text)
        return text

    def _start(self, agent: Agent) -> None:
        agent.started = time.monotonic()
        agent.activity, agent.activity_at = STARTING, agent.started
        agent.task = asyncio.create_task(self._run_child(agent), name=f"agent {agent.id}")
        if agent.parent is not None:
            agent.parent.running_children += 1

    def _start_queued(self, parent: Agent) -> None:
        while parent.queue and not parent.ending:
            if parent.running_children >= bound(self.settings.max_running_children):
                return
            agent = parent.queue.popleft()
            self.set_status(agent.id, pb.AGENT_STATUS_RUNNING)
            self._start(agent)

    async def _run_child(self, agent: Agent) -> None:
        """A child's whole life; whatever it raises is caught here, at its boundary."""
        agent.entered = True
        loop = agent.loop
        assert loop is not None
        if agent.cancel_cause:  # cancelled before its task first ran
            await self.endings.end(agent, pb.AGENT_STATUS_CANCELLED, "", agent.cancel_cause, pb.Usage())
            return
        status: pb.AgentStatus = pb.AGENT_STATUS_FAILED
        cause = ""
        timer = None
        if agent.info.timeout:
            timed_out = (pb.RUN_STATUS_WAIT_TIMEOUT, f"timed out after {agent.info.timeout:g} s")

            def expire() -> None:  # its run_finished, agent_finished and Inbox item all say timed out
                loop.cancel_as = timed_out
                if agent.task is not None:
                    agent.task.cancel()

            timer = asyncio.get_running_loop().call_later(agent.info.timeout, expire)
        try:
            outcome = await loop.run(agent.run_prompt)
            status = FINAL_STATUS.get(outcome.status, pb.AGENT_STATUS_FAILED)
            cause = outcome.reason
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
            if loop.cancel_as is not None:
                status, cause = pb.AGENT_STATUS_TIMED_OUT, loop.cancel_as[1]
            else:
                status, cause = pb.AGENT_STATUS_CANCELLED, agent.cancel_cause or "cancelled"
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as err:  # a bug (a "panic"): FAILED, with its traceback recorded as a defect
            record_defect(loop.ctx, f"subagent {agent.id}", err)
            status = pb.AGENT_STATUS_FAILED
            cause = f"the subagent crashed: {type(err).__name__}: {err}".rstrip(": ")
        finally:
            if timer is not None:
                timer.cancel()
        await self.endings.end(agent, status, loop.last_answer(), cause, loop.usage)

    async def cancel(self, agent_id: str, cause: str = "cancelled") -> pb.AgentFinished:
        """Cancel one agent and its subtree; its parent keeps running and hears of it (agent_ending.py)."""
        return await self.endings.cancel(agent_id, cause)

    async def kill_processes(self, agents: list[Agent]) -> None:
        """End now what these agents' commands started (agent_ending.py)."""
        await self.endings.kill_processes(agents)

    # --- activity, for `list` -------------------------------------------------------------

    def _note_activity(self, event: pb.Event) -> None:
        agent = self.nodes.get(event.agent_id)
        if agent is not None and (text := activity_of(event)) is not None:
            agent.activity, agent.activity_at = text, time.monotonic()

    async def close(self) -> None:
        """End the session's resources (the terminal host's tmux server)."""
        self._unsubscribe()
        if self.terminal is not None:
            await self.terminal.close()
