"""The agent tree: the root agent of a session and its subagents, their Inboxes, cancel.

A child is `sync` (the parent's tool call waits for it), `async` (it runs in the background
and its completion arrives in the parent's Inbox) or `fork` (async, starting from a copy of
the parent's conversation). Children past the running limit wait QUEUED and start as their
siblings finish. Whatever happens to a child (an answer, a model failure, a timeout, a
cancel, a crash) ends it with one AgentFinished event; an async or fork child's end is also
an InboxItem of its parent. An agent that ends first ends its children, so the tree closes
bottom up and no task outlives the run. The tool side is `AgentHandle` (`ctx.agents`).
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.config.settings import Settings, bound
from workbench.core.feedback import Feedback
from workbench.core.safe_text import printable
from workbench.core.words import agent_ended, agent_status
from workbench.engine.inbox import Inbox
from workbench.engine.loop import AgentLoop, Budget
from workbench.engine.prompt import system_prompt
from workbench.engine.store import Recorder, Store
from workbench.guard.guardrail import Guard
from workbench.mcp.manager import McpManager
from workbench.model.gateway import ModelClient, ModelSpec, missing_keys
from workbench.pb import workbench_pb2 as pb
from workbench.tools.registry import Toolbox, ToolContext, covered, record_defect
from workbench.tools.seams import SpawnRequest, TerminalPort
from workbench.tools.skills import discover

if TYPE_CHECKING:
    from workbench.checkpoints.checkpointer import Checkpointer

ROOT_ID = "main"
STOP_WAIT = 15.0  # seconds to wait for a cancelled agent (and its subtree) to end
KILL_AFTER = 1.0  # seconds a cancelled subtree's tools get to stop their commands before its processes are killed

FINAL_STATUS = {
    pb.RUN_STATUS_FINISHED: pb.AGENT_STATUS_COMPLETED,
    pb.RUN_STATUS_TERMINATED: pb.AGENT_STATUS_COMPLETED,
    pb.RUN_STATUS_FAILED: pb.AGENT_STATUS_FAILED,
    pb.RUN_STATUS_BUDGET_EXHAUSTED: pb.AGENT_STATUS_FAILED,
    pb.RUN_STATUS_CANCELLED: pb.AGENT_STATUS_CANCELLED,
    pb.RUN_STATUS_WAIT_TIMEOUT: pb.AGENT_STATUS_TIMED_OUT,
    pb.RUN_STATUS_STOPPED: pb.AGENT_STATUS_FAILED,  # it kept repeating a call; the cause says which
}
MODES = {"sync": pb.SPAWN_MODE_SYNC, "async": pb.SPAWN_MODE_ASYNC, "fork": pb.SPAWN_MODE_FORK}

CHILD_NOTE = """

You are a subagent ({name}, id {id}) started by agent {parent}. Work on the task you are
given; your final answer (a reply without tool calls) is what {parent} receives, so make it
complete and self-contained."""
FORK_NOTE = (
    "[You are a fork of the agent whose conversation is above (subagent {name}, id {id}). "
    "Your final answer goes back to that agent.]\n\n{prompt}"
)


class Agent:
    """One agent of the tree at runtime: its info, loop, Inbox, task, children and queue."""

    def __init__(self, info: pb.AgentInfo, parent: Agent | None, recorder: Recorder, inbox: Inbox):
        self.info, self.parent, self.recorder, self.inbox = info, parent, recorder, inbox
        self.loop: AgentLoop | None = None
        self.run_prompt = info.prompt
        self.children: list[Agent] = []
        self.queue: deque[Agent] = deque()  # children waiting for a running slot
        self.running_children = 0  # children started and not ended (a count: 100 spawns stay linear)
        self.task: asyncio.Task[None] | None = None
        self.done: asyncio.Future[pb.AgentFinished] = asyncio.get_running_loop().create_future()
        self.entered = False  # its task began running (before that, cancel is a flag)
        self.ending = False
        self.cancel_cause = ""
        self.started = 0.0
        self.ended = 0.0
        self.activity = "queued"
        self.activity_at = time.monotonic()

    @property
    def id(self) -> str:
        return self.info.id

    @property
    def running(self) -> bool:
        return self.task is not None and not self.done.done()

    @property
    def elapsed(self) -> float:
        """Seconds it has run (0 while queued)."""
        if not self.started:
            return 0.0
        return (self.ended or time.monotonic()) - self.started

    def descendants(self) -> list[Agent]:
        found = []
        for child in self.children:
            found.append(child)
            found.extend(child.descendants())
        return found


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
    ):
        self.settings, self.store, self.session_id = settings, store, session_id
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
            Recorder(self.store, self.session_id, agent_id).emit(
                pb.AgentStatusChanged(agent_id=agent_id, status=status)
            )
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
        recorder = Recorder(self.store, self.session_id, info.id)
        inbox = Inbox(
            self.settings.inbox_limit,
            on_put=recorder.emit,
            on_commit=self.store.on_commit,
            hints=self.settings.recovery_hints,
        )
        agent = Agent(info, parent, recorder, inbox)
        toolbox = Toolbox(list(info.tools), self.mcp)
        agent.loop = AgentLoop(
            client=ModelClient(spec),
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
            id=ROOT_ID, name="main", mode=pb.SPAWN_MODE_ROOT, status=pb.AGENT_STATUS_RUNNING, prompt=prompt
        )
        info.model = self.settings.model
        info.created.GetCurrentTime()
        names = list(Toolbox(tools).tools)
        skills, problems = discover(self.settings)
        if tools is None and not skills:  # no skill installed: the tool could only fail
            names.remove("skill")
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
            await self._end(agent, status, final.text, final.reason, final.usage, run_status=final.status)

    # --- children -------------------------------------------------------------------------

    def spawn(self, parent_id: str, request: SpawnRequest) -> Agent:
        """Create a child of `parent_id`: running now, or QUEUED past the running limit.

        A creation error is Feedback (the subagent tool's error result), and nothing starts.
        """
        parent = self.nodes[parent_id]
        self._check_limits(parent, request)
        allowed = self._child_tools(parent, request)
        spec = self.spec(request.model, parent.info.model)
        if request.model and request.model != parent.info.model and (missing := missing_keys(spec)):
            raise Feedback(  # else the child fails after its retries (docs/DECISIONS.md)
                f"model {request.model!r} cannot be called from here: {' and '.join(missing)} is not set. Leave "
                f"model empty to run the subagent on your own model ({parent.info.model})"
            )
        info = self._child_info(parent, request, allowed)
        if request.mode == "fork":
            assert parent.loop is not None
            messages = _fork_history(parent.loop.messages)
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

    def _check_limits(self, parent: Agent, request: SpawnRequest) -> None:
        """Feedback when `parent` may not start this child: a bad mode, prompt or timeout, or a limit."""
        s = self.settings
        if parent.ending:
            raise Feedback(f"agent {parent.id} is ending; it cannot start subagents")
        if request.mode not in MODES:
            raise Feedback(f"mode must be one of {', '.join(MODES)}, got {request.mode!r}")
        if not request.prompt.strip():
            raise Feedback("prompt is required to create a subagent: the task it should do, self-contained")
        if request.timeout < 0:
            raise Feedback(f"timeout is in seconds and must be 0 (none) or more, got {request.timeout:g}")
        if parent.info.depth + 1 > bound(s.max_depth):
            raise Feedback(
                f"depth limit reached: agent {parent.id} is at depth {parent.info.depth} and subagents "
                f"nest at most {s.max_depth} deep (setting max_depth); do this task yourself"
            )
        total = len(self.nodes) - 1
        if total >= bound(s.max_total_children):
            raise Feedback(
                f"total subagent limit reached: this run has started {total} of at most "
                f"{s.max_total_children} subagents (setting max_total_children); do the rest yourself "
                "or wait for running subagents and reuse their results"
            )

    def _child_tools(self, parent: Agent, request: SpawnRequest) -> list[str]:
        """The child's tools: those asked for (each one of the parent's), or all of the parent's."""
        allowed = list(parent.info.tools)
        if request.tools:  # None or []: all of the parent's (a small model sends [] for "the default")
            unknown = [t for t in request.tools if not covered(t, allowed)]
            if unknown:
                raise Feedback(
                    f"unknown tool(s) in tools: {', '.join(unknown)}; a subagent may use these tools of "
                    f"its parent: {', '.join(allowed) or '(none)'}"
                )
            allowed = list(dict.fromkeys(request.tools))
        if parent.info.depth + 1 >= bound(self.settings.max_depth) and "subagent" in allowed:
            allowed.remove("subagent")  # it could only fail at the depth limit
        return allowed

    def _child_info(self, parent: Agent, request: SpawnRequest, allowed: list[str]) -> pb.AgentInfo:
        """The new child's AgentInfo (QUEUED), with the next child id."""
        self._spawned += 1
        child_id = f"a{self._spawned}"
        info = pb.AgentInfo(
            id=child_id,
            parent_id=parent.id,
            name=request.name.strip() or _name_from(request.prompt),
            mode=MODES[request.mode],
            status=pb.AGENT_STATUS_QUEUED,
            model=request.model or parent.info.model,
            prompt=request.prompt,
            depth=parent.info.depth + 1,
            tools=allowed,
            timeout=request.timeout,
        )
        info.created.FromNanoseconds(time.time_ns())  # not GetCurrentTime(): a datetime round trip
        return info

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
        agent.activity, agent.activity_at = "starting", agent.started
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
            await self._end(agent, pb.AGENT_STATUS_CANCELLED, "", agent.cancel_cause, pb.Usage())
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
        await self._end(agent, status, _last_answer(loop.messages), cause, loop.usage)

    # --- ending ---------------------------------------------------------------------------

    async def _end(
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
                self._start_queued(parent)

    async def _stop_children(self, agent: Agent, cause: str) -> None:
        for child in list(agent.queue):  # the queued first, so none starts as others stop
            agent.queue.remove(child)
            child.cancel_cause = cause
            await self._end(child, pb.AGENT_STATUS_CANCELLED, "", cause, pb.Usage())
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
            await self._end(agent, pb.AGENT_STATUS_CANCELLED, "", cause, pb.Usage())
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

    # --- activity, for `list` -------------------------------------------------------------

    def _note_activity(self, event: pb.Event) -> None:
        agent = self.nodes.get(event.agent_id)
        if agent is None:
            return
        kind = event.WhichOneof("kind")
        if kind == "tool_call_started":
            text = f"calling {event.tool_call_started.call.name}"
        elif kind == "tool_call_finished":
            result = event.tool_call_finished.result
            text = f"{result.name} {'failed' if result.is_error else 'done'}"
        elif kind == "text_delta":
            text = "writing"
        elif kind == "retry_wait":
            text = f"retrying the model call ({event.retry_wait.reason})"
        elif kind == "agent_status":
            text = agent_status(event.agent_status.status)
            if event.agent_status.status == pb.AGENT_STATUS_WAITING:
                text = "waiting for its subagents"
            elif event.agent_status.status == pb.AGENT_STATUS_RUNNING:
                text = "running"
        elif kind == "inbox_item":
            text = "got an Inbox item"
        elif kind == "agent_finished":
            text = agent_ended(event.agent_finished.status)
        else:
            return
        agent.activity, agent.activity_at = text, time.monotonic()

    async def close(self) -> None:
        """End the session's resources (the terminal host's tmux server)."""
        self._unsubscribe()
        if self.terminal is not None:
            await self.terminal.close()


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


def _name_from(prompt: str) -> str:
    words = prompt.split()[:4]
    name = " ".join(words)
    return name[:32] or "subagent"


def _last_answer(messages: list[pb.Message]) -> str:
    return next((m.text for m in reversed(messages) if m.role == pb.ROLE_ASSISTANT and m.text), "")


def _fork_history(messages: list[pb.Message]) -> list[pb.Message]:
    """A copy of a conversation that stays valid: the turn still waiting for results is left out."""
    copied = [pb.Message() for _ in messages]
    for new, old in zip(copied, messages, strict=True):
        new.CopyFrom(old)
    answered = {m.tool_result.call_id for m in copied if m.role == pb.ROLE_TOOL}
    for i in range(len(copied) - 1, -1, -1):
        m = copied[i]
        if m.role == pb.ROLE_ASSISTANT and m.tool_calls:
            if any(c.id not in answered for c in m.tool_calls):
                return copied[:i]
            break
    return copied
