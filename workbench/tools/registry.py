"""The tool registry: the `tool` decorator, JSON schema from the signature, invocation, output limits.

A tool is `async def name(args..., ctx: ToolContext) -> str | ToolResult`, with type hints and a
docstring whose `Args:` section describes each argument. Nothing else is needed: whatever it
raises becomes an error ToolResult through `feedback.to_result`.
"""

from __future__ import annotations

import asyncio
import difflib
import fnmatch
import importlib
import inspect
import json
import logging
import re
import reprlib
import time
import traceback
import types
import typing
from collections.abc import Awaitable, Callable, Collection, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

from google.protobuf.message import Message

from workbench.config.settings import Settings
from workbench.core.feedback import CONTROL_FLOW, Feedback, cause_text, to_result
from workbench.pb import workbench_pb2 as pb
from workbench.terminal.output_cap import CappedOutput, saved_output_path
from workbench.tools.seams import SubagentHost, TerminalPort, ToolSource

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
    agent_id: str = "main"
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
        return ToolContext(
            **{**self.__dict__, "call_id": call_id, "streamed": [], "call_name": name, "call_args": dict(args or {})}
        )

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
    check_arguments: bool = True  # against `schema` before the call (an MCP server checks its own)


REGISTRY: dict[str, Tool] = {}


def tool(fn: ToolFn | None = None, *, name: str | None = None, read_only: bool = False) -> Any:
    """Register an async tool function; its signature and docstring become its ToolDefinition."""

    def register(f: ToolFn) -> ToolFn:
        tool_name = name or f.__name__
        description, schema = _schema_of(f)
        definition = pb.ToolDefinition(name=tool_name, description=description)
        definition.parameters.update(schema)
        REGISTRY[tool_name] = Tool(tool_name, f, schema, definition, read_only)
        return f

    return register(fn) if fn is not None else register


def unregister(name: str) -> None:
    """Take back a tool `tool` registered (a test's own tools are registered for that test only)."""
    REGISTRY.pop(name, None)


def builtin_tools() -> dict[str, Tool]:
    """The tools Workbench ships: those its built-in modules register, never one registered elsewhere."""
    modules = [f"workbench.tools.{module}" for module in BUILTIN_MODULES]
    for module in modules:
        importlib.import_module(module)
    return {name: t for name, t in REGISTRY.items() if t.fn.__module__ in modules}


# --- schema from the signature ------------------------------------------------------------


def _json_type(hint: Any) -> dict[str, Any]:
    origin = get_origin(hint)
    if origin is Literal:
        values = list(get_args(hint))
        return {"type": "string" if all(isinstance(v, str) for v in values) else "integer", "enum": values}
    if origin in (list, tuple, Iterable) or hint is list:
        (item,) = get_args(hint) or (str,)
        return {"type": "array", "items": _json_type(item)}
    if origin is dict or hint is dict:
        return {"type": "object"}
    simple = {str: "string", int: "integer", float: "number", bool: "boolean"}
    if hint in simple:
        return {"type": simple[hint]}
    raise TypeError(f"unsupported tool argument type {hint!r}")


def _strip_optional(hint: Any) -> tuple[Any, bool]:
    if get_origin(hint) in (typing.Union, types.UnionType):
        args = [a for a in get_args(hint) if a is not type(None)]
        if len(args) == 1:
            return args[0], True
    return hint, False


def _docs(fn: ToolFn) -> tuple[str, dict[str, str]]:
    doc = inspect.getdoc(fn) or ""
    head, _, args_block = doc.partition("\nArgs:\n")
    params: dict[str, str] = {}
    current = ""
    for line in args_block.splitlines():
        m = re.match(r"\s{0,8}(\w+)\s*(?:\([^)]*\))?:\s*(.*)", line)
        if m and not line.startswith(" " * 9):
            current = m.group(1)
            params[current] = m.group(2).strip()
        elif current and line.strip():
            params[current] += " " + line.strip()
    return head.strip(), params


def _schema_of(fn: ToolFn) -> tuple[str, dict[str, Any]]:
    hints = typing.get_type_hints(fn, localns={"ToolContext": ToolContext})
    description, param_docs = _docs(fn)
    properties: dict[str, Any] = {}
    required = []
    for pname, param in inspect.signature(fn).parameters.items():
        if pname == "ctx":
            continue
        hint, optional = _strip_optional(hints[pname])
        prop = _json_type(hint)
        if pname in param_docs:
            prop["description"] = param_docs[pname]
        if param.default is inspect.Parameter.empty and not optional:
            required.append(pname)
        elif param.default not in (inspect.Parameter.empty, None):
            prop["default"] = param.default
        properties[pname] = prop
    schema: dict[str, Any] = {"type": "object", "properties": properties, "required": required}
    schema["additionalProperties"] = False
    return description, schema


# --- argument validation --------------------------------------------------------------------

_PY_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
}


ECHO_CHARS = 200  # a value the model sent is quoted back in an error at most this long
PROBLEMS_SHOWN = 10  # argument problems listed in one error; the rest are counted


def shorten(value: str, limit: int = ECHO_CHARS) -> str:
    """`value` quoted for an error message, cut with a note when it is longer than `limit` characters."""
    if len(value) <= limit:
        return repr(value)
    return f"{value[:limit]!r}… (shortened: {len(value):,} characters)"


def instead_of_unknown(name: str, offered: Iterable[str]) -> str:
    """What to call instead of the tool `name` that is not offered: a close name, or bash for a
    name that is a program's (models call a program as a tool: docs/DECISIONS.md); '' if neither."""
    offered = list(offered)
    close = difflib.get_close_matches(name, offered, n=1, cutoff=0.6)
    if close:
        return f"Did you mean {close[0]}?"
    if "bash" in offered and _PROGRAM.fullmatch(name):
        return f'To run the program {name}, call bash: {{"name": "bash", "arguments": {{"command": "{name} ..."}}}}.'
    return ""


_PROGRAM = re.compile(r"[A-Za-z0-9][\w.+-]{0,40}")
_PREVIEW = reprlib.Repr()
_PREVIEW.maxlevel, _PREVIEW.maxstring, _PREVIEW.maxother, _PREVIEW.maxlist, _PREVIEW.maxdict = 3, 60, 60, 6, 6


def preview(value: Any) -> str:
    """A short, bounded rendering of any argument value (deep nesting and huge values included)."""
    return shorten(value, 60) if isinstance(value, str) else _PREVIEW.repr(value)


def _check(value: Any, spec: dict[str, Any], where: str) -> tuple[Any, list[str]]:
    kind = spec.get("type", "string")
    if kind == "integer" and isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) and kind in ("integer", "number"):
        return value, [f"{where} must be {kind}, got boolean"]
    if not isinstance(value, _PY_TYPES[kind]):
        return value, [f"{where} must be {kind}, got {type(value).__name__} {preview(value)}"]
    if "enum" in spec and value not in spec["enum"]:
        return value, [f"{where} must be one of {', '.join(map(str, spec['enum']))}, got {preview(value)}"]
    if kind == "array":
        checked: list[Any] = []
        problems: list[str] = []
        for i, item in enumerate(typing.cast(list[Any], value)):
            item, errs = _check(item, spec.get("items", {}), f"{where}[{i}]")
            checked.append(item)
            problems += errs
        return checked, problems
    return value, []


def validate(args: dict[str, Any], schema: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Check arguments against a tool's schema; return them (ints coerced) and the problems."""
    props = schema["properties"]
    problems = [f"missing required argument {name!r}" for name in schema["required"] if name not in args]
    problems += [f"unknown argument {shorten(name, 80)}" for name in args if name not in props]
    clean = {}
    for name, value in args.items():
        if name in props:
            if value is None and name not in schema["required"]:
                continue
            clean[name], errs = _check(value, props[name], f"argument {name!r}")
            problems += errs
    return clean, problems


# --- invocation ---------------------------------------------------------------------------


class BadArguments(ValueError):
    """A call's arguments that are not one JSON object; the message says why, for the model."""


def parse_arguments(text: str) -> dict[str, Any]:
    """A call's JSON arguments as a dict ({} for none), or BadArguments: not JSON, nested too
    deeply to read (json.loads raises RecursionError there, not a ValueError), not an object.
    Everything that reads a model's arguments uses this, so no hostile text can raise past it."""
    try:
        args = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as err:
        raise BadArguments(f"arguments are not valid JSON ({err})") from err
    except RecursionError as err:
        raise BadArguments(
            "argument nesting too deep: the arguments hold arrays or objects nested inside each other "
            "beyond what can be read"
        ) from err
    if not isinstance(args, dict):
        raise BadArguments(f"arguments must be a JSON object, not {type(args).__name__}")
    return args


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

    async def _invoke(self, call: pb.ToolCall, ctx: ToolContext) -> pb.ToolResult:
        tools = self.tools
        found = tools.get(call.name)
        if found is None and self.dynamic is not None and (gone := self.dynamic.missing(call.name)):
            return _error(call, gone)
        if found is None:
            instead = instead_of_unknown(call.name, tools)
            return _error(
                call,
                f"unknown tool {shorten(call.name, 80)}; available tools: {', '.join(tools) or '(none)'}"
                + (f". {instead}" if instead else ""),
            )
        try:
            args = parse_arguments(call.arguments)
        except BadArguments as err:
            return _error(call, f"{err}; send one JSON object matching the schema {self.schema_text(call.name)}")
        args, problems = validate(args, found.schema) if found.check_arguments else (args, [])
        if problems:
            more = len(problems) - PROBLEMS_SHOWN
            listed = "; ".join(problems[:PROBLEMS_SHOWN]) + (f"; and {more:,} more problems" if more > 0 else "")
            return _error(call, f"invalid arguments: {listed}. Expected the schema {self.schema_text(call.name)}")
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
    "BadArguments",
    "Tool",
    "ToolContext",
    "Toolbox",
    "bare_error",
    "builtin_tools",
    "limit_error",
    "limit_output",
    "parse_arguments",
    "preview",
    "shorten",
    "tool",
    "validate",
]
