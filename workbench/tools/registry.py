"""The tool registry: the `tool` decorator, the Toolbox of one agent, invocation, output limits.

A tool is `async def name(args..., ctx: ToolContext) -> str | ToolResult`, with type hints and a
docstring whose `Args:` section describes each argument. Nothing else is needed: whatever it
raises becomes an error ToolResult through `feedback.to_result`. The signature is the one
declaration: `tools/tool_schema.py` makes it a pydantic model, from which come the schema and the
check of the arguments (`tools/arguments.py` reads them and words the problems).
"""

from __future__ import annotations

import asyncio
import dataclasses
import fnmatch
import importlib
import json
import logging
import re
import time
import traceback
from collections.abc import Awaitable, Callable, Collection, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from google.protobuf.message import Message
from pydantic import BaseModel

from workbench.config.settings import Settings
from workbench.core.feedback import CONTROL_FLOW, Feedback, cause_text, to_result
from workbench.core.words import ROOT_ID
from workbench.pb import workbench_pb2 as pb
from workbench.terminal.output_cap import CappedOutput, saved_output_path
from workbench.tools.arguments import (
    PROBLEMS_SHOWN,
    BadArguments,
    instead_of_unknown,
    parse_arguments,
    shorten,
    validate,
)
from workbench.tools.seams import SubagentHost, TerminalPort, ToolSource
from workbench.tools.tool_schema import declare

log = logging.getLogger("workbench")

# Modules whose tools register themselves on import; imported by `builtin_tools()`.
BUILTIN_MODULES = (
    "files.read_write",
    "files.edit",
    "files.listing",
    "files.grep",
    "web.search",
    "web.fetch",
    "skills",
    "shell",
    "tmux",
    "subagent",
)

CALL_SHOWN_CHARS = 300  # a corrected call longer than this is described, not written out

ToolFn = Callable[..., Awaitable["str | pb.ToolResult"]]


@dataclass
class ToolContext:
    """What a tool may use. One per agent; `for_call` makes the per-call copy `invoke` passes."""

    workspace: Path
    settings: Settings
    session_dir: Path  # this session's folder; saved outputs live in `outputs/`
    agent_id: str = ROOT_ID
    call_id: str = ""
    # streamed output: (call_id, text) to the event log; `emit` also keeps it as partial output
    on_output: Callable[[str, str], None] = lambda call_id, text: None
    # publish an event of this agent: publish(pb.Defect(...)) (Recorder.emit)
    publish: Callable[[Message], object] = lambda message: None
    state: dict[str, Any] = field(default_factory=dict)  # per-agent bookkeeping of tools
    terminal: TerminalPort | None = None  # the session's terminal host (workbench.terminal.host)
    agents: SubagentHost | None = None  # the agent tree's handle for the subagent tool
    streamed: list[str] = field(default_factory=list)
    call_name: str = ""  # the tool this copy runs, and its checked arguments (a hint's corrected call)
    call_args: dict[str, Any] = field(default_factory=dict)

    def for_call(self, call_id: str, name: str = "", args: dict[str, Any] | None = None) -> ToolContext:
        return dataclasses.replace(self, call_id=call_id, streamed=[], call_name=name, call_args=dict(args or {}))

    def call_with(self, **changed: Any) -> str:
        """This call written out with some arguments changed, ready to send again:
        `read_file(path="config/app.toml")`; for a call too long to repeat (an edit's texts),
        `the same edit_file call with path="auth.go"`."""

        def written(args: dict[str, Any]) -> str:
            return ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in args.items())

        whole = f"{self.call_name}({written({**self.call_args, **changed})})"
        return whole if len(whole) <= CALL_SHOWN_CHARS else f"the same {self.call_name} call with {written(changed)}"

    def emit(self, text: str) -> None:
        """Stream output while the tool runs; kept as partial output if the tool then fails."""
        if text:
            self.streamed.append(text)
            self.on_output(self.call_id, text)

    @property
    def outputs_dir(self) -> Path:
        return self.session_dir / "outputs"


@dataclass(frozen=True)
class Tool:
    name: str
    fn: ToolFn
    schema: dict[str, Any]
    definition: pb.ToolDefinition
    read_only: bool
    # the pydantic model the arguments are checked with before the call (tool_schema.declare);
    # None for an MCP server's tool: the server checks its own
    arguments: type[BaseModel] | None = None
    # the tool's own checks, nothing changed: raises the Feedback a call would fail with (check_of)
    check: Callable[..., Awaitable[None]] | None = None


REGISTRY: dict[str, Tool] = {}


def declared_tool(
    f: ToolFn, name: str, *, read_only: bool, description: str = "", hints: dict[str, Any] | None = None
) -> Tool:
    """The Tool an async function declares: its schema and argument check from its signature and
    docstring (`tool_schema.declare`). `description` replaces the docstring's head, `hints` the types
    of some arguments (both for a tool made at run time: an MCP lister's server names)."""
    declared = declare(f, {"ToolContext": ToolContext}, hints)
    definition = pb.ToolDefinition(name=name, description=description or declared.description)
    definition.parameters.update(declared.schema)
    return Tool(name, f, declared.schema, definition, read_only, declared.arguments)


def tool(fn: ToolFn | None = None, *, name: str | None = None, read_only: bool = False) -> Any:
    """Register an async tool function; its signature and docstring become its ToolDefinition."""

    def register(f: ToolFn) -> ToolFn:
        tool_name = name or f.__name__
        REGISTRY[tool_name] = declared_tool(f, tool_name, read_only=read_only)
        return f

    return register(fn) if fn is not None else register


def check_of(registered: ToolFn) -> Callable[[Callable[..., Awaitable[None]]], Callable[..., Awaitable[None]]]:
    """Register a tool's own checks (the tool's arguments and ctx; raises the Feedback the call would
    fail with, changes nothing): a call that can only fail is told so before the guard reviews it."""

    def register(check: Callable[..., Awaitable[None]]) -> Callable[..., Awaitable[None]]:
        name = next(n for n, t in REGISTRY.items() if t.fn is registered)
        REGISTRY[name] = dataclasses.replace(REGISTRY[name], check=check)
        return check

    return register


def unregister(name: str) -> None:
    """Take back a tool `tool` registered (a test's own tools are registered for that test only)."""
    REGISTRY.pop(name, None)


def builtin_tools() -> dict[str, Tool]:
    """The tools Workbench ships: those its built-in modules register, never one registered elsewhere."""
    modules = [f"workbench.tools.{module}" for module in BUILTIN_MODULES]
    for module in modules:
        importlib.import_module(module)
    return {name: t for name, t in REGISTRY.items() if t.fn.__module__ in modules}


# --- invocation ---------------------------------------------------------------------------


def _error(call: pb.ToolCall, message: str) -> pb.ToolResult:
    return pb.ToolResult(call_id=call.id, name=call.name, error=message, is_error=True)


def record_defect(ctx: ToolContext, where: str, err: BaseException) -> None:
    """A non-Feedback exception: an event with its traceback, and the log file."""
    tb = "".join(traceback.format_exception(err))
    ctx.publish(
        pb.Defect(where=where, call_id=ctx.call_id, error_type=type(err).__name__, message=str(err), traceback=tb)
    )
    log.error("defect in %s (call %s, agent %s):\n%s", where, ctx.call_id, ctx.agent_id, tb)


DYNAMIC_MARK = "__"  # names of tools that come and go (an MCP server's: `github__create_issue`)


def is_dynamic(selector: str) -> bool:
    """Whether a tool name or glob selects tools of a ToolSource (`github__*`), not a built-in."""
    return DYNAMIC_MARK in selector


def covered(selector: str, allowed: Iterable[str]) -> bool:
    """Whether a child's tool name or glob is within its parent's list (names and globs)."""
    return any(selector == a or (is_dynamic(a) and fnmatch.fnmatchcase(selector, a)) for a in allowed)


class ChangingTools(Collection[str]):
    """A Toolbox's tools that are not read-only, read anew at each question (MCP tools come and go)."""

    def __init__(self, box: Toolbox):
        self.box = box

    def __contains__(self, name: object) -> bool:
        found = self.box.tools.get(name) if isinstance(name, str) else None
        return found is not None and not found.read_only

    def __iter__(self) -> Iterator[str]:
        return iter([n for n, t in self.box.tools.items() if not t.read_only])

    def __len__(self) -> int:
        return sum(1 for _ in self)


class Toolbox:
    """The tools one agent may call: built-ins by name, and the tools of `dynamic` (the session's
    MCP servers) that its selectors name (`github__*`), as they are at each turn."""

    def __init__(self, names: Iterable[str] | None = None, dynamic: ToolSource | None = None):
        """`names` of registered tools (and globs of `dynamic`'s tools: `github__*`), or None for the
        built-in ones."""
        builtin = builtin_tools()
        available = builtin if names is None else REGISTRY
        wanted = list(available) if names is None else list(names)
        unknown = [n for n in wanted if n not in available and not is_dynamic(n)]
        if unknown:
            raise ValueError(f"unknown tool(s) {', '.join(unknown)}; available: {', '.join(sorted(available))}")
        self.builtin = {n: available[n] for n in wanted if n in available}
        self.selectors = [n for n in wanted if n not in available]
        self.dynamic = dynamic

    @property
    def tools(self) -> dict[str, Tool]:
        """The tools offered now: the built-ins, then the dynamic tools the selectors match."""
        if self.dynamic is None or not self.selectors:
            return self.builtin
        found = {
            name: t
            for name, t in self.dynamic.tools().items()
            if any(fnmatch.fnmatchcase(name, s) for s in self.selectors)
        }
        return {**self.builtin, **found}

    def missing(self, name: str) -> str:
        """Why the dynamic source's tool `name` is not offered ('' if it is no tool of the source's)."""
        return self.dynamic.missing(name) if self.dynamic is not None and name else ""

    async def settle(self) -> list[str]:
        """Before a model request: the dynamic source's tools that are about to arrive, waited for."""
        return await self.dynamic.settle() if self.dynamic is not None and self.selectors else []

    def changing(self) -> ChangingTools:
        """The names of the tools that may change something, as offered at each turn (for repeats)."""
        return ChangingTools(self)

    def definitions(self) -> list[pb.ToolDefinition]:
        return [t.definition for t in self.tools.values()]

    def schema_text(self, name: str) -> str:
        return json.dumps(self.tools[name].schema, separators=(",", ":"))

    async def invoke(self, call: pb.ToolCall, ctx: ToolContext) -> pb.ToolResult:
        """Run one call; every outcome, bad arguments included, is a ToolResult."""
        result = await self._invoke(call, ctx)
        if result.is_error and not ctx.settings.recovery_hints:
            result.error = bare_error(result.error)
        limit_error(result, ctx.settings.output_limit)
        return result

    async def check(self, call: pb.ToolCall, ctx: ToolContext) -> pb.ToolResult | None:
        """The call's own checks before anything judges or runs it: an unknown tool, arguments that
        do not fit its schema, the tool's `check` (edit_file's old_text not in the file). The result
        the call would end with, or None when it may run."""
        prepared = self._prepare(call)
        if isinstance(prepared, pb.ToolResult):
            result = prepared
        else:
            found, args = prepared
            if found.check is None:
                return None
            try:
                await found.check(**args, ctx=ctx.for_call(call.id, call.name, args))
                return None
            except Feedback as err:
                result = to_result(call, err)
            except Exception as err:  # a defect of the check: the call goes on (the tool says what is wrong)
                log.warning("the check of %s failed: %r", call.name, err)
                return None
        if not ctx.settings.recovery_hints:
            result.error = bare_error(result.error)
        limit_error(result, ctx.settings.output_limit)
        return result

    def _prepare(self, call: pb.ToolCall) -> tuple[Tool, dict[str, Any]] | pb.ToolResult:
        """The tool and its checked arguments, or the error result of an unknown tool or bad arguments."""
        tools = self.tools
        found = tools.get(call.name)
        if found is None and self.dynamic is not None and (gone := self.dynamic.missing(call.name)):
            return _error(call, gone)
        if found is None:
            instead = instead_of_unknown(call.name, tools, call.arguments)
            return _error(
                call,
                f"unknown tool {shorten(call.name, 80)}; available tools: {', '.join(tools) or '(none)'}"
                + (f". {instead}" if instead else ""),
            )
        try:
            args = parse_arguments(call.arguments)
        except BadArguments as err:
            return _error(call, f"{err}; send one JSON object matching the schema {self.schema_text(call.name)}")
        args, problems = validate(args, found.arguments, found.schema) if found.arguments else (args, [])
        if problems:
            more = len(problems) - PROBLEMS_SHOWN
            listed = "; ".join(problems[:PROBLEMS_SHOWN]) + (f"; and {more:,} more problems" if more > 0 else "")
            return _error(call, f"invalid arguments: {listed}. Expected the schema {self.schema_text(call.name)}")
        return found, args

    async def _invoke(self, call: pb.ToolCall, ctx: ToolContext) -> pb.ToolResult:
        prepared = self._prepare(call)
        if isinstance(prepared, pb.ToolResult):
            return prepared
        found, args = prepared
        call_ctx = ctx.for_call(call.id, call.name, args)
        started = time.monotonic()
        outcome: str | pb.ToolResult | BaseException
        try:
            outcome = await found.fn(**args, ctx=call_ctx)
        except CONTROL_FLOW as err:
            task = asyncio.current_task()
            if not isinstance(err, asyncio.CancelledError) or (task is not None and task.cancelling()):
                raise  # the run is cancelled (or the interpreter exits): the loop records the call
            # a tool's own stray CancelledError (not a cancel of this run): its failure
            outcome = pb.ToolResult(is_error=True, error=cause_text(err, call.name) or "the call was cancelled")
            record_defect(call_ctx, call.name, err)
        except BaseException as err:  # Feedback, any other Exception, a bare BaseException: a result
            outcome = err
            if not isinstance(err, Feedback):
                record_defect(call_ctx, call.name, err)
        result = to_result(call, outcome, streamed="".join(call_ctx.streamed), duration=time.monotonic() - started)
        limit_output(result, ctx.settings.output_limit, ctx.outputs_dir, ctx.settings.saved_output_cap)
        return result


_SENTENCE_END = re.compile(r"[.;?!](?:\s|$)")


def bare_error(error: str) -> str:
    """An error without its recovery hint: its first sentence or clause ("x does not exist; did you mean y?" ->
    "x does not exist"). Used when the `recovery_hints` setting is off, to measure what hints are worth."""
    end = _SENTENCE_END.search(error)
    return error[: end.start()] if end else error


def limit_error(result: pb.ToolResult, limit: int) -> None:
    """Hold the error text to the output limit too: cut its middle with a note (it often quotes the model)."""
    text = result.error
    if not limit or len(text) <= limit:
        return
    half = max(limit // 2 - 100, 50)
    note = f"\n[... {len(text) - 2 * half:,} characters of this error cut from the middle ...]\n"
    result.error = text[:half] + note + text[-half:]
    result.metadata["original_error_chars"] = len(text)


def limit_output(result: pb.ToolResult, limit: int, folder: Path, saved_cap: int = 0) -> None:
    """Cut an oversized output head and tail with a note; save the whole text in `folder`.

    A result already cut by its tool (bash streams through `CappedOutput` itself) is left alone.
    """
    if not limit or len(result.output) <= limit or "saved_output" in result.metadata:
        return
    capped = CappedOutput(limit, saved_output_path(folder, result.call_id), saved_cap)
    capped.add(result.output)
    result.output, meta = capped.finish()
    result.metadata.update(meta)


__all__ = [
    "REGISTRY",
    "Tool",
    "ToolContext",
    "Toolbox",
    "bare_error",
    "builtin_tools",
    "declared_tool",
    "limit_error",
    "limit_output",
    "tool",
]
