"""The Session: the one engine API that the CLI and the TUI drive.

A Session owns one session's store, terminal host, agent tree, settings and budget. What
goes in and comes out is proto messages and committed events, never live engine objects, so
a later client/server split can put it behind a socket unchanged.

An interactive session is many runs of one root agent: `send` starts a run when idle and
queues the prompt for the root's next turn while a run goes. `cancel()` ends the current run
(the session stays usable); `cancel(child_id)` ends one subtree. A stored session is rebuilt
from its event log (`open(resume=ID)`); whatever was running when its process died is marked
INTERRUPTED and every unanswered tool call gets an "interrupted" result.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncGenerator, Callable, Iterator

from workbench.config.secrets import secrets_of
from workbench.config.settings import ConfigError, Settings
from workbench.core.words import ROOT_ID
from workbench.engine.agent_ending import KILL_AFTER
from workbench.engine.agents import AgentTree
from workbench.engine.compaction import NothingToCompact
from workbench.engine.recorder import Recorder
from workbench.engine.steering import NotSteerable, steer
from workbench.engine.store import Store
from workbench.guard import guardrail
from workbench.guard.guardrail import Guard
from workbench.mcp.manager import McpManager
from workbench.model.gateway import ModelClient, ModelSpec, context_window
from workbench.model.port import ModelFactory
from workbench.model.retry import ModelCallFailed
from workbench.pb import workbench_pb2 as pb
from workbench.session import rewind as rewinding
from workbench.session.catalog import open_store, session_to_open
from workbench.session.checkpointing import keep_checkpoint, new_checkpointer, resume_checkpoints, tell_put_back
from workbench.session.errors import NotWaiting, SessionError, event_log_failure
from workbench.session.event_stream import STREAM_LIMIT, bounded_stream
from workbench.session.lock import LockHeld, SessionLock, is_locked
from workbench.session.rebuild import mark_interrupted, rebuild_tree
from workbench.session.rewind import RewindPlan
from workbench.terminal.git_report import describe, git_changes
from workbench.terminal.host import TerminalHost
from workbench.terminal.leftovers import reap_orphans
from workbench.terminal.protected import dot_git
from workbench.terminal.sandbox import describe as describe_sandbox

log = logging.getLogger("workbench")


class Session:
    """One session: new, or resumed from its event log. Open it with `await Session.open(...)`."""

    def __init__(
        self,
        settings: Settings,
        store: Store,
        session_id: str,
        lock: SessionLock,
        guard: Guard | None = None,
        models: ModelFactory = ModelClient,
    ):
        self.settings, self.store, self.id, self._lock = settings, store, session_id, lock
        self.guard = guard or Guard(settings)  # judges every tool call of every agent (guard.py)
        self.recorder = Recorder(store, session_id, ROOT_ID)  # the root's events: the session's own are its
        self.terminal = TerminalHost(
            f"workbench-{session_id}",
            self.recorder.emit,
            env_passthrough=tuple(settings.shell_env_passthrough),
            data_dir=settings.data_dir,
            session_id=session_id,
        )
        # the sandbox's policy before anything starts the server (a run starts it ahead of the first
        # bash call): else the built-in defaults would hold, the process's folder for the workspace
        self.terminal.sandbox.configure(settings, settings.workspace)
        self._opened_at = time.time()  # git control files made in the workspace after it are reported
        self._own_git = dot_git(settings.workspace)
        # the MCP servers start as the session opens, beside it: the first request never waits for them
        self.mcp = McpManager(settings, settings.sessions_dir / session_id, session_id)
        self.guard.mcp = self.mcp
        self.checkpoints = new_checkpointer(settings, session_id)  # None when switched off
        self.tree = AgentTree(
            settings,
            store,
            session_id,
            terminal=self.terminal,
            guard=self.guard,
            mcp=self.mcp,
            checkpoints=self.checkpoints,
            root_recorder=self.recorder,
            models=models,
        )
        self.put_back_to = 0  # a code-only rewind's turn, told to the model once at its next prompt
        self.failure: BaseException | None = None  # the event log could not be written: the run ended
        self.last: pb.RunFinished | None = None
        self._run_task: asyncio.Task[pb.RunFinished] | None = None
        self._warming: asyncio.Task[None] | None = None
        self._titled = False
        self._turns: set[asyncio.Task[None]] = set()  # prompts' checkpoints being taken
        self._closed: pb.SessionInfo | None = None
        store.on_failure = self._store_failed
        store.secrets = [s.encode() for s in secrets_of(settings)]

    # --- opening and closing --------------------------------------------------------------

    @classmethod
    async def open(
        cls,
        settings: Settings,
        resume: str | None = None,
        *,
        interactive: bool = False,
        answerable: bool | None = None,
        models: ModelFactory = ModelClient,
    ) -> Session:
        """A new session (`resume=None`) or a stored one rebuilt from its event log.

        `interactive`: the TUI (the approval mode's default is `ask`, and a person answers
        reviews); `answerable`: a person answers reviews (a headless run on a terminal); without
        one, a review is a denial; `models`: how each agent's model is made (litellm's client,
        `model.port.ModelFactory`). Call it on the event loop that will drive
        the session.
        """
        settings.workspace = settings.workspace.resolve()
        try:
            guard = Guard(settings, interactive=interactive, answerable=answerable)
        except (ConfigError, ValueError) as err:
            raise SessionError(str(err)) from err
        store = open_store(settings)
        try:
            # what a killed workbench left: its tmux servers, commands and folders end now
            for orphan in await asyncio.to_thread(reap_orphans, settings.data_dir):
                if store.sessions(orphan) and not is_locked(settings.sessions_dir / orphan):
                    mark_interrupted(store, orphan)
            session_id = session_to_open(settings, store, resume)
            lock = SessionLock(settings.sessions_dir / session_id)
            try:
                lock.acquire()
            except LockHeld as err:
                raise SessionError(
                    f"session {session_id} is open in another workbench process (pid {err.pid}); close it there first"
                ) from err
            except OSError as err:
                raise SessionError(f"cannot lock session {session_id} in {settings.sessions_dir}: {err}") from err
        except BaseException:
            store.close()
            raise
        session = cls(settings, store, session_id, lock, guard, models)
        if resume is not None:
            session._rebuild()
        session.mcp.start_soon()
        if session.checkpoints is not None:
            session.checkpoints.start()  # the first look at the tree, in the background
        return session

    def _rebuild(self) -> None:
        """Continue a stored session: its tree as it stood (rebuild.py), its prompts' numbering."""
        events = list(self.store.events(self.id))
        self._titled = bool(self.info.title)
        if rebuild_tree(self.tree, self.store, self.id, events):
            resume_checkpoints(self, events)

    async def close(self) -> None:
        """Cancel a run that still goes, end the session's tmux server, release the session."""
        try:
            if self.busy:
                await self.cancel()
            if self._warming is not None:
                self._warming.cancel()
                await asyncio.gather(self._warming, return_exceptions=True)
            try:
                await self.tree.close()
            finally:
                await self.mcp.close()
            await self._report_git_changes()
        finally:
            if self.checkpoints is not None:
                self.checkpoints.close()
            try:
                self._closed = self.info
                self.store.close()
            finally:
                self._lock.release()

    async def _report_git_changes(self) -> None:
        """Tell the person of git control files that appeared in the workspace during the session
        (a `git init`, a nested repository, a hook): their own git would read or run them."""
        if not self.terminal.sandbox.active or not self.terminal.record.dir:  # no sandbox ever ran
            return
        workspace = self.settings.workspace
        found = await asyncio.to_thread(git_changes, workspace, self._opened_at, self._own_git)
        if found:
            text = (
                f"git control files appeared or changed in the workspace during this session: "
                f"{describe(found, workspace)}. "
                "Look at them before you run git there: a hook or a setting such as core.fsmonitor runs "
                "on your machine, outside the sandbox"
            )
            self.recorder.emit(pb.Notice(level="warning", text=text))

    # --- what a client reads: nothing here changes the session ----------------------------

    @property
    def info(self) -> pb.SessionInfo:
        """The session as stored now (as it was at `close`, after it)."""
        if self._closed is None:
            return self.store.sessions(self.id)[0]
        return self._closed

    @property
    def sandbox(self) -> str:
        """The sandbox in force, in words: `workspace-write, network off`, or `off`."""
        return describe_sandbox(self.settings)

    @property
    def mcp_servers(self) -> str:
        """The enabled MCP servers in words, those without their sandbox marked: `probe, docker (sandbox off)`."""
        return self.mcp.summary()

    async def context_window(self) -> int:
        """The model's input window in tokens (0: unknown), looked up in a thread (it needs litellm)."""
        return await asyncio.to_thread(context_window, ModelSpec(self.settings.model).wire_model)

    @property
    def busy(self) -> bool:
        """A run of the root agent is going."""
        return self._run_task is not None and not self._run_task.done()

    def events(self, after: int = 0) -> Iterator[pb.Event]:
        """The committed events with seq > `after`, in order."""
        self.store.flush()
        return self.store.events(self.id, after=after)

    def agents(self) -> list[pb.AgentInfo]:
        """Every agent of the session as committed, parents before their children."""
        return self.store.agents(self.id)

    def subscribe(self, fn: Callable[[pb.Event], None], after: int = 0) -> Callable[[], None]:
        """`fn(event)` for every committed event with seq > `after`: stored ones, then live ones.

        No gap and no duplicate. `fn` runs on the event loop right after COMMIT: keep it cheap.
        Returns the function that ends the subscription.
        """
        return self.store.subscribe(fn, self.id, after=after)

    def stream(self, after: int = 0, limit: int = STREAM_LIMIT) -> AsyncGenerator[pb.Event, None]:
        """The committed events with seq > `after`, then live ones, with at most `limit` held in memory.

        A reader that falls further behind is re-synced from the store from its last seq:
        memory stays bounded and nothing is lost or repeated.
        """
        return bounded_stream(self.store, self.id, after, limit)

    # --- what a client does ---------------------------------------------------------------

    def send(self, prompt: str, agent_id: str | None = None) -> None:
        """Start a run with `prompt` when idle; while a run goes, queue it for the root's next turn.

        `agent_id` names another agent to steer: the prompt reaches that running, waiting or
        queued agent at its next turn as the person's words, and nothing is cancelled
        (engine/steering.py). A finished agent raises SessionError saying so.
        """
        if not prompt.strip():
            raise SessionError("the prompt is empty: say what the agent should do")
        if agent_id not in (None, ROOT_ID):
            try:
                steer(self.tree, agent_id, prompt)
            except NotSteerable as err:
                raise SessionError(str(err)) from err
            return
        if not self._titled:
            self.store.set_session_title(self.id, prompt)
            self._titled = True
        tell_put_back(self)
        turn_due = False  # the prompt's checkpoint, taken before its run starts (ms once the first scan is done)
        if self.checkpoints is not None:
            self.checkpoints.turn += 1
            # while the first scan still runs (a fresh session's first prompt) the run does not wait
            # for it: the turn's first checkpoint before a call is its rewind point (history.py)
            turn_due = self.checkpoints.ready
            if self.busy:  # a queued prompt: its checkpoint is taken now, beside the running turn
                task = asyncio.create_task(keep_checkpoint(self, pb.CHECKPOINT_REASON_TURN), name="turn checkpoint")
                self._turns.add(task)
                task.add_done_callback(self._turns.discard)
        if self.busy and self.tree.root is not None:
            with self.store.transaction():
                self.recorder.emit(pb.PromptQueued(text=prompt))
                self.store.on_commit(lambda: self.tree.queue_prompt(prompt))
            return
        self.failure = None
        self.mcp.start_after_request(lambda fn: self.store.subscribe(fn, self.id))
        if self._warming is None:
            self._warming = asyncio.create_task(self._warm_terminal(), name=f"session {self.id} tmux start")
        self._run_task = asyncio.create_task(self._run(prompt, turn_due), name=f"session {self.id} run")

    async def _warm_terminal(self) -> None:
        """Start the session's tmux server (in its sandbox) while the first model call is made
        (and, in a fresh process, while litellm still imports), not during the first bash call.
        A failure here is left to that call, which starts the server itself and says why."""
        try:
            await self.terminal.ensure_started()
        except Exception as err:
            log.debug("starting the terminal ahead of the first bash call: %s", err)

    async def _run(self, prompt: str, turn_due: bool = False) -> pb.RunFinished:
        """Runs of the root until no prompt is left; then the tree is kept as the run left it."""
        try:
            if turn_due:
                await keep_checkpoint(self, pb.CHECKPOINT_REASON_TURN)
            return await self._runs(prompt)
        finally:
            await keep_checkpoint(self, pb.CHECKPOINT_REASON_RUN_END)

    async def _runs(self, prompt: str) -> pb.RunFinished:
        """Runs of the root until no prompt is left; a cancel ends it CANCELLED (not raised)."""
        while True:
            try:
                outcome = await self.tree.run_root(prompt)
            except asyncio.CancelledError:
                outcome = self.tree.root_outcome() or pb.RunFinished(status=pb.RUN_STATUS_CANCELLED, reason="cancelled")
                if self.failure is not None:
                    outcome = pb.RunFinished(status=pb.RUN_STATUS_FAILED, reason=self.failure_text())
                self.tree.drop_prompts()  # the person cancelled: what they queued goes too
                self.last = outcome
                return outcome
            except Exception as err:  # the event log failed (full disk) or a bug: the run ends FAILED
                self.failure = self.failure or err
                log.exception("the run ended by an error")
                self.last = pb.RunFinished(status=pb.RUN_STATUS_FAILED, reason=self.failure_text())
                return self.last
            self.last = outcome
            prompt = self.tree.next_prompt()  # a prompt queued as the run ended starts the next run
            if not prompt:
                return outcome

    async def cancel(self, agent_id: str | None = None) -> None:
        """Cancel the current run (None or the root's id) or one subagent's subtree."""
        if agent_id in (None, ROOT_ID):
            task = self._run_task
            if task is None or task.done():
                return
            task.cancel()
            await asyncio.wait([task], timeout=KILL_AFTER)  # the tools stop their commands (Ctrl-C)
            if not task.done():  # still stopping: what every agent's commands started ends now
                await self.tree.kill_processes(list(self.tree.nodes.values()))
            await asyncio.wait([task])
            return
        if agent_id not in self.tree.nodes:
            raise SessionError(f"no agent {agent_id!r} in this session")
        node = self.tree.nodes[agent_id]
        if node.done.done() or node.ending:
            return
        await self.tree.cancel(agent_id, "cancelled by the person")

    async def compact(self) -> None:
        """Summarize the root's older turns now, between runs (a `compaction` event says how it went)."""
        if self.busy:
            raise SessionError("a run is going; compact when it has ended (or cancel it first)")
        try:
            compacted = await self.tree.compact_root()
        except NothingToCompact as err:
            raise SessionError(f"nothing to compact: {err}") from err
        except ModelCallFailed as err:
            raise SessionError(f"compaction failed: {err.reason}") from err
        if not compacted:
            raise SessionError("nothing to compact yet: the session has no conversation")

    async def wait(self) -> pb.RunFinished:
        """The current run's end (the last run's, when idle)."""
        task = self._run_task
        if task is not None:
            try:
                return await asyncio.shield(task)
            except asyncio.CancelledError:
                if not task.cancelled() or self.failure is None:
                    raise  # this wait was cancelled, or the person cancelled the run
                # the event log failed: _store_failed cancelled the run, which may have ended by then
                # with that cancel still pending (no await left to take it); the run failed
                self.last = pb.RunFinished(status=pb.RUN_STATUS_FAILED, reason=self.failure_text())
                return self.last
        if self.last is None:
            raise SessionError("nothing has run in this session yet")
        return self.last

    # --- checkpoints: undo and rewind (rewind.py) ------------------------------------------

    async def plan_rewind(
        self, to_turn: int | None = None, *, code: bool = True, conversation: bool = False
    ) -> RewindPlan:
        """What putting the files (`code`), the conversation, or both back to before the person's
        prompt `to_turn` would change; `to_turn=None`: undo the last turn's changes (or the last
        rewind). Nothing changes yet (the tree as it is becomes a checkpoint)."""
        try:
            return await rewinding.plan(self, to_turn, code=code, conversation=conversation)
        except rewinding.RewindRefused as err:
            raise SessionError(str(err)) from err

    async def rewind(self, plan: RewindPlan, *, overwrite_outside: bool = False) -> pb.Rewind:
        """Make a planned rewind. Files changed outside Workbench since its last checkpoint
        (`plan.outside`) are kept as they are unless `overwrite_outside`."""
        try:
            return await rewinding.apply(self, plan, overwrite_outside=overwrite_outside)
        except rewinding.RewindRefused as err:
            raise SessionError(str(err)) from err

    async def restore_file(self, path: str) -> pb.Rewind:
        """Put one file (relative to the workspace) back as it was before the last turn that
        changed it (the TUI's changed-files screen); a `rewind` event records it."""
        try:
            return await rewinding.restore_one(self, path)
        except rewinding.RewindRefused as err:
            raise SessionError(str(err)) from err

    async def turns(self) -> list[rewinding.TurnSummary]:
        """The rewind points: each prompt, the checkpoints of its calls, the files it changed."""
        return rewinding.summaries(self.settings, self.info, list(self.events()))

    # --- reviews and the approval mode (guard.py) -------------------------------------------

    def pending_reviews(self) -> list[pb.GuardDecision]:
        """The tool calls that wait for the person's review, oldest first."""
        return self.guard.pending_reviews()

    def decide(self, call_id: str, approve: bool, reason: str = "", remember: bool = False) -> None:
        """Answer a pending review: approve or deny, with a reason the model reads; `remember`
        does the same for this tool or this exact command for the rest of the session. A `review_decided`
        event records it. Raises `NotWaiting` when that call does not wait (any more)."""
        try:
            self.guard.decide(call_id, approve, reason, remember)
        except guardrail.NotWaiting as err:
            raise NotWaiting(str(err)) from err

    @property
    def approval(self) -> str:
        """The approval mode in force: auto, ask or read-only."""
        return self.guard.mode

    def cycle_approval(self) -> str:
        """Switch to the next approval mode (ask, auto, read-only, ask, ...); a notice records it."""
        mode = self.guard.cycle_mode()
        self.recorder.emit(pb.Notice(level="info", text=f"approval mode: {mode}"))
        return mode

    # --- failures of the event log --------------------------------------------------------

    def _store_failed(self, err: BaseException) -> None:
        """A write of the event log failed (a full disk): end the run; the client says why once."""
        if self.failure is None:
            self.failure = err
            log.error("cannot write the event log: %s", err)
        if self._run_task is not None and not self._run_task.done():
            self._run_task.cancel()

    def failure_text(self) -> str:
        err = self.failure
        if err is None:
            return ""
        return event_log_failure(self.settings.data_dir, err)
