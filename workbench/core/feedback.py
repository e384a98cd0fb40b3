"""Feedback, and the ONE function that turns a tool's outcome into a ToolResult.

A tool returns a str or a ToolResult, or raises. Whatever it raises (except cancellation and
interpreter exits) becomes an error ToolResult the model reads: the output the tool streamed
before failing, then one line `Error: <cause>`. `Feedback` carries a message written for the
model, kept apart from the underlying cause (`raise Feedback("...") from err`).
"""

from __future__ import annotations

import asyncio

from workbench.pb import workbench_pb2 as pb

# What ends a tool's work without being its failure: these pass through `to_result`.
CONTROL_FLOW: tuple[type[BaseException], ...] = (asyncio.CancelledError, KeyboardInterrupt, SystemExit, GeneratorExit)
INTERRUPTED = "interrupted: the run was cancelled before this call finished"


class Feedback(Exception):
    """A tool failure explained for the model: what went wrong and what to do next."""

    def __init__(self, message: str = "", *, output: str = "", metadata: dict[str, object] | None = None):
        super().__init__(message)
        self.message = message
        self.output = output  # output produced before the failure, beside what was streamed
        self.metadata = metadata or {}


def cause_text(err: BaseException, tool_name: str) -> str:
    """The one-line cause the model sees; Feedback's own message first, then its cause's."""
    message = err.message if isinstance(err, Feedback) else str(err)
    if not message.strip() and err.__cause__ is not None:
        inner = err.__cause__
        message = str(inner) or type(inner).__name__
    if not message.strip():
        message = f"{tool_name} failed" if isinstance(err, Feedback) else f"{type(err).__name__} in {tool_name}"
    return message.strip()


def to_result(
    call: pb.ToolCall,
    outcome: str | pb.ToolResult | BaseException,
    *,
    streamed: str = "",
    duration: float = 0.0,
) -> pb.ToolResult:
    """Turn what a tool produced (a value or a raised exception) into the call's ToolResult.

    `streamed` is what the tool emitted through `ctx.emit` before it returned or raised; it is
    the output when the tool returned nothing else, and kept as partial output on failure.
    Cancellation and interpreter exits are re-raised, never turned into feedback; any other
    BaseException a tool raises is its failure like an Exception.
    """
    if isinstance(outcome, CONTROL_FLOW):
        raise outcome
    result = pb.ToolResult(call_id=call.id, name=call.name, duration=duration)
    if isinstance(outcome, BaseException):
        extra = outcome.output if isinstance(outcome, Feedback) else ""
        result.output = _join(streamed, extra)
        result.error = cause_text(outcome, call.name)
        result.is_error = True
        if isinstance(outcome, Feedback) and outcome.metadata:
            result.metadata.update(outcome.metadata)
    elif isinstance(outcome, pb.ToolResult):
        result.CopyFrom(outcome)
        result.call_id, result.name, result.duration = call.id, call.name, duration
        if not result.output and streamed:
            result.output = streamed
        result.is_error = result.is_error or bool(result.error)
    else:
        result.output = outcome if outcome else streamed
    return result


def interrupted(call: pb.ToolCall, why: str = INTERRUPTED, *, partial: str = "") -> pb.ToolResult:
    """The synthetic result of a call that never finished: the run was cancelled, or the process died."""
    return pb.ToolResult(call_id=call.id, name=call.name, is_error=True, error=why, output=partial)


def machinery_bug(call: pb.ToolCall, err: BaseException) -> pb.ToolResult:
    """The result of a call whose failure was inside Workbench, not the tool: still one result."""
    return pb.ToolResult(
        call_id=call.id,
        name=call.name,
        is_error=True,
        error=f"the call failed inside workbench: {type(err).__name__}: {err}",
    )


def model_text(result: pb.ToolResult) -> str:
    """What the model reads for a result: the output, then `Error: <cause>`, then notes; each once."""
    parts = []
    if result.output:
        parts.append(result.output.rstrip("\n"))
    if result.is_error:
        parts.append(f"Error: {result.error or f'{result.name} failed'}")
    parts.extend(result.notes)
    return "\n".join(parts) if parts else "(no output)"


def _join(first: str, second: str) -> str:
    if not first or not second:
        return first or second
    return first if second in first else f"{first.rstrip()}\n{second}"
