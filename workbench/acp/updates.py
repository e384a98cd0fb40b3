"""Workbench's committed events as ACP session updates (`Updates.of`), and a run's end as a stop reason.

Pure: events in, `acp.schema` models out, nothing sent. One `Updates` follows one session's
events in order (a turn's live events, or a stored session replayed by session/load):
- the root agent's text as `agent_message_chunk` while it streams (TextDelta), and the part of
  an assistant message the deltas did not carry (a model that does not stream);
- each tool call, of any agent, as `tool_call` (pending) then `tool_call_update`: in_progress
  once the guard let it run, its streamed output, then completed or failed with its content (the
  diff of an edit, the output, and for a failure its cause after the partial output);
- the person's prompts as `user_message_chunk` on a replay (a live turn's prompt is the client's own);
- warnings and errors Workbench tells the person as agent text, marked `workbench:`;
- the root's usage after each model call as `usage_update`: the tokens of that call (the context in
  use), the model's window, the session's cost when the price is known.

ACP has no agent tree. A subagent's own calls carry `_meta.workbench.agent_id` and its name in
their title; the parent's `subagent` call that started it carries `_meta.workbench.child_agent_id`
and, as its content, the child's progress (its start, each of its calls, its end); an Inbox
delivery to the root (a child's result, another agent's message) is an `agent_thought_chunk`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp.helpers import (
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_tool_call,
    update_user_message_text,
)
from acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    Cost,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    UsageUpdate,
    UserMessageChunk,
)

from workbench.core.words import ROOT_ID as ROOT
from workbench.core.words import agent_ended, spawn_mode, with_reason
from workbench.pb import workbench_pb2 as pb

Update = AgentMessageChunk | AgentThoughtChunk | UserMessageChunk | ToolCallStart | ToolCallProgress | UsageUpdate

KINDS: dict[str, str] = {  # Workbench tool -> ACP ToolKind
    "read_file": "read",
    "skill": "read",
    "write_file": "edit",
    "edit_file": "edit",
    "bash": "execute",
    "tmux": "execute",
    "grep": "search",
    "glob": "search",
    "ls": "search",
    "web_search": "fetch",
    "web_fetch": "fetch",
    "subagent": "think",
}
TITLE_KEYS = ("command", "path", "pattern", "url", "query", "action", "name")  # the argument a title shows
TITLE_CHARS = 120
LIVE_OUTPUT_CHARS = 4_000  # a running call's output shown live: its last characters
OUTPUT_CHARS = 20_000  # a finished call's output shown: its first characters, with a note
PROGRESS_LINES = 12  # a subagent call's content: the child's last lines of progress
INBOX_CHARS = 2_000


def arguments(call: pb.ToolCall) -> dict[str, Any]:
    try:
        parsed = json.loads(call.arguments or "{}")
    except (json.JSONDecodeError, RecursionError):
        return {}
    return parsed if isinstance(parsed, dict) else {}


def title(call: pb.ToolCall, agent: str = "") -> str:
    """`bash: make test`, `read_file: auth.go`; a subagent's call starts with its name in brackets."""
    args = arguments(call)
    keys = ("name", "prompt", "id") if call.name == "subagent" else TITLE_KEYS
    shown = next((str(args[k]) for k in keys if isinstance(args.get(k), str | int) and args[k] != ""), "")
    if call.name == "subagent" and args.get("action", "create") != "create":
        shown = f"{args.get('action')} {shown}"
    shown = " ".join(shown.split())
    if len(shown) > TITLE_CHARS:
        shown = shown[: TITLE_CHARS - 1] + "…"
    head = f"[{agent}] " if agent else ""
    return f"{head}{call.name}: {shown}" if shown else f"{head}{call.name}"


def locations(call: pb.ToolCall, workspace: Path) -> list[ToolCallLocation] | None:
    """The file a file tool touches, absolute, with the line a read starts at."""
    args = arguments(call)
    path = args.get("path")
    if not isinstance(path, str) or not path or call.name not in ("read_file", "write_file", "edit_file"):
        return None
    line = args.get("offset") if call.name == "read_file" else None
    return [ToolCallLocation(path=str(workspace / path), line=line if isinstance(line, int) and line > 0 else None)]


def fenced(text: str, info: str = "") -> str:
    """`text` in a Markdown code fence longer than any backtick run inside it."""
    longest = max((len(run) for run in re.findall(r"`{3,}", text)), default=0)
    fence = "`" * max(3, longest + 1)
    newline = "" if text.endswith("\n") else "\n"
    return f"{fence}{info}\n{text}{newline}{fence}"


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[... {len(text) - limit:,} more characters not shown]\n"


def result_content(call: pb.ToolCall | None, result: pb.ToolResult, workspace: Path) -> list[Any]:
    """What a finished call shows: an edit's diff, else its output; a failure's cause after it."""
    content: list[Any] = []
    meta = dict(result.metadata) if result.HasField("metadata") else {}
    args = arguments(call) if call is not None else {}
    path = args.get("path") if isinstance(args.get("path"), str) else None
    if not result.is_error and path and result.name == "edit_file" and isinstance(args.get("new_text"), str):
        old = args.get("old_text") if isinstance(args.get("old_text"), str) else None
        content.append(tool_diff_content(str(workspace / path), args["new_text"], old))
    elif not result.is_error and path and result.name == "write_file" and isinstance(args.get("content"), str):
        if meta.get("created"):
            content.append(tool_diff_content(str(workspace / path), args["content"], None))
        elif isinstance(meta.get("diff"), str) and meta["diff"]:
            content.append(tool_content(text_block(fenced(meta["diff"], "diff"))))
        else:
            content.append(tool_content(text_block(result.output)))
    elif result.output:
        content.append(tool_content(text_block(fenced(_cut(result.output, OUTPUT_CHARS)))))
    if result.is_error:
        content.append(tool_content(text_block(f"Error: {result.error}")))
    return content


@dataclass
class Updates:
    """One session's events, in order, as ACP updates (see the module's doc)."""

    workspace: Path
    window: int = 0  # the model's context window in tokens (0: unknown)
    streamed: str = ""  # the root's text of the current reply sent so far (TextDelta)
    calls: dict[str, pb.ToolCall] = field(default_factory=dict)
    agents: dict[str, str] = field(default_factory=dict)  # agent id -> name
    output: dict[str, str] = field(default_factory=dict)  # call id -> output streamed so far (tail)
    running: set[str] = field(default_factory=set)  # calls the guard let run
    replaying: bool = False  # a stored session (session/load): the person's prompts are shown too
    spawning: dict[str, list[str]] = field(default_factory=dict)  # agent id -> its open `subagent` create calls
    spawned_by: dict[str, tuple[str, str]] = field(default_factory=dict)  # child id -> (parent id, call id)
    progress: dict[str, list[str]] = field(default_factory=dict)  # a subagent call's id -> its child's lines

    def _who(self, agent_id: str) -> str:
        return "" if agent_id == ROOT else self.agents.get(agent_id, agent_id)

    def _meta(self, agent_id: str) -> dict[str, Any]:
        return {"workbench": {"agent_id": agent_id}}

    def of(self, event: pb.Event) -> list[Update]:
        kind = event.WhichOneof("kind")
        agent = event.agent_id
        if kind == "text_delta" and agent == ROOT:
            self.streamed += event.text_delta.text
            return [update_agent_message_text(event.text_delta.text)]
        if kind == "stream_discarded" and agent == ROOT:
            self.streamed = ""
            return [update_agent_message_text("\n\n(workbench: the model's reply broke off; asking again)\n\n")]
        if kind == "message":
            return self._message(event.message, agent)
        if kind == "agent_spawned":
            return self._spawned(event.agent_spawned.agent)
        if kind == "agent_finished" and agent != ROOT:
            done = event.agent_finished
            return self._progress(agent, with_reason(agent_ended(done.status), done.cause))
        if kind == "inbox_item" and agent == ROOT:
            return [update_agent_thought_text(_inbox(event.inbox_item))]
        if kind == "tool_call_started":
            call = event.tool_call_started.call
            return [self._started(call, agent), *self._progress(agent, title(call))]
        if kind == "guard_decision":
            decision = event.guard_decision
            if decision.verdict == pb.GUARD_VERDICT_RECORD:
                return self._run(decision.call_id, agent)
            return []
        if kind == "review_decided" and event.review_decided.approved:
            return self._run(event.review_decided.call_id, agent)
        if kind == "tool_output":
            return self._output(event.tool_output, agent)
        if kind == "tool_call_finished":
            return [self._finished(event.tool_call_finished.result, agent)]
        if kind == "usage_update" and agent == ROOT:
            return [self._usage(event.usage_update)]
        if kind == "notice" and event.notice.level in ("warning", "error"):
            return [update_agent_message_text(f"\n\n> workbench: {event.notice.text}\n\n")]
        return []

    def _usage(self, usage: pb.UsageUpdate) -> UsageUpdate:
        total = usage.session_total
        cost = Cost(amount=total.cost, currency="USD") if total.HasField("cost") else None
        used = usage.call.input_tokens + usage.call.output_tokens
        return UsageUpdate(session_update="usage_update", used=used, size=self.window, cost=cost)

    def _message(self, message: pb.Message, agent: str) -> list[Update]:
        if agent != ROOT:
            return []
        if message.role == pb.ROLE_USER and message.author == pb.AUTHOR_PERSON:
            return [update_user_message_text(message.text)] if self.replaying else []
        if message.role != pb.ROLE_ASSISTANT:
            return []
        streamed, self.streamed = self.streamed, ""
        text = message.text
        if not text:
            return []
        rest = text[len(streamed) :] if text.startswith(streamed) else ("\n\n" + text if streamed else text)
        return [update_agent_message_text(rest)] if rest else []

    def _spawned(self, info: pb.AgentInfo) -> list[Update]:
        """A child: tied to its parent's oldest open `subagent` create call not tied yet."""
        self.agents[info.id] = info.name or info.id
        tied = {call_id for _, call_id in self.spawned_by.values()}
        call_id = next((c for c in self.spawning.get(info.parent_id, []) if c not in tied), None)
        if call_id is None:
            return []
        self.spawned_by[info.id] = (info.parent_id, call_id)
        prompt = " ".join(info.prompt.split())
        line = f"started ({spawn_mode(info.mode)}): {prompt[:TITLE_CHARS]}"
        return self._progress(info.id, line, child_started=True)

    def _progress(self, child: str, line: str, child_started: bool = False) -> list[Update]:
        """A line of the child's progress as the content of the call that started it (while open)."""
        parent, call_id = self.spawned_by.get(child, ("", ""))
        if call_id not in self.calls:
            return []
        lines = self.progress.setdefault(call_id, [])
        lines.append(f"{self.agents.get(child, child)}: {line}")
        del lines[:-PROGRESS_LINES]
        update = update_tool_call(call_id, status="in_progress", content=[tool_content(text_block("\n".join(lines)))])
        update.field_meta = {"workbench": {"agent_id": parent, "child_agent_id": child}}
        return [update]

    def _started(self, call: pb.ToolCall, agent: str) -> ToolCallStart:
        self.calls[call.id] = call
        if call.name == "subagent" and arguments(call).get("action", "create") == "create":
            self.spawning.setdefault(agent, []).append(call.id)
        update = start_tool_call(
            call.id,
            title(call, self._who(agent)),
            kind=KINDS.get(call.name, "other"),  # type: ignore[arg-type]  # a ToolKind literal
            status="pending",
            locations=locations(call, self.workspace),
            raw_input=arguments(call),
        )
        update.field_meta = self._meta(agent)
        return update

    def _run(self, call_id: str, agent: str) -> list[Update]:
        if call_id not in self.calls or call_id in self.running:
            return []
        self.running.add(call_id)
        update = update_tool_call(call_id, status="in_progress")
        update.field_meta = self._meta(agent)
        return [update]

    def _output(self, chunk: pb.ToolOutputChunk, agent: str) -> list[Update]:
        if chunk.call_id not in self.calls:
            return []
        shown = (self.output.get(chunk.call_id, "") + chunk.text)[-LIVE_OUTPUT_CHARS:]
        self.output[chunk.call_id] = shown
        self.running.add(chunk.call_id)
        update = update_tool_call(
            chunk.call_id, status="in_progress", content=[tool_content(text_block(fenced(shown)))]
        )
        update.field_meta = self._meta(agent)
        return [update]

    def _finished(self, result: pb.ToolResult, agent: str) -> ToolCallProgress:
        call = self.calls.pop(result.call_id, None)
        self.output.pop(result.call_id, None)
        self.progress.pop(result.call_id, None)
        self.running.discard(result.call_id)
        if result.call_id in self.spawning.get(agent, []):
            self.spawning[agent].remove(result.call_id)
        update = update_tool_call(
            result.call_id,
            status="failed" if result.is_error else "completed",
            content=result_content(call, result, self.workspace),
        )
        update.field_meta = self._meta(agent)
        return update


def _inbox(item: pb.InboxItem) -> str:
    who = item.child_name or item.child_id
    if item.kind == pb.INBOX_KIND_MESSAGE:
        body = f"Inbox: a message from {who}: {item.text}"
    else:
        body = f"Inbox: subagent {who} {with_reason(agent_ended(item.status), item.cause)}"
        body += f": {item.result}" if item.result else ""
    return (body if len(body) <= INBOX_CHARS else body[:INBOX_CHARS] + " …") + "\n"


def stop_reason(outcome: pb.RunFinished) -> str:
    """The ACP stop reason of a run's end; a failed run is a JSON-RPC error instead (turn.py)."""
    if outcome.status == pb.RUN_STATUS_CANCELLED:
        return "cancelled"
    if outcome.status == pb.RUN_STATUS_BUDGET_EXHAUSTED:
        return "max_turn_requests" if outcome.reason.startswith("turn limit") else "max_tokens"  # tokens or cost
    return "end_turn"
