"""The bash tool: the agent's commands, run on the session's TerminalHost (tmux.py drives programs)."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import math
import os
import signal
from pathlib import Path
from typing import Any

from workbench.core.feedback import Feedback
from workbench.pb import workbench_pb2 as pb
from workbench.terminal.host import TerminalHost
from workbench.terminal.output_cap import CappedOutput, saved_output_path
from workbench.terminal.shell_env import missing_secret_hint
from workbench.terminal.tmux_control import ServerGone, ServerStalled
from workbench.tools import in_place
from workbench.tools.code_refs import pointers
from workbench.tools.not_found import close_commands, missing_command
from workbench.tools.registry import ToolContext, ToolFn, tool


def host_of(ctx: ToolContext) -> TerminalHost:
    host = ctx.terminal
    if not isinstance(host, TerminalHost):
        raise RuntimeError("bash and tmux need the session's TerminalHost in ctx.terminal")
    host.sandbox.configure(ctx.settings, ctx.workspace)
    return host


def seconds_of(timeout: float | None, default: float) -> float:
    """A timeout argument: a positive, finite number of seconds (NaN would never time out)."""
    limit = timeout if timeout is not None else default
    if not (0 < limit < math.inf):
        raise Feedback(f"timeout must be a positive number of seconds, got {limit:g}")
    return limit


def check_text(**values: str | None) -> None:
    """Arguments become files and tmux arguments: a lone surrogate (half an emoji) is no text,
    and a NUL ends a string for tmux and the shell."""
    for name, value in values.items():
        try:
            (value or "").encode()
        except UnicodeEncodeError as err:
            raise Feedback(
                f"{name} contains {err.object[err.start]!r} at position {err.start}, a lone UTF-16 "
                "surrogate that is not valid text; remove it or write the whole character"
            ) from err
        if value and "\x00" in value:
            raise Feedback(f"{name} contains a NUL character; remove it")


SILENT_SUCCESS = "The command succeeded (exit code 0) and printed nothing."


def _status_text(status: int, close: list[str] | None = None) -> str:
    if status == 127 and close:
        others = f" (also close: {', '.join(close[1:])})" if close[1:] else ""
        return (
            f"exit code 127: command not found. Did you mean `{close[0]}`?{others} "
            "Check the spelling, or run `command -v NAME`."
        )
    if status == 127:
        return (
            "exit code 127: command not found. Check the spelling and PATH (`command -v NAME`), "
            "use the full path, or install the program."
        )
    if status == 126:
        return (
            "exit code 126: found but not executable (permission denied?). Check it with `ls -l`, "
            "`chmod +x` it, or run it through its interpreter (bash x.sh, python3 x.py)."
        )
    if status == 130:
        return "exit code 130: interrupted (SIGINT)"
    if status > 128:
        with contextlib.suppress(ValueError):
            return f"exit code {status}: killed by {signal.Signals(status - 128).name}"
    return f"exit code {status}"


@tool
async def bash(
    command: str,
    ctx: ToolContext,
    timeout: float | None = None,
) -> str | pb.ToolResult:
    """Run a bash command in your persistent shell (cd and exported variables carry over; set -e
    lasts for one call).

    stdout and stderr come back interleaved; a non-zero exit status is an error. Stdin is a
    terminal nobody types into: a command that waits for input runs into the timeout, so use
    the tmux tool for interactive programs, REPLs and long-running servers. Output goes to a
    file, so programs that buffer it show nothing until they exit (Python does not buffer
    here); for line-buffered output from others use `stdbuf -oL CMD` or the program's option.

    Args:
        command: the bash command line or script
        timeout: seconds to wait before giving up (default 120); the command then keeps
            running in a tmux window you can inspect or stop with the tmux tool
    """
    if not command.strip():
        raise Feedback("command is empty; pass the shell command to run")
    check_text(command=command)
    limit = seconds_of(timeout, ctx.settings.bash_timeout)
    host = host_of(ctx)
    settings = ctx.settings
    started_in = host.agent(ctx.agent_id).cwd  # the line may cd: failures read the end
    edits = in_place.edits(command, Path(started_in) if started_in else ctx.workspace, ctx.workspace)
    before = await asyncio.to_thread(in_place.digests, edits) if edits else []
    output = CappedOutput(
        settings.output_limit,
        saved_output_path(ctx.outputs_dir, ctx.call_id),
        settings.saved_output_cap,
        publish=lambda text: ctx.on_output(ctx.call_id, text),
        event_cap=settings.output_event_cap,
    )
    try:
        status, notes = await host.run(ctx.agent_id, command, workspace=ctx.workspace, timeout=limit, sink=output)
    except Feedback as err:  # the output so far goes with the failure
        err.output, cut = output.finish()
        err.metadata.update(cut)
        raise
    except BaseException:  # cancelled
        output.close()
        raise
    text, cut = output.finish()
    if status != 0:
        close = await asyncio.to_thread(close_commands, missing_command(text)) if status == 127 else []
        metadata = {"exit_code": status, "window": "bash", **cut}
        hint = host.sandbox.refusal_hint(text, host.dir, host.agent(ctx.agent_id).cwd, command)
        secret = missing_secret_hint(text, os.environ, host.env_passthrough)
        cwd = host.agent(ctx.agent_id).cwd
        code = await asyncio.to_thread(pointers, text, ctx.workspace, Path(cwd) if cwd else None)
        notes = [*(h for h in (hint, secret) if h), *code, *notes]
        raise Feedback("; ".join([_status_text(status, close), *notes]), output=text, metadata=metadata)
    same = await asyncio.to_thread(in_place.unchanged, edits, before) if edits else []
    if same:
        notes = [*notes, in_place.note(same, ctx.workspace)]
    if not text.strip():
        notes = [SILENT_SUCCESS, *notes]  # a small model read an empty output as a failure (issue 38)
    if not notes and not cut:
        return text  # the common case: no copy through a ToolResult
    result = pb.ToolResult(output=text, notes=notes)
    result.metadata.update(cut)
    if same and len(same) == len(edits) and in_place.only_edits(command):
        result.metadata["changed_nothing"] = True  # the engine's checks: no change made
    return result


# --- tmux ------------------------------------------------------------------------------------


def server_loss_is_feedback(fn: ToolFn) -> ToolFn:
    """A tmux server that went away (or stalled and was killed) is told to the model."""

    @functools.wraps(fn)
    async def wrapper(*args: Any, **kwargs: Any) -> str | pb.ToolResult:
        try:
            return await fn(*args, **kwargs)
        except ServerStalled as err:
            raise Feedback(str(err)) from err
        except ServerGone as err:
            raise Feedback(
                "the tmux server stopped (killed from outside?); the next call starts a fresh tmux server "
                "(earlier windows and shell variables are gone)"
            ) from err

    return wrapper


__all__ = ["bash"]
