"""One agent's loop: turns, parallel tool calls, the Inbox, cancel, terminate, budget.

A turn is one model call, then the turn's tool calls run concurrently and their results are
appended in call order. Tool failures are results the model reads; what ends a run is
control flow: an answer without tool calls, a tool that asks to terminate, the turn or token
budget, a model call that failed after its retries, or cancellation.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from workbench.config.settings import Settings
from workbench.core.feedback import Feedback, interrupted, machinery_bug, to_result
from workbench.engine import advice, evidence, looping, task_files, turn_back
from workbench.engine.budget import Budget
from workbench.engine.calls_in_text import TextCall, find_calls, result_notes
from workbench.engine.compaction import Compactor, NothingToCompact
from workbench.engine.gates import CallRefused, Gate, keep_workspace, own_checks
from workbench.engine.inbox import Inbox
from workbench.engine.recorder import Recorder
from workbench.engine.repeats import Repeats
from workbench.engine.run_state import RunEnded, RunState
from workbench.guard.guardrail import Guard
from workbench.model.gateway import add_usage, litellm_knows
from workbench.model.port import Model
from workbench.model.retry import ContextOverflow, ModelCallFailed, RetryPolicy, call_with_retry
from workbench.model.stream import new_call_id
from workbench.pb import workbench_pb2 as pb
from workbench.tools.registry import Toolbox, ToolContext

if TYPE_CHECKING:
    from workbench.checkpoints.checkpointer import Checkpointer

log = logging.getLogger("workbench")

CANCEL_GRACE = 1.5  # seconds the tools of a cancelled run get to stop their work


class AgentLoop:
    def __init__(
        self,
        *,
        client: Model,
        toolbox: Toolbox,
        ctx: ToolContext,
        recorder: Recorder,
        settings: Settings,
        budget: Budget | None = None,
        messages: list[pb.Message] | None = None,
        inbox: Inbox | None = None,
        on_status: Callable[[pb.AgentStatus], None] = lambda status: None,
        guard: Guard | None = None,
        checkpoints: Checkpointer | None = None,
    ):
        self.client, self.toolbox, self.ctx, self.recorder = client, toolbox, ctx, recorder
        self.checkpoints = checkpoints  # the workspace is kept before each call that can change it
        self.guard = guard  # judges each call before its tool runs (guard.py); None: every call runs
        self.task = ""  # the prompt of the current run, the context the model judge is given
        self.prompt_author: pb.Author = pb.AUTHOR_PERSON  # who writes its runs' prompts (a child's: its parent)
        self.settings = settings
        self.budget = budget or Budget(settings.max_tokens, settings.max_cost)
        self.messages: list[pb.Message] = list(messages or [])
        self.inbox = inbox
        self.on_status = on_status
        self.usage = pb.Usage()  # the agent's own model calls, over all its runs
        # what other tasks hand the loop: the person's prompts sent while a run goes (the next
        # turn's), and how the tree's cancel ends the run (a timeout)
        self.prompts: list[str] = []
        self.cancel_as: tuple[pb.RunStatus, str] | None = None
        self.state = self._fresh_state()  # the current (or last) run's; run() builds a fresh one
        self.policy = RetryPolicy(
            max_attempts=settings.retry_max_attempts,
            deadline=settings.retry_deadline,
            retry_after_cap=settings.retry_after_cap,
        )
        # before each tool call, in this order (gates.py)
        self.gates: tuple[Gate, ...] = (
            self._looping_review,
            self._runnable_text_call,
            self._not_repeated,
            own_checks(self.toolbox, self.ctx),
            self._admitted,
            self._checkpointed,
        )

    # --- the run --------------------------------------------------------------------------

    def queue_prompt(self, text: str) -> None:
        """A prompt of the person's for the running agent: a user message before its next model call.

        It also wakes an agent that waits on its children, and a final answer given meanwhile
        does not end the run: the agent takes another turn to read the prompt.
        """
        self.prompts.append(text)
        if self.inbox is not None:
            self.inbox.wake()

    @property
    def outcome(self) -> pb.RunFinished | None:
        """How the current run ended; None while it goes (or before the first)."""
        return self.state.outcome

    def _fresh_state(self) -> RunState:
        return RunState(repeats=Repeats(self.toolbox.changing(), self.ctx.workspace))

    async def run(self, prompt: str) -> pb.RunFinished:
        """Run to an end; cancellation is recorded as CANCELLED and re-raised.

        `prompt_author` wrote the prompt: the person (the root's), or the parent (a subagent's task).
        An agent may run again (the person's next prompt): the conversation goes on.
        """
        self.state = self._fresh_state()
        self.task = prompt or self.task
        self.recorder.emit(
            pb.RunStarted(
                prompt=prompt,
                model=self.client.spec.model,
                workspace=str(self.ctx.workspace),
                tools=list(self.toolbox.tools),
                system_prompt=next((m.text for m in self.messages if m.role == pb.ROLE_SYSTEM), ""),
            ),
        )
        if prompt:
            self.append(pb.Message(role=pb.ROLE_USER, text=prompt, author=self.prompt_author))
        try:
            if prompt:
                await self._read_task_files(prompt)
            text = await self._turns()
            outcome = pb.RunFinished(status=pb.RUN_STATUS_FINISHED, text=text)
        except RunEnded as end:
            outcome = pb.RunFinished(status=end.status, reason=end.reason, text=end.text or self.last_answer())
        except asyncio.CancelledError:
            status, reason = self.cancel_as or (pb.RUN_STATUS_CANCELLED, "cancelled")
            self._finish(pb.RunFinished(status=status, reason=reason, text=self.last_answer()))
            raise
        return self._finish(outcome)

    def _finish(self, outcome: pb.RunFinished) -> pb.RunFinished:
        outcome.usage.CopyFrom(self.usage)
        self.state.outcome = outcome
        self.recorder.emit(outcome)
        return outcome

    def last_answer(self) -> str:
        """The conversation's last assistant text ('' before any)."""
        return next((m.text for m in reversed(self.messages) if m.role == pb.ROLE_ASSISTANT and m.text), "")

    def _answer(self, text: str) -> str:
        """The run's answer: the last reply, after the answers a Workbench line turned back that no
        call followed (the reply to the line alone could drop an answer to the person's task: a
        small model asked to run the command it had answered about said it could not)."""
        return "\n\n".join(dict.fromkeys(t for t in (*self.state.held, text) if t))

    def append(self, message: pb.Message) -> None:
        """A message joins the conversation, recorded as the agent's event (the one way it grows)."""
        self.messages.append(message)
        self.recorder.emit(message)

    def replace_conversation(self, messages: list[pb.Message]) -> None:
        """The conversation as a rewind put it back (rebuilt from the log; nothing is recorded)."""
        self.messages = messages

    def drop_prompts(self) -> None:
        """The person's queued prompts go (the person cancelled the run)."""
        self.prompts.clear()

    def next_prompt(self) -> str:
        """The first prompt queued as the run ended, taken from the queue ('' when none is)."""
        return self.prompts.pop(0) if self.prompts else ""

    def _take_prompts(self) -> None:
        prompts, self.prompts = self.prompts, []
        if prompts:
            self.state.held.clear()  # the person spoke since: the next answer is to them
        for text in prompts:
            self.append(pb.Message(role=pb.ROLE_USER, text=text, author=pb.AUTHOR_PERSON))

    async def _turns(self) -> str:
        while True:
            self._drain_inbox()
            self._take_prompts()
            if self.settings.max_turns and self.state.turns >= self.settings.max_turns:  # 0: no limit
                raise RunEnded(
                    pb.RUN_STATUS_BUDGET_EXHAUSTED,
                    f"turn limit reached ({self.settings.max_turns} model calls)",
                )
            if reason := self.budget.exhausted():
                raise RunEnded(pb.RUN_STATUS_BUDGET_EXHAUSTED, reason)
            reply = await self._call_model()
            self.state.turns += 1
            await self._recover_text_calls(reply)
            self.append(reply)
            if not reply.tool_calls:
                if self.prompts:  # the person wrote during this call: they get the next turn
                    continue
                # children still to hear from, or an item that came during this call: another turn
                if self.inbox is not None and (self.inbox.pending or len(self.inbox)):
                    await self._wait_for_children()
                    continue
                if self._asks_for_evidence(reply.text) or self._turned_back(reply.text):
                    self.state.held.append(reply.text)
                    continue
                return self._answer(reply.text)
            self.state.held.clear()  # work followed the answers turned back: the next answer stands alone
            results = await self._run_tools(list(reply.tool_calls))
            for result in results:
                self.append(pb.Message(role=pb.ROLE_TOOL, tool_result=result))
            if any(r.terminate for r in results):
                raise RunEnded(pb.RUN_STATUS_TERMINATED, "a tool asked to end the run", reply.text)
            if self.state.stopped:  # it kept repeating a call and no person could be asked: it stops here
                raise RunEnded(pb.RUN_STATUS_STOPPED, self.state.stopped)

    async def _read_task_files(self, task: str) -> None:
        """With `task_files` on, the files the task names are read before the first model call, and
        the code names it gives searched, by read_file and grep calls Workbench makes, and the task
        follows them again (task_files.py); a call the guard would not let through unasked is left out."""
        mode = self.settings.task_files
        if mode == "off" or not {"read_file", "grep"} & set(self.toolbox.tools):
            return
        # litellm's table (its first use imports litellm: seconds, off the event loop)
        if mode == "auto" and await asyncio.to_thread(litellm_knows, self.client.spec):
            return
        paths = await asyncio.to_thread(task_files.named_files, task, self.ctx.workspace)
        paths = paths if "read_file" in self.toolbox.tools else []
        names = task_files.named_identifiers(task) if "grep" in self.toolbox.tools else []
        pattern = await asyncio.to_thread(task_files.symbol_pattern, names, self.ctx.workspace)
        reads = task_files.reads(paths, pattern)
        if self.guard is not None:
            calls = [c for c in reads.tool_calls if self.guard.check(c).verdict == pb.GUARD_VERDICT_RECORD]
            del reads.tool_calls[:]
            reads.tool_calls.extend(calls)
        if not reads.tool_calls:
            return
        self.append(reads)
        for result in await self._run_tools(list(reads.tool_calls)):
            self.append(pb.Message(role=pb.ROLE_TOOL, tool_result=result))
        again = task_files.task_again(task, reads)
        self.append(pb.Message(role=pb.ROLE_USER, text=again, author=pb.AUTHOR_WORKBENCH))

    # --- model ----------------------------------------------------------------------------

    async def _call(self, messages: list[pb.Message], tools: list[pb.ToolDefinition], stream: bool) -> pb.Message:
        """One model call with its retries; streamed text and argument progress become events."""
        emit = self.recorder.emit

        def on_delta(text: str) -> None:
            emit(pb.TextDelta(text=text))

        return await call_with_retry(
            lambda: self.client.complete(
                messages,
                tools,
                on_delta if stream else lambda text: None,
                on_call_delta=emit if stream else None,  # a call being written: ToolCallDelta events
                on_notice=emit,
            ),
            self.policy,
            on_wait=emit,
            on_discard=emit,
        )

    def _compactor(self) -> Compactor:
        async def summarize(request: list[pb.Message]) -> pb.Message:
            try:
                reply = await self._call(request, [], stream=False)
            except ContextOverflow as err:
                raise ModelCallFailed(f"the older turns are too long even to summarize: {err.reason}") from err
            self._count(reply.usage)
            return reply

        return Compactor(self.client.spec.wire_model, summarize, self.recorder.emit, self.settings.compact_threshold)

    async def compact_now(self) -> None:
        """Summarize the older turns now (the person asked). Raises NothingToCompact or ModelCallFailed."""
        await self._compactor().compact(self.messages, "the person asked to compact", self.toolbox.definitions())

    async def _call_model(self) -> pb.Message:
        """One model call with retries; compacts the conversation above the threshold or on overflow."""
        for note in await self.toolbox.settle():  # MCP servers starting for the first time
            self.recorder.emit(pb.Notice(level="warning", text=note))
        tools = self.toolbox.definitions()
        count = self._count
        call = self._call
        compactor = self._compactor()
        try:
            if reason := compactor.due(self.messages, tools):
                await compactor.compact(self.messages, reason, tools)
            try:
                reply = await call(self.messages, tools, stream=True)
            except ContextOverflow as overflow:
                try:
                    await compactor.compact(self.messages, overflow.reason, tools)
                except NothingToCompact as err:
                    raise ModelCallFailed(f"{overflow.reason} ({err})") from overflow
                try:
                    reply = await call(self.messages, tools, stream=True)
                except ContextOverflow as again:
                    raise ModelCallFailed(
                        f"the conversation is still too long for the model after compaction: {again.reason}"
                    ) from again
        except ModelCallFailed as err:
            raise RunEnded(pb.RUN_STATUS_FAILED, f"model call failed: {err.reason}") from err
        count(reply.usage)
        return reply

    def _asks_for_evidence(self, answer: str) -> bool:
        """With `answer_check` on, once a run: an answer stating values no tool result shows gets the
        question which result shows them (evidence.py), and the run goes on."""
        if not self.settings.answer_check or self.state.asked_for_evidence:
            return False
        values = evidence.unsupported(answer, self.messages)
        if not values:
            return False
        self.state.asked_for_evidence = True
        self.append(pb.Message(role=pb.ROLE_USER, text=evidence.question(values), author=pb.AUTHOR_WORKBENCH))
        return True

    def _turned_back(self, answer: str) -> bool:
        """A how-to, or a change claimed that no call made, gets its one line back (turn_back.py)."""
        if text := turn_back.line(answer, self):
            self.append(pb.Message(role=pb.ROLE_USER, text=text, author=pb.AUTHOR_WORKBENCH))
        return bool(text)

    async def _recover_text_calls(self, reply: pb.Message) -> None:
        """Tool calls the model wrote as text (see calls_in_text) become the reply's calls.

        The reply keeps its whole text, blocks included: on the wire it goes back as that text and
        the results as text (text_calls.echo_results), so the model sees the calls it wrote
        worked. Each recovered call is marked `from_text` (and `repaired` when it was read
        leniently: for a model litellm does not know); a block that cannot run gets its error as
        its result, and its result gets the notes `calls_in_text.result_notes` gives (a result the
        reply wrote itself, a program written as a tool that ran as its bash call).
        """
        if reply.tool_calls or not reply.text:
            return
        tools = dict(self.toolbox.tools)  # a copy for the thread: MCP tools may arrive meanwhile
        schemas = {name: t.schema for name, t in tools.items()}
        lenient = not litellm_knows(self.client.spec)
        # in a thread: reading a long block as JSON5 takes up to about a second (calls_in_text.LENIENT_CHARS)
        found, _prose = await asyncio.to_thread(find_calls, reply.text, tools, schemas=schemas, lenient=lenient)
        line = self.messages[-1] if self.messages else None
        if not found and lenient and line is not None and line.author == pb.AUTHOR_WORKBENCH:
            # the ready bash call a Workbench line offered, sent back as a shell block: that call
            if command := advice.offered_command_sent(line.text, reply.text, tools):
                found = [TextCall("bash", json.dumps({"command": command}), repaired=True)]
        for text_call in found:
            call = reply.tool_calls.add(id=new_call_id(), name=text_call.name, arguments=text_call.arguments)
            call.from_text, call.repaired = True, text_call.repaired
            if text_call.error:  # a name not offered: a configured MCP server's state says more
                why = self.toolbox.missing(text_call.unknown)
                self.state.text_calls[call.id] = (
                    f"{text_call.unknown!r} is not offered: {why}" if why else text_call.error
                )
            if notes := result_notes(text_call):
                self.state.text_notes[call.id] = notes

    def _count(self, usage: pb.Usage) -> None:
        """A model call's usage (the agent's own, or the model judge's) toward the agent and the budget."""
        add_usage(self.usage, usage)
        add_usage(self.budget.used, usage)
        self.recorder.emit(pb.UsageUpdate(call=usage, agent_total=self.usage, session_total=self.budget.used))

    # --- tools ----------------------------------------------------------------------------

    async def _run_tools(self, calls: list[pb.ToolCall]) -> list[pb.ToolResult]:
        tasks = [asyncio.create_task(self._run_tool(call), name=f"tool {call.name} {call.id}") for call in calls]
        for task in tasks:  # a tool abandoned by a cancel may still fail later: its error goes to the log
            task.add_done_callback(_log_abandoned_failure)
        try:
            await asyncio.wait(tasks)  # not gather: a cancel must not wait for tools that ignore it
        except asyncio.CancelledError:
            await self._stop_tools(calls, tasks)
            raise
        bug = next((err for task in tasks if (err := task.exception()) is not None), None)
        if bug is not None:  # a bug of the machinery (not of a tool): still one result for every call
            for call, task in zip(calls, tasks, strict=True):
                if (err := task.exception()) is None:
                    self.append(pb.Message(role=pb.ROLE_TOOL, tool_result=task.result()))
                    continue
                result = machinery_bug(call, err)
                self.recorder.emit(pb.ToolCallFinished(result=result))
                self.append(pb.Message(role=pb.ROLE_TOOL, tool_result=result))
            raise bug
        return [task.result() for task in tasks]

    async def _stop_tools(self, calls: list[pb.ToolCall], tasks: list[asyncio.Task[pb.ToolResult]]) -> None:
        """The run is cancelled: stop the tools, and give every call exactly one result."""
        for task in tasks:
            task.cancel()
        try:  # let tools stop their work (Ctrl-C, kill); a second cancel stops the waiting
            await asyncio.wait(tasks, timeout=CANCEL_GRACE)
        except asyncio.CancelledError:
            pass
        results = []
        for call, task in zip(calls, tasks, strict=True):
            done = task.done() and not task.cancelled() and task.exception() is None
            if done:
                results.append(task.result())
                continue
            if not task.done():  # it ignores the cancel: its late result is not recorded
                self.state.abandoned.add(call.id)
                log.warning(
                    "tool %s (call %s) did not stop within %.1f s of the cancel", call.name, call.id, CANCEL_GRACE
                )
            result = interrupted(call)
            result.duration = time.monotonic() - self.state.started.get(call.id, time.monotonic())
            self.recorder.emit(pb.ToolCallFinished(result=result))
            results.append(result)
        for result in results:
            self.append(pb.Message(role=pb.ROLE_TOOL, tool_result=result))

    async def _run_tool(self, call: pb.ToolCall) -> pb.ToolResult:
        """One call: its gates (gates.py), then its tool, then its completion."""
        run = self.state  # a tool abandoned by a cancel may finish after the next run has started
        run.started[call.id] = time.monotonic()
        self.recorder.emit(pb.ToolCallStarted(call=call))
        # whatever the tool raises is its result already (feedback.to_result); what escapes is the
        # run's cancel (recorded as interrupted by _stop_tools) or a bug of the machinery
        try:
            for gate in self.gates:
                await gate(call)
        except CallRefused as refused:
            result = refused.result
        else:
            result = await self._invoke(call)
        return self._complete(call, result, run)

    async def _invoke(self, call: pb.ToolCall) -> pb.ToolResult:
        """The call passed every gate: its tool runs."""
        # the call's start (and its checkpoint) is durable before anything of it runs (records of
        # a run are grouped per event-loop pass; the guard's decision usually wrote it already)
        self.recorder.store.flush()
        result = await self.toolbox.invoke(call, self.ctx)
        if self.checkpoints is not None:
            self.checkpoints.after_call(call.name, call.arguments)
        return result

    def _complete(self, call: pb.ToolCall, result: pb.ToolResult, run: RunState) -> pb.ToolResult:
        """The call's result, run or refused: its notes, the repeats' memory, its event."""
        run.started.pop(call.id, None)
        if call.id in run.abandoned:
            return result  # the run already recorded this call as interrupted
        result.notes.extend(run.text_notes.pop(call.id, []))
        run.repeats.record(call, result, run.turns)
        run.calls.append((call, result))
        self.recorder.emit(pb.ToolCallFinished(result=result))
        return result

    # --- the gates before a call (gates.py): each returns to let it go on, or raises CallRefused ---

    async def _looping_review(self, call: pb.ToolCall) -> None:
        """A call the agent keeps repeating stops for the person (looping.py)."""
        times = self.state.repeats.looping(call, self.settings.repeat_stop)
        if not times:
            return
        stop = await looping.ask(
            call,
            times,
            agent_id=self.recorder.agent_id,
            guard=self.guard,
            emit=self.recorder.emit,
            on_status=self.on_status,
        )
        if stop.result is None:
            self.state.repeats.go_on(call)
        if stop.note:
            self.prompts.append(stop.note)  # the person's words, at the next turn
        if stop.reason:
            self.state.stopped = self.state.stopped or stop.reason
        if stop.result is not None:  # the person stopped it, or no person could be asked
            raise CallRefused(stop.result)

    async def _runnable_text_call(self, call: pb.ToolCall) -> None:
        """A block the model wrote as text that cannot run gets why as its result."""
        unrunnable = self.state.text_calls.pop(call.id, "") if call.from_text else ""
        if unrunnable:
            raise CallRefused(to_result(call, Feedback(unrunnable)))

    async def _not_repeated(self, call: pb.ToolCall) -> None:
        """A call that would fail again, or return what the model has (repeats.py), does not run."""
        refused = self.state.repeats.refuse(call)
        if refused is not None:
            self.recorder.emit(pb.Notice(level="warning", text=f"{call.name}: {refused.error}"))
            raise CallRefused(refused)

    async def _admitted(self, call: pb.ToolCall) -> None:
        """The guard's decision on `call` (a review waits for the person): blocked or denied, it
        does not run."""
        if self.guard is None:
            return
        denied = await self.guard.admit(
            call,
            agent_id=self.recorder.agent_id,
            task=self.task,
            emit=self.recorder.emit,
            count_usage=self._count,
            on_status=self.on_status,
        )
        if denied is not None:
            denied.metadata["guard_refused"] = True  # the person or a rule stopped it (undone.py leaves such a run)
            raise CallRefused(denied)

    async def _checkpointed(self, call: pb.ToolCall) -> None:
        """The workspace kept before a call that can change it (gates.keep_workspace)."""
        tool = self.toolbox.tools.get(call.name)
        if self.checkpoints is not None and tool is not None and not tool.read_only:
            await keep_workspace(call, self.checkpoints, agent_id=self.recorder.agent_id, emit=self.recorder.emit)

    # --- inbox ----------------------------------------------------------------------------

    def _drain_inbox(self) -> None:
        if self.inbox is not None and (text := self.inbox.drain_text()):
            self.append(pb.Message(role=pb.ROLE_USER, text=text, author=pb.AUTHOR_INBOX))

    async def _wait_for_children(self) -> None:
        assert self.inbox is not None
        if len(self.inbox):
            return  # a completion already arrived: take the next turn without waiting
        self.on_status(pb.AGENT_STATUS_WAITING)
        arrived = await self.inbox.wait(self.settings.wait_cap or None)  # 0: no limit
        self.on_status(pb.AGENT_STATUS_RUNNING)
        if not arrived and not self.prompts:
            raise RunEnded(
                pb.RUN_STATUS_WAIT_TIMEOUT,
                f"waited {self.settings.wait_cap:.0f} s for {len(self.inbox.pending)} running subagent(s)",
            )


def _log_abandoned_failure(task: asyncio.Task[pb.ToolResult]) -> None:
    """Retrieve a tool task's error so asyncio never prints "Task exception was never retrieved"
    (the run already gave that call its result); the log file keeps it."""
    if not task.cancelled() and (err := task.exception()) is not None:
        log.warning("%s ended with %s: %s", task.get_name(), type(err).__name__, err)
