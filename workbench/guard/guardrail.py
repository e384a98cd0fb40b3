"""The guard: each tool call judged record / review / block before it runs.

Judges, in order, the strictest answer winning (the later judge's reason on a tie):
1. the approval mode (`approval`: auto, ask, read-only);
2. the rules: built-in ones (guard_rules.py) that always want review, and the person's
   `guard_allow` / `guard_review` / `guard_block` rules (`tool:pattern`). An allow rule, or an
   approval the person gave for the rest of the session, turns the mode's review into record;
   it never overrides a built-in rule, a block, or the model judge. A denial the person gave for
   the rest of the session (this tool; bash and tmux: this exact command) blocks, in every mode;
3. the optional model judge (`guard_model`, guard_model.py), which fails closed.

The guard decides; it runs nothing and writes no event. The loop records each decision as a
`guard_decision` event and runs only what was recorded or approved.
"""

from __future__ import annotations

import asyncio
import fnmatch
import logging
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from google.protobuf.message import Message

from workbench.config.choices import APPROVAL_CYCLE, APPROVAL_MODES
from workbench.config.mcp_servers import McpServer
from workbench.config.settings import Settings, effective_approval
from workbench.guard.model_judge import ModelJudge
from workbench.guard.review import describe_call
from workbench.guard.rules import Rule, arguments, bash_rule, file_rule, parse_rules, primary_text
from workbench.mcp.deferred import LISTER
from workbench.mcp.manager import McpManager
from workbench.pb import workbench_pb2 as pb
from workbench.terminal.shell_parse import Places, opaque, simple_commands
from workbench.tools.registry import REGISTRY, builtin_tools

log = logging.getLogger("workbench")
RECORD, REVIEW, BLOCK = pb.GUARD_VERDICT_RECORD, pb.GUARD_VERDICT_REVIEW, pb.GUARD_VERDICT_BLOCK
# Tools that only read (or, for subagent, start agents whose own calls are judged): recorded in every mode.
READING = frozenset({"read_file", "ls", "glob", "grep", "web_search", "skill", "subagent", LISTER})
TMUX_READING = frozenset({"capture", "wait", "list"})
SHELL_TOOLS = frozenset({"bash", "tmux"})
FILE_WRITERS = frozenset({"write_file", "edit_file"})
SAFETY_JUDGES = frozenset({"mode", "rule", "model"})  # an approval for the session remembers only theirs
Emit = Callable[[Message], object]  # a Recorder's emit: emit(decision) records it as the agent's event


class NotWaiting(LookupError):
    """`decide` on a call that does not wait for review (never did, answered, or cancelled)."""


def strictest(*decisions: pb.GuardDecision | None) -> pb.GuardDecision:
    """The decision with the strictest verdict; among equals the later judge's, which says more
    (a rule names the danger where the mode only names the tool)."""
    found = [d for d in decisions if d is not None]
    return max(reversed(found), key=lambda d: d.verdict)  # max keeps the first of equal keys


def acting(tool: str, args: dict[str, Any]) -> bool:
    """Whether a call can change something or reach out (a reading call is recorded in every mode)."""
    if tool == "tmux":
        return args.get("action") not in TMUX_READING
    return tool not in READING


def _decision(verdict: pb.GuardVerdict, judge: str, reason: str) -> pb.GuardDecision:
    return pb.GuardDecision(verdict=verdict, judge=judge, reason=reason)


class Guard:
    """One session's guard: its mode (which the person may switch), rules, model judge and the
    approvals the person gave for the rest of the session."""

    def __init__(
        self,
        settings: Settings,
        *,
        interactive: bool = False,
        answerable: bool | None = None,
        mode: str = "",
        judge: ModelJudge | None = None,
    ):
        """`interactive`: the TUI, whose default mode is `ask`; `answerable`: a person can answer
        reviews (the TUI; a headless run on a terminal), by default when interactive; `mode`
        overrides the settings (tests, benchmarks)."""
        self.settings = settings
        self.answerable = interactive if answerable is None else answerable
        self._pending: dict[str, _Pending] = {}
        self._waiting: Counter[str] = Counter()  # agent id -> its calls waiting for the person
        self.mode = mode or effective_approval(settings, interactive)
        if self.mode not in APPROVAL_MODES:
            raise ValueError(f"approval mode must be one of {', '.join(APPROVAL_MODES)}, got {self.mode!r}")
        self.places = Places.of(settings.workspace)
        self.allow: tuple[Rule, ...] = parse_rules(settings.guard_allow, "allow")
        self.review: tuple[Rule, ...] = parse_rules(settings.guard_review, "review")
        self.block: tuple[Rule, ...] = parse_rules(settings.guard_block, "block")
        self.model = judge if judge is not None else ModelJudge.from_settings(settings)
        self.approved_tools: set[str] = set()
        self.approved_commands: set[tuple[str, str]] = set()
        self.denied: dict[tuple[str, str], str] = {}  # (tool, exact command or "") -> the person's reason
        self.mcp: McpManager | None = None  # the session's MCP servers: whose tool a call names

    # --- the person's choices ----------------------------------------------------------------

    def cycle_mode(self) -> str:
        """Switch to the next approval mode (Ctrl+T in the TUI); returns the new mode."""
        self.mode = APPROVAL_CYCLE[(APPROVAL_CYCLE.index(self.mode) + 1) % len(APPROVAL_CYCLE)]
        return self.mode

    def remember(self, call: pb.ToolCall) -> str:
        """Approve this tool (bash and tmux: this exact command) for the rest of the session;
        returns what was approved, in words."""
        if call.name in SHELL_TOOLS:
            self.approved_commands.add(_scope(call))
        else:
            self.approved_tools.add(call.name)
        return _scope_words(call)

    def forbid(self, call: pb.ToolCall, reason: str = "") -> str:
        """Deny this tool (bash and tmux: this exact command) for the rest of the session, every
        later call blocked with the person's reason; returns what was denied, in words."""
        self.denied[_scope(call)] = reason
        return _scope_words(call)

    def _denial(self, call: pb.ToolCall, text: str) -> pb.GuardDecision | None:
        key = (call.name, text if call.name in SHELL_TOOLS else "")
        if key not in self.denied:
            return None
        why = f"their reason: {self.denied[key]}" if self.denied[key] else "no reason given"
        return _decision(BLOCK, "person", f"the person denied {_scope_words(call)} for the rest of the session ({why})")

    # --- judging --------------------------------------------------------------------------------

    def check(self, call: pb.ToolCall) -> pb.GuardDecision:
        """The decision of the mode and the rules (no model): cheap, synchronous."""
        if not self.known(call.name):  # nothing runs: the toolbox answers "unknown tool", in every mode
            return _decision(RECORD, "mode", "not a tool: the call is refused as an unknown tool")
        args = arguments(call)
        text = primary_text(call.name, args, call.arguments)
        if denied := self._denial(call, text):
            return denied
        by_mode = self._by_mode(call.name, args)
        exact = (call.name, text) in self.approved_commands
        if by_mode.verdict == REVIEW:
            if exact or call.name in self.approved_tools:
                by_mode = _decision(RECORD, "person", "approved by the person for this session")
            elif rule := self._allowed(call.name, text):
                by_mode = _decision(RECORD, "rule", f"allowed by the rule {rule.text!r} (guard_allow)")
        by_rule = self._by_rules(call.name, args, text)
        if by_rule is not None and by_rule.verdict == REVIEW and exact:
            by_rule = None  # the person approved this exact command for the session after seeing the rule
        return strictest(by_mode, by_rule)

    async def judge(
        self, call: pb.ToolCall, task: str = "", count_usage: Callable[[pb.Usage], None] = lambda usage: None
    ) -> pb.GuardDecision:
        """Every judge's say on `call`; the model judge is asked about calls that can act, unless
        the mode and rules already block them. Never raises for a judge's failure (fail closed)."""
        try:
            decision = self.check(call)
        except Exception as err:  # a bug of the rules on odd input: fail closed, the run goes on
            log.exception("the guard's rules failed on a %s call", call.name)
            failure = REVIEW if self.settings.guard_failure == "review" else BLOCK
            word = "review" if failure == REVIEW else "block"
            reason = (
                f"the guard's rules failed on this call ({type(err).__name__}: {err}); the guard fails closed: {word}"
            )
            decision = _decision(failure, "rule", reason)
        judged = decision.verdict != BLOCK and self.known(call.name) and self._acting(call)
        if self.model is not None and judged:
            decision = strictest(decision, await self.model.ask(call, task, count_usage))
        decision.call_id = call.id
        decision.call.CopyFrom(call)
        return decision

    def _acting(self, call: pb.ToolCall) -> bool:
        """Whether a call can change something: an MCP tool unless the person marked it read-only."""
        origin = self.mcp.origin(call.name) if self.mcp is not None else None
        if origin is not None:
            return not _marked_read_only(*origin)
        return acting(call.name, arguments(call))

    def known(self, tool: str) -> bool:
        """Is `tool` a tool at all (a registered one, or an MCP server's)?"""
        if tool in REGISTRY or tool in builtin_tools():
            return True
        return self.mcp is not None and self.mcp.origin(tool) is not None

    def _by_mode(self, tool: str, args: dict[str, Any]) -> pb.GuardDecision:
        origin = self.mcp.origin(tool) if self.mcp is not None else None
        if origin is not None:
            return self._mcp_by_mode(tool, *origin)
        if not acting(tool, args):
            return _decision(RECORD, "mode", f"{self.mode} mode: {tool} only reads")
        if self.mode == "read-only":
            return _decision(BLOCK, "mode", f"read-only mode: {tool} can change files, run commands or reach out")
        if self.mode == "ask":
            return _decision(REVIEW, "mode", f"ask mode: {tool} needs the person's approval")
        if tool in SHELL_TOOLS and self.settings.sandbox == "off":
            return _decision(REVIEW, "mode", f"auto mode with the sandbox off: {tool} needs the person's approval")
        where = "in the sandbox" if tool in SHELL_TOOLS else "in the workspace"
        return _decision(RECORD, "mode", f"auto mode: {tool} runs {where}")

    def _mcp_by_mode(self, tool: str, server: McpServer, original: str) -> pb.GuardDecision:
        """An MCP tool: like any tool that acts, unless the person's config marks it read-only (the
        server's own readOnlyHint is shown, never trusted); in auto mode a server without its sandbox
        is reviewed, as bash is with the sandbox off."""
        where = f"MCP server {server.name}"
        if _marked_read_only(server, original):
            return _decision(
                RECORD, "mode", f"{self.mode} mode: {tool} is marked read-only ([mcp.servers.{server.name}])"
            )
        if self.mode == "read-only":
            return _decision(
                BLOCK,
                "mode",
                f"read-only mode: {tool} is a tool of {where}, not marked read-only (read_only in "
                f"[mcp.servers.{server.name}])",
            )
        if self.mode == "ask":
            return _decision(REVIEW, "mode", f"ask mode: {tool} ({where}) needs the person's approval")
        if server.transport == "stdio" and not server.sandboxed:
            return _decision(
                REVIEW, "mode", f'auto mode: {where} runs without its sandbox (sandbox = "off"): {tool} needs review'
            )
        where_it_runs = "in its sandbox" if server.sandboxed else f"at {server.url}"
        return _decision(RECORD, "mode", f"auto mode: {tool} runs {where_it_runs} ({where})")

    def _allowed(self, tool: str, text: str) -> Rule | None:
        rules = [r for r in self.allow if r.matches_tool(tool)]
        if not rules:
            return None
        whole = next((r for r in rules if r.matches(tool, text)), None)
        if tool not in SHELL_TOOLS:
            return whole
        # a command line is allowed only when each of its commands is, and nothing in it is built at run time
        commands = simple_commands(text)
        if not commands or opaque(text):
            return None
        matched = [next((r for r in rules if r.matches(tool, c)), None) for c in commands]
        return matched[0] if all(matched) else None

    def _by_rules(self, tool: str, args: dict[str, Any], text: str) -> pb.GuardDecision | None:
        texts = [text]
        if tool in SHELL_TOOLS and text:
            texts += simple_commands(text)
        if blocked := next((r for r in self.block for t in texts if r.matches(tool, t)), None):
            return _decision(BLOCK, "rule", f"blocked by the rule {blocked.text!r} (guard_block)")
        if builtin := self._builtin(tool, args, text):
            return _decision(REVIEW, "rule", builtin)
        if reviewed := next((r for r in self.review for t in texts if r.matches(tool, t)), None):
            return _decision(REVIEW, "rule", f"the rule {reviewed.text!r} (guard_review) asks for review")
        return None

    def _builtin(self, tool: str, args: dict[str, Any], text: str) -> str:
        if tool in SHELL_TOOLS and text:
            return bash_rule(text, self.places)
        if tool in FILE_WRITERS and isinstance(args.get("path"), str):
            return file_rule(args["path"])
        return ""

    # --- before a call runs -------------------------------------------------------------------------

    async def admit(
        self,
        call: pb.ToolCall,
        *,
        agent_id: str,
        task: str,
        emit: Emit,
        count_usage: Callable[[pb.Usage], None] = lambda usage: None,
        on_status: Callable[[pb.AgentStatus], None] = lambda status: None,
    ) -> pb.ToolResult | None:
        """Judge `call`, record the decision, and wait for the person on a review. None when the
        call may run; else the error result the model gets instead (nothing of the call ran)."""
        decision = await self.judge(call, task, count_usage)
        if decision.verdict == REVIEW:  # what the person is shown travels in the event: no client reads files
            decision.shown = describe_call(call, self.settings.workspace)
        emit(decision)
        if decision.verdict == RECORD:
            return None
        if decision.verdict == BLOCK:
            return refused(
                call,
                f"Blocked by the guard ({decision.judge}): {decision.reason}. The call did not run; "
                "do not repeat it: take another approach, or ask the person.",
            )
        if not self.answerable:
            return refused(call, self.denial(decision))
        answer = await self._wait_for_person(decision, agent_id, on_status)
        emit(answer)
        if answer.approved:
            return None
        why = f": {answer.reason}" if answer.reason else " (no reason given)"
        also = f" They denied {_scope_words(call)} for the rest of the session." if answer.remember else ""
        return refused(call, f"The person denied this call{why}. It did not run; adapt your approach to that.{also}")

    async def ask_person(
        self,
        decision: pb.GuardDecision,
        *,
        agent_id: str,
        emit: Emit,
        on_status: Callable[[pb.AgentStatus], None] = lambda status: None,
    ) -> pb.ReviewDecided | None:
        """A review that no rule asked for (the repeat detector's): record it and wait for the
        person, the same queue and status as the guard's reviews. None when no person can answer."""
        if not self.answerable:
            return None
        decision.shown = decision.shown or describe_call(decision.call, self.settings.workspace)
        emit(decision)
        answer = await self._wait_for_person(decision, agent_id, on_status)
        emit(answer)
        return answer

    async def _wait_for_person(
        self, decision: pb.GuardDecision, agent_id: str, on_status: Callable[[pb.AgentStatus], None]
    ) -> pb.ReviewDecided:
        answer: asyncio.Future[pb.ReviewDecided] = asyncio.get_running_loop().create_future()
        self._pending[decision.call_id] = _Pending(decision, answer)
        self._waiting[agent_id] += 1
        if self._waiting[agent_id] == 1:
            on_status(pb.AGENT_STATUS_AWAITING_APPROVAL)
        try:
            result = await answer
        finally:
            self._pending.pop(decision.call_id, None)
            self._waiting[agent_id] -= 1
        if not self._waiting[agent_id]:  # a cancel does not get here: the run's end sets the status
            on_status(pb.AGENT_STATUS_RUNNING)
        return result

    def pending_reviews(self) -> list[pb.GuardDecision]:
        """The decisions that wait for the person, oldest first."""
        return [p.decision for p in self._pending.values()]

    def decide(self, call_id: str, approve: bool, reason: str = "", remember: bool = False) -> None:
        """The person's answer to a pending review. `remember` approves (or, with a denial, denies)
        this tool, or this exact bash / tmux command, for the rest of the session; other pending
        reviews that this answer now covers are answered the same way with it."""
        pending = self._pending.get(call_id)
        if pending is None or pending.answer.done():
            waiting = ", ".join(self._pending) or "none"
            raise NotWaiting(f"no call {call_id!r} waits for review (waiting: {waiting})")
        remember = remember and pending.decision.judge in SAFETY_JUDGES
        if remember and approve:
            self.remember(pending.decision.call)
        elif remember:
            self.forbid(pending.decision.call, reason)
        pending.answer.set_result(pb.ReviewDecided(call_id=call_id, approved=approve, reason=reason, remember=remember))
        if not remember:
            return
        for other in list(self._pending.values()):
            now = self.check(other.decision.call)
            if approve:
                covered = other.decision.judge in ("mode", "rule") and now.verdict == RECORD
                said = f"approved with call {call_id}"
            else:
                covered, said = now.judge == "person" and now.verdict == BLOCK, f"{now.reason}, with call {call_id}"
            if covered and not other.answer.done():
                other.answer.set_result(pb.ReviewDecided(call_id=other.decision.call_id, approved=approve, reason=said))

    # --- a review no one can answer ----------------------------------------------------------------

    def denial(self, decision: pb.GuardDecision) -> str:
        """The error a reviewed call gets when no person can answer: what would let it run."""
        call = decision.call
        text = primary_text(call.name, arguments(call), call.arguments)
        head = f"Denied without running: {decision.reason}, and no person can approve it here (not a terminal)."
        if decision.judge == "model":
            return f"{head} The model judge (--guard-model) asked for review; run it interactively to approve it."
        if decision.reason.startswith("built-in rule"):
            return f"{head} No setting switches a built-in rule off; approve it yourself in the TUI or on a terminal."
        if decision.judge == "rule":
            return f"{head} Remove that rule from guard_review in your config to let it run."
        example = suggest_rule(call.name, text)
        origin = self.mcp.origin(call.name) if self.mcp is not None else None
        if self.mode == "auto" and origin is not None:
            how = f'give MCP server {origin[0].name} its sandbox (remove sandbox = "off" from its table)'
        elif self.mode == "auto":
            how = 'turn the sandbox on (sandbox = "workspace-write")'
        else:
            how = "run with --approval auto"
        return f"{head} To let it run, {how}, or add the rule {example!r} to guard_allow in your user config."


def _marked_read_only(server: McpServer, tool: str) -> bool:
    """The person's `read_only` globs in the server's table (the server's own hint is never trusted)."""
    return any(fnmatch.fnmatchcase(tool, g) for g in server.read_only)


def suggest_rule(tool: str, text: str) -> str:
    """An allow rule that would let this call run: the exact text, or its first word and a star."""
    exact = "".join(f"[{c}]" if c in "*?[" else c for c in text)
    if not text.strip():
        return f"{tool}:*"
    if tool in SHELL_TOOLS and (len(text) > 60 or "\n" in text):
        return f"{tool}:{exact.split()[0]} *"
    return f"{tool}:{exact}" if len(text) <= 80 else f"{tool}:{exact[:60]}*"


def _scope(call: pb.ToolCall) -> tuple[str, str]:
    """What an answer for the session covers: (tool, "") or, for bash and tmux, (tool, exact command)."""
    if call.name in SHELL_TOOLS:
        return call.name, primary_text(call.name, arguments(call), call.arguments)
    return call.name, ""


def _scope_words(call: pb.ToolCall) -> str:
    return f"this exact {call.name} command" if call.name in SHELL_TOOLS else f"every {call.name} call"


@dataclass
class _Pending:
    decision: pb.GuardDecision
    answer: asyncio.Future[pb.ReviewDecided]


def refused(call: pb.ToolCall, error: str) -> pb.ToolResult:
    """The result of a call that did not run."""
    return pb.ToolResult(call_id=call.id, name=call.name, is_error=True, error=error)
