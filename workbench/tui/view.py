"""The screen's state, built only from committed events: a pure view model, no widgets.

`SessionView.apply(events)` folds a batch of pb.Events into: the agent rows (status, start
and end time, tool-call count, last activity), each agent's transcript items, the Inbox with
its unread count, usage and the last call's prompt size, changed files with their diffs, and
the tmux attach command. It returns what changed, so widgets update only those parts. The
same events give the same state whether they arrive live or are replayed on resume.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from workbench.core import activity, words
from workbench.core.words import ROOT_ID as ROOT
from workbench.pb import workbench_pb2 as pb
from workbench.tui.items import FILE_TOOLS, AssistantItem, Item, NoticeItem, ToolItem, UserItem
from workbench.tui.text import arguments_of, one_line

# Event kinds the view model shows nothing of (each other kind has its `_on_KIND` handler;
# tests/tui/test_view.py checks both against the proto): a checkpoint is read from the log by
# the rewind's screens (Session.turns), not drawn as it comes.
IGNORED_KINDS = frozenset({"checkpoint"})


@dataclass
class AgentRow:
    """One agent in the tree."""

    info: pb.AgentInfo
    started: float
    ended: float = 0.0
    tool_calls: int = 0
    activity: str = ""
    children: list[str] = field(default_factory=list)
    usage: pb.Usage = field(default_factory=pb.Usage)
    reviews: int = 0  # its calls that wait for the person's review now

    @property
    def status(self) -> int:
        return self.info.status

    @property
    def final(self) -> bool:
        return self.info.status in words.FINAL_AGENT_STATUSES


@dataclass
class InboxEntry:
    recipient: str
    item: pb.InboxItem
    seq: int
    read: bool = False  # its recipient took it in, or the person looked at the Inbox


INBOX_DELIVERY = "[Inbox:"  # how a delivery to an agent starts (workbench/engine/inbox.py, drain_text)


@dataclass
class Changes:
    """What one batch changed: widgets refresh only these."""

    agents: set[str] = field(default_factory=set)
    new_agents: list[str] = field(default_factory=list)
    added: dict[str, list[Item]] = field(default_factory=dict)
    updated: set[int] = field(default_factory=set)  # Item.key
    inbox: bool = False
    status: bool = False
    files: bool = False
    runs_ended: list[pb.RunFinished] = field(default_factory=list)

    def add(self, agent_id: str, item: Item) -> None:
        self.added.setdefault(agent_id, []).append(item)


class SessionView:
    """Everything the screen shows about one session, from its events."""

    def __init__(self) -> None:
        self.session_id = ""
        self.model = ""
        self.workspace = ""
        self.title = ""
        self.last_seq = 0
        self.agents: dict[str, AgentRow] = {}
        self.transcripts: dict[str, list[Item]] = {}
        self.inbox: list[InboxEntry] = []
        self.usage = pb.Usage()
        self.prompt_tokens = 0  # the root's last call: how much of the window it used
        self.changed_files: dict[str, str] = {}  # path -> its diffs this session, in order, most recent path last
        self._diffs: dict[str, list[str]] = {}
        self.run_files: list[str] = []  # paths changed by the current run of the root
        self.attach_command = ""
        self.shell_ran = False  # a bash or tmux call started: the attach command is worth showing
        self.busy = False
        self.last_answer = ""
        self.reviews: dict[str, tuple[str, pb.GuardDecision]] = {}  # call id -> (agent, decision): waiting
        self.run_started = 0.0  # the root's current (or last) run
        self.streamed_chars = 0  # text streamed since the last usage report: the estimate of output tokens
        self.running: dict[str, ToolItem] = {}  # call id -> a call that has not finished
        self._tools: dict[str, ToolItem] = {}
        self._streams: dict[str, AssistantItem] = {}  # agent -> the assistant item being streamed

    # --- reading -----------------------------------------------------------------------

    def transcript(self, agent_id: str) -> list[Item]:
        """The agent's items: the list itself, which later events extend in place."""
        return self.transcripts.setdefault(agent_id, [])

    def tree_order(self) -> list[tuple[int, AgentRow]]:
        """(depth, row) for each agent, parents first, children in spawn order."""
        out: list[tuple[int, AgentRow]] = []

        def walk(agent_id: str, depth: int) -> None:
            row = self.agents[agent_id]
            out.append((depth, row))
            for child in row.children:
                walk(child, depth + 1)

        for agent_id, row in self.agents.items():
            if not row.info.parent_id or row.info.parent_id not in self.agents:
                walk(agent_id, 0)
        return out

    @property
    def needs_you(self) -> int:
        """Reviews that wait for the person, of every agent."""
        return len(self.reviews)

    def next_review(self, after: str = "") -> tuple[str, pb.GuardDecision] | None:
        """The oldest waiting review, or the first after the call `after` (round the end): (agent, decision)."""
        waiting = list(self.reviews)
        if not waiting:
            return None
        start = waiting.index(after) + 1 if after in waiting else 0
        return self.reviews[waiting[start % len(waiting)]]

    def _review_settled(self, call_id: str, changes: Changes) -> None:
        waited = self.reviews.pop(call_id, None)
        if waited is not None:
            row = self.agents.get(waited[0])
            if row is not None:
                row.reviews = max(0, row.reviews - 1)
                changes.agents.add(waited[0])
            changes.status = True

    def tool(self, call_id: str) -> ToolItem | None:
        return self._tools.get(call_id)

    @property
    def unread(self) -> int:
        return sum(1 for entry in self.inbox if not entry.read)

    def mark_read(self, recipient: str = "") -> None:
        """The person looked at the Inbox (every item), or `recipient` took its items in."""
        for entry in self.inbox:
            if not recipient or entry.recipient == recipient:
                entry.read = True

    def pending_prompt(self, agent_id: str, text: str, now: float) -> UserItem:
        """A prompt the person sent: shown at once, matched by its message (or queued event) later."""
        item = UserItem(0, now, text, queued=True)
        item.starting = True
        self.transcript(agent_id).append(item)
        return item

    def phase(self, agent_id: str = ROOT) -> str:
        """What the agent is doing now, in a few words (the working line)."""
        row = self.agents.get(agent_id)
        running = [t for t in self.running.values() if t.agent_id == agent_id]
        if row is not None and row.status == pb.AGENT_STATUS_AWAITING_APPROVAL:
            return "waiting for your approval"
        if running:
            call = running[-1]
            return f"running {call.call.name}: {call.summary}" if call.summary else f"running {call.call.name}"
        if row is not None and row.status == pb.AGENT_STATUS_WAITING:
            children = sum(1 for c in row.children if not self.agents[c].final)
            return f"waiting for {children} subagent{'s' if children != 1 else ''}"
        if row is not None and row.activity.startswith("retrying"):
            return row.activity
        if agent_id in self._streams:
            return "writing the answer"
        if row is not None and row.activity.startswith("writing a "):
            return row.activity
        return "thinking"

    # --- applying events ---------------------------------------------------------------

    def apply(self, events: list[pb.Event], changes: Changes | None = None) -> Changes:
        """Fold `events` in; return what changed (added to `changes` when given)."""
        changes = changes if changes is not None else Changes()
        for event in events:
            if event.seq and event.seq <= self.last_seq:
                continue  # seen already (a re-sync may repeat events); applying twice would double text
            self.last_seq = max(self.last_seq, event.seq)
            if not self.session_id:
                self.session_id = event.session_id
            kind = event.WhichOneof("kind")
            handler = getattr(self, f"_on_{kind}", None)
            if handler is not None:
                handler(event, changes)
        return changes

    def _time(self, event: pb.Event) -> float:
        return event.time.seconds + event.time.nanos / 1e9

    def _append(self, event: pb.Event, item: Item, changes: Changes) -> Item:
        self.transcripts.setdefault(event.agent_id, []).append(item)
        changes.add(event.agent_id, item)
        return item

    def _touch(self, item: Item, changes: Changes) -> None:
        item.version += 1
        changes.updated.add(item.key)

    def _activity(self, agent_id: str, text: str, changes: Changes) -> None:
        row = self.agents.get(agent_id)
        if row is not None:
            row.activity = text
            changes.agents.add(agent_id)

    def _on_agent_spawned(self, event: pb.Event, changes: Changes) -> None:
        info = event.agent_spawned.agent
        row = self.agents.get(info.id)
        if row is None:  # a new agent; the root comes again with each run and keeps its row
            row = AgentRow(info=pb.AgentInfo(), started=self._time(event))
            self.agents[info.id] = row
            changes.new_agents.append(info.id)
            parent = self.agents.get(info.parent_id)
            if parent is not None:
                parent.children.append(info.id)
        row.info.CopyFrom(info)
        row.started, row.ended = self._time(event), 0.0
        row.activity = activity.STARTED
        changes.agents.add(info.id)

    def _on_run_started(self, event: pb.Event, changes: Changes) -> None:
        run = event.run_started
        if event.agent_id == ROOT:
            root = self.agents.get(ROOT)
            if root is not None and root.final:  # a later run: the root's row starts again
                root.info.status = pb.AGENT_STATUS_RUNNING
                root.started, root.ended, root.activity = self._time(event), 0.0, activity.STARTED
                changes.agents.add(ROOT)
            self.run_started = self._time(event)
            self.busy, self.run_files = True, []
            self.model = run.model or self.model
            self.workspace = run.workspace or self.workspace
            if not self.title:
                self.title = one_line(run.prompt, 60)
            changes.status = True

    def _on_text_delta(self, event: pb.Event, changes: Changes) -> None:
        stream = self._streams.get(event.agent_id)
        if stream is None:
            stream = AssistantItem(event.seq, self._time(event))
            self._streams[event.agent_id] = stream
            self._append(event, stream, changes)
        else:
            self._touch(stream, changes)
        stream.text += event.text_delta.text
        self.streamed_chars += len(event.text_delta.text)
        self._activity(event.agent_id, activity.WRITING, changes)

    def _on_message(self, event: pb.Event, changes: Changes) -> None:
        message = event.message
        if message.role == pb.ROLE_USER:
            self._user_message(event, changes)
        elif message.role == pb.ROLE_ASSISTANT:
            stream = self._streams.pop(event.agent_id, None)
            if stream is not None:
                stream.text, stream.done = message.text, True
                self._touch(stream, changes)
            elif message.text:
                self._append(event, AssistantItem(event.seq, self._time(event), message.text, done=True), changes)
            if message.text and event.agent_id == ROOT:
                self.last_answer = message.text
        elif message.role == pb.ROLE_TOOL:  # normally told by tool_call_finished; a synthetic result is not
            item = self._tools.get(message.tool_result.call_id)
            if item is not None and item.result is None:
                item.result = message.tool_result
                self._touch(item, changes)

    def _user_message(self, event: pb.Event, changes: Changes) -> None:
        text, author = event.message.text, event.message.author
        if author == pb.AUTHOR_INBOX or (not author and text.startswith(INBOX_DELIVERY)):  # older logs: no author
            self.mark_read(event.agent_id)
            changes.inbox = True
            author = pb.AUTHOR_INBOX
        for item in self.transcript(event.agent_id):
            if isinstance(item, UserItem) and item.queued and item.text == text:
                item.queued = item.starting = False  # the queued prompt reached the agent
                item.seq = item.seq or event.seq
                self._touch(item, changes)
                return
        item = UserItem(event.seq, self._time(event), text)
        item.author = author or pb.AUTHOR_PERSON
        self._append(event, item, changes)

    def _on_prompt_queued(self, event: pb.Event, changes: Changes) -> None:
        text = event.prompt_queued.text
        for item in self.transcript(event.agent_id):
            if isinstance(item, UserItem) and item.starting and item.text == text:
                item.starting, item.seq = False, event.seq  # the echo shown at Enter: now queued
                self._touch(item, changes)
                return
        self._append(event, UserItem(event.seq, self._time(event), text, queued=True), changes)

    def _on_tool_call_delta(self, event: pb.Event, changes: Changes) -> None:
        delta = event.tool_call_delta
        self._activity(event.agent_id, activity.writing_call(delta.name, delta.chars), changes)

    def _on_tool_call_started(self, event: pb.Event, changes: Changes) -> None:
        call = event.tool_call_started.call
        item = ToolItem(event.seq, self._time(event), call)
        item.agent_id = event.agent_id
        self.shell_ran = self.shell_ran or call.name in ("bash", "tmux")
        self._tools[call.id] = item
        self.running[call.id] = item
        self._append(event, item, changes)
        changes.status = True
        row = self.agents.get(event.agent_id)
        if row is not None:
            row.tool_calls += 1
        self._activity(event.agent_id, activity.running(call.name, item.summary), changes)

    def _on_tool_output(self, event: pb.Event, changes: Changes) -> None:
        item = self._tools.get(event.tool_output.call_id)
        if item is not None:
            item.output.append(event.tool_output.text)
            self._touch(item, changes)

    def _on_tool_call_finished(self, event: pb.Event, changes: Changes) -> None:
        result = event.tool_call_finished.result
        self._review_settled(result.call_id, changes)  # a cancel ends a review with the call
        item = self._tools.get(result.call_id)
        if item is None:  # a result with no start (an old log): show it anyway
            call = pb.ToolCall(id=result.call_id, name=result.name)
            item = ToolItem(event.seq, self._time(event), call)
            self._tools[call.id] = item
            self._append(event, item, changes)
        item.result = result
        self.running.pop(result.call_id, None)
        changes.status = True
        self._touch(item, changes)
        self._activity(event.agent_id, activity.call_ended(result.name, result.is_error), changes)
        if not result.is_error and result.name in FILE_TOOLS:
            path = result.metadata.fields.get("path")
            name = path.string_value if path is not None else str(arguments_of(item.call.arguments).get("path", ""))
            if name:  # every change of the file in order: a file made here keeps its new-file diff
                self._diffs.setdefault(name, []).append(item.diff)
                self.changed_files.pop(name, None)
                self.changed_files[name] = "\n".join(self._diffs[name])
                if name not in self.run_files:
                    self.run_files.append(name)
                changes.files = True

    def _on_defect(self, event: pb.Event, changes: Changes) -> None:
        defect = event.defect
        item = self._tools.get(defect.call_id) if defect.call_id else None
        if item is not None:
            item.defect = defect
            self._touch(item, changes)
            return
        text = f"defect in {defect.where}: {defect.error_type}: {defect.message}"
        notice = NoticeItem(event.seq, self._time(event), "defect", text, "error")
        notice.detail = defect.traceback
        self._append(event, notice, changes)

    def _on_retry_wait(self, event: pb.Event, changes: Changes) -> None:
        wait = event.retry_wait
        text = f"model call failed (attempt {wait.attempt} of {wait.max_attempts}): {one_line(wait.reason, 120)}"
        notice = NoticeItem(event.seq, self._time(event), "retry", text, "warning")
        notice.until = self._time(event) + wait.seconds
        self._append(event, notice, changes)
        self._activity(event.agent_id, activity.retrying_short(one_line(wait.reason, 40)), changes)
        changes.status = True

    def _on_stream_discarded(self, event: pb.Event, changes: Changes) -> None:
        stream = self._streams.pop(event.agent_id, None)
        if stream is not None:
            stream.discarded = True
            self._touch(stream, changes)
        gone = event.stream_discarded
        text = f"the model's reply broke off ({gone.discarded_chars} chars discarded); asking again"
        self._append(event, NoticeItem(event.seq, self._time(event), "discarded", text, "warning"), changes)

    def _on_compaction(self, event: pb.Event, changes: Changes) -> None:
        c = event.compaction
        text = f"compacted the conversation: {c.messages_before} -> {c.messages_after} messages ({one_line(c.reason)})"
        self._append(event, NoticeItem(event.seq, self._time(event), "compaction", text), changes)

    def _on_notice(self, event: pb.Event, changes: Changes) -> None:
        n = event.notice
        self._append(event, NoticeItem(event.seq, self._time(event), "notice", n.text, n.level or "info"), changes)

    def _on_rewind(self, event: pb.Event, changes: Changes) -> None:
        r = event.rewind
        what = " and ".join(w for w, on in (("files", r.code), ("conversation", r.conversation)) if on)
        how = "undo: " if r.undo else ""
        text = f"{how}{what} put back to before turn {r.to_turn} ({len(r.files)} path(s))"
        self._append(event, NoticeItem(event.seq, self._time(event), "rewind", text, "info"), changes)

    def _on_guard_decision(self, event: pb.Event, changes: Changes) -> None:
        d = event.guard_decision
        if d.verdict == pb.GUARD_VERDICT_RECORD:
            return
        name = d.call.name or "call"
        text = f"guard: {words.guard_verdict(d.verdict)} {name} ({d.judge}): {one_line(d.reason, 120)}"
        level = "error" if d.verdict == pb.GUARD_VERDICT_BLOCK else "warning"
        self._append(event, NoticeItem(event.seq, self._time(event), "guard", text, level), changes)
        if d.verdict == pb.GUARD_VERDICT_REVIEW and d.call_id not in self.reviews:
            self.reviews[d.call_id] = (event.agent_id, d)
            row = self.agents.get(event.agent_id)
            if row is not None:
                row.reviews += 1
                changes.agents.add(event.agent_id)
            changes.status = True

    def _on_review_decided(self, event: pb.Event, changes: Changes) -> None:
        r = event.review_decided
        self._review_settled(r.call_id, changes)
        text = "approved" if r.approved else f"denied{': ' + one_line(r.reason) if r.reason else ''}"
        text += " (for the rest of the session)" if r.remember else ""
        self._append(event, NoticeItem(event.seq, self._time(event), "review", f"review: {text}"), changes)

    def _on_inbox_item(self, event: pb.Event, changes: Changes) -> None:
        self.inbox.append(InboxEntry(event.agent_id, event.inbox_item, event.seq))
        changes.inbox = True
        self._activity(event.agent_id, activity.GOT_INBOX_ITEM, changes)

    def _on_agent_status(self, event: pb.Event, changes: Changes) -> None:
        change = event.agent_status
        row = self.agents.get(change.agent_id)
        if row is not None:
            row.info.status = change.status
            changes.agents.add(change.agent_id)
            if row.ended and change.status not in words.FINAL_AGENT_STATUSES:  # it runs again
                row.started, row.ended = self._time(event), 0.0
            self._activity(change.agent_id, activity.status_activity(change.status), changes)
            changes.status = True

    def _on_agent_finished(self, event: pb.Event, changes: Changes) -> None:
        done = event.agent_finished
        row = self.agents.get(done.agent_id)
        if row is None:
            return
        row.info.status = done.status
        row.ended = self._time(event)
        if done.usage.calls or done.usage.input_tokens:  # else the usage updates' total stands
            row.usage.CopyFrom(done.usage)
        self._streams.pop(done.agent_id, None)
        for call_id in [c for c, t in self.running.items() if t.agent_id == done.agent_id]:
            del self.running[call_id]
        if done.agent_id != ROOT:  # in the child's own transcript: how it ended
            ok = done.status == pb.AGENT_STATUS_COMPLETED
            text = words.with_reason(words.agent_status(done.status), one_line(done.cause or done.result, 200))
            notice = NoticeItem(event.seq, self._time(event), "ended", text, "info" if ok else "error")
            self.transcripts.setdefault(done.agent_id, []).append(notice)
            changes.add(done.agent_id, notice)
        word = one_line(done.cause, 60) if done.cause else words.agent_status(done.status)
        self._activity(done.agent_id, word, changes)

    def _on_run_finished(self, event: pb.Event, changes: Changes) -> None:
        if event.agent_id != ROOT:
            return  # a child's end is told by its agent_finished
        run = event.run_finished
        if run.status not in (pb.RUN_STATUS_FINISHED, pb.RUN_STATUS_TERMINATED):
            text = "run " + words.with_reason(words.run_status(run.status), one_line(run.reason, 200))
            self._append(event, NoticeItem(event.seq, self._time(event), "run", text, "warning"), changes)
        self.busy = False
        self._streams.pop(ROOT, None)
        self.running.clear()
        changes.status = True
        changes.runs_ended.append(run)
        if self.run_files:
            text = "changed: " + ", ".join(self.run_files) + "  (ctrl+o: their diffs)"
            self._append(event, NoticeItem(event.seq, self._time(event), "files", text), changes)

    def _on_terminal_ready(self, event: pb.Event, changes: Changes) -> None:
        self.attach_command = event.terminal_ready.attach_command  # shown once a shell ran (status line)
        changes.status = True

    def _on_usage_update(self, event: pb.Event, changes: Changes) -> None:
        update = event.usage_update
        self.usage.CopyFrom(update.session_total)
        self.streamed_chars = 0
        row = self.agents.get(event.agent_id)
        if row is not None:
            row.usage.CopyFrom(update.agent_total)
        if event.agent_id == ROOT:
            self.prompt_tokens = update.call.input_tokens
        changes.status = True
