"""The bash and tmux tools: the agent's commands and programs, run on the session's TerminalHost."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import math
import os
import re
import shlex
import signal
import time
from typing import Any, Literal

from workbench.core.feedback import Feedback
from workbench.pb import workbench_pb2 as pb
from workbench.terminal.host import TerminalHost, Window, start_dir
from workbench.terminal.output_cap import CappedOutput, saved_output_path
from workbench.terminal.sandbox import PlantedFile, open_untrusted
from workbench.terminal.shell_env import missing_secret_hint
from workbench.terminal.tmux_control import ServerGone, ServerStalled, TmuxError
from workbench.tools.not_found import close_commands, missing_command
from workbench.tools.registry import ToolContext, ToolFn, tool

WAIT_POLL = 0.1  # seconds between screen checks of tmux(action="wait")
RESERVED = re.compile(r"^bash(-\d+)?$")
WINDOW_NAME = re.compile(r"^[A-Za-z0-9_.+-]{1,40}$")
DEAD_SCREEN_LINES = 50  # what capture shows of a program that ended (the default window height)
TAIL_BYTES = 1 << 20  # what capture and wait read of a detached command's output
DEAD_BANNER = re.compile(r"^Pane is dead \((status \d+|signal \d+)?[^)]*\)\s*$")


def host_of(ctx: ToolContext) -> TerminalHost:
    host = ctx.terminal
    if not isinstance(host, TerminalHost):
        raise RuntimeError("bash and tmux need the session's TerminalHost in ctx.terminal")
    host.sandbox.configure(ctx.settings, ctx.workspace)
    return host


def _seconds(timeout: float | None, default: float) -> float:
    """A timeout argument: a positive, finite number of seconds (NaN would never time out)."""
    limit = timeout if timeout is not None else default
    if not (0 < limit < math.inf):
        raise Feedback(f"timeout must be a positive number of seconds, got {limit:g}")
    return limit


def _check_text(**values: str | None) -> None:
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
    _check_text(command=command)
    limit = _seconds(timeout, ctx.settings.bash_timeout)
    host = host_of(ctx)
    settings = ctx.settings
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
        hint = host.sandbox.refusal_hint(text, host.dir, host.agent(ctx.agent_id).cwd)
        secret = missing_secret_hint(text, os.environ, host.env_passthrough)
        notes = [*(h for h in (hint, secret) if h), *notes]
        raise Feedback("; ".join([_status_text(status, close), *notes]), output=text, metadata=metadata)
    if not notes and not cut:
        return text  # the common case: no copy through a ToolResult
    result = pb.ToolResult(output=text, notes=notes)
    result.metadata.update(cut)
    return result


# --- tmux ------------------------------------------------------------------------------------


def _send_args(window_id: str, text: str | None, keys: str | None) -> list[list[str]]:
    commands = []
    if text:
        for i, part in enumerate(text.split("\n")):
            if i:
                commands.append(["send-keys", "-t", window_id, "Enter"])
            if part:
                commands.append(["send-keys", "-t", window_id, "-l", "--", part])
    if keys:
        commands.append(["send-keys", "-t", window_id, *keys.split()])
    return commands


def _tail(text: str, lines: int) -> str:
    rows = text.rstrip("\n").split("\n")
    return "\n".join(rows[-lines:])


async def _screen(host: TerminalHost, w: Window, lines: int | None, strip: bool = True) -> str:
    """The pane's text (wrapped lines joined); trailing spaces kept for matching when not `strip`."""
    args = ["capture-pane", "-p", "-J", "-t", w.window_id]
    if lines:
        args += ["-S", f"-{lines}"]
    rows = [row.rstrip() if strip else row for row in await host.tmux(*args)]
    while rows and not rows[-1].strip():
        rows.pop()
    if rows and DEAD_BANNER.match(rows[-1]):  # tmux's note under a program that ended (remain-on-exit)
        if not lines:  # the note scrolled the program's last lines off the screen: a screenful back
            return await _screen(host, w, DEAD_SCREEN_LINES, strip)
        rows.pop()
        while rows and not rows[-1].strip():
            rows.pop()
    return "\n".join(rows[-lines:] if lines else rows)


def _rstrip_lines(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.split("\n"))


def _bash_output(w: Window) -> str:
    """The end of a detached command's output file (its last TAIL_BYTES: it may be huge)."""
    assert w.output is not None
    try:
        with os.fdopen(open_untrusted(w.output, os.O_RDONLY), "rb") as fh:  # not through a planted link
            size = fh.seek(0, 2)
            fh.seek(max(0, size - TAIL_BYTES))
            data = fh.read(TAIL_BYTES)
    except (FileNotFoundError, PlantedFile):
        return ""
    if size > TAIL_BYTES:  # start at a whole line
        data = data.partition(b"\n")[2]
    return data.decode(errors="replace")


def _bash_end(w: Window, info: dict[str, tuple[bool, int, str]]) -> int | None:
    """A detached bash window's exit status: its shell's report, else its dead pane's; None while it runs."""
    if w.run is not None and w.run.done() and not w.run.exception():
        return w.run.result().status
    dead, status, _ = info.get(w.window_id, (True, 0, ""))
    return status if dead else None  # the shell ended without a report (exec, killed)


async def _describe(host: TerminalHost, w: Window, info: dict[str, tuple[bool, int, str]]) -> str:
    dead, status, current = info.get(w.window_id, (True, 0, ""))
    if w.run is not None:
        end = _bash_end(w, info)
        if end is not None:
            return f"{w.name}\ttimed-out bash command, since exited with code {end}"
        return f"{w.name}\ttimed-out bash command, still running"
    if dead:
        return f"{w.name}\texited with code {status}: {w.command}"
    return f"{w.name}\trunning {current or w.command}"


async def _capture(host: TerminalHost, w: Window, lines: int | None) -> str:
    if w.output is None:
        return await _screen(host, w, lines) or "(the screen is empty)"
    text = _tail(_bash_output(w), lines or 50)
    state = "still running"
    if w.run is not None and w.run.done() and not w.run.exception():
        state = f"exited with code {w.run.result().status}"
    return f"{text}\n[output of the timed-out bash command ({state}); last {lines or 50} lines]"


async def _wait(host: TerminalHost, w: Window, pattern: str | None, limit: float) -> str:
    regex = None
    if pattern:
        try:
            regex = re.compile(pattern, re.MULTILINE)
        except re.error as err:
            raise Feedback(f"pattern is not a valid regex: {err}") from err
    deadline = time.monotonic() + limit
    while True:
        # whether it ended first, then its text: text read before an end that follows may miss the last lines
        if w.output is not None:
            end = _bash_end(w, await host.window_states())
            finished, status = end is not None, end or 0
            text = _bash_output(w)
        else:
            finished, status, _ = (await host.window_states()).get(w.window_id, (True, 0, ""))
            text = await _screen(host, w, 2000, strip=False)
        if regex is not None:
            found = regex.search(text)
            if found:
                return f"{found.group(0)!r} appeared in {w.name!r}:\n{_tail(_rstrip_lines(text), 20)}"
        if finished:
            message = f"the program in {w.name!r} exited with code {status}"
            if regex is not None:
                raise Feedback(f"{message} before {pattern!r} appeared", output=_tail(_rstrip_lines(text), 40))
            return f"{message}:\n{_tail(_rstrip_lines(text), 40)}"
        if time.monotonic() >= deadline:
            what = f"{pattern!r} did not appear" if regex else "the program did not exit"
            raise Feedback(
                f"{what} in {w.name!r} within {limit:g} s; it still runs. The last lines are above.",
                output=_tail(_rstrip_lines(text), 40),
            )
        if w.run is not None and not w.run.done():
            await asyncio.wait({w.run}, timeout=WAIT_POLL)
        else:
            await asyncio.sleep(WAIT_POLL)


def _server_loss_is_feedback(fn: ToolFn) -> ToolFn:
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


@tool
@_server_loss_is_feedback
async def tmux(
    action: Literal["new", "send", "capture", "wait", "list", "kill"],
    ctx: ToolContext,
    window: str | None = None,
    command: str | None = None,
    keys: str | None = None,
    text: str | None = None,
    lines: int | None = None,
    pattern: str | None = None,
    timeout: float | None = None,
) -> str:
    """Run and drive programs in tmux windows: dev servers, REPLs, TUIs, anything interactive.

    new: start `command` (or a shell) in a new window; send: type `text` (a newline presses
    Enter) and/or press `keys`; capture: the visible screen, or the last `lines` lines; wait:
    until `pattern` (a regex) shows in the window (screen and scrollback, so text already there
    counts) or the program exits; list: your windows;
    kill: close a window and stop what runs in it.

    Args:
        action: new, send, capture, wait, list or kill
        window: the window's name (letters, digits, . _ + -)
        command: for new: the program to run, as a shell command line
        keys: for send: space-separated tmux key names, e.g. "Enter", "C-c", "Up Up Enter"
        text: for send: literal text to type
        lines: for capture: the last N lines including scrollback (default: the visible screen)
        pattern: for wait: a regex to wait for (default: wait for the program to exit)
        timeout: for wait: seconds to wait (default 30)
    """
    _check_text(command=command, keys=keys, text=text)
    host = host_of(ctx)
    await host.ensure_started()
    state = host.agent(ctx.agent_id)
    if action == "list":
        if not state.windows:
            return "no windows; start one with tmux(action='new', window=NAME, command=...)"
        info = await host.window_info()
        return "\n".join([await _describe(host, w, info) for w in state.windows.values()])
    if action == "new":
        if not window or not WINDOW_NAME.match(window):
            raise Feedback("new needs window=NAME made of letters, digits, . _ + - (at most 40)")
        if RESERVED.match(window):
            raise Feedback(f"{window!r} is reserved for the bash tool's shells; pick another name")
        if window in state.windows:
            raise Feedback(
                f"window {window!r} already exists; send to it, or kill it first. "
                f"Your windows: {host.window_names(state)}"
            )
        cwd = start_dir(state, ctx.workspace)
        rc = shlex.quote(str(host.dir / "bashrc")) if host.dir else ""
        if command and command.strip():
            shell_cmd = f"exec bash --noprofile --norc -c {shlex.quote(command)}"
        else:
            shell_cmd = f"exec bash --noprofile --rcfile {rc} -i"
        env = {} if command and command.strip() else {"__WB_TOKEN": "tmux"}
        w = await host.new_window(ctx.agent_id, window, shell_cmd, cwd, env)
        w.command = command or "bash"
        state.windows[window] = w
        return f"started {w.command!r} in window {window!r} (cwd {cwd}); attach: {host.attach_command}"
    w = host.window(ctx.agent_id, window)
    try:
        if action == "send":
            if not text and not keys:
                raise Feedback("send needs text='...' to type and/or keys='Enter' (or 'C-c', ...)")
            info = await host.window_states()
            end = _bash_end(w, info) if w.run is not None else None
            dead, status, _ = info.get(w.window_id, (False, 0, ""))
            if dead or end is not None:
                raise Feedback(
                    f"the program in {w.name!r} has exited with code {status if end is None else end}; "
                    f"nothing was sent. See its last output with tmux(action='capture', window={w.name!r}), "
                    "close it with action='kill', or start it again with action='new'."
                )
            # copy-mode: a person scrolled back, the keys go to the program; one pipe write for all
            await host.ctrl_all([["copy-mode", "-q", "-t", w.window_id], *_send_args(w.window_id, text, keys)])
            return f"sent to {w.name!r}"
        if action == "capture":
            if lines is not None and lines <= 0:
                raise Feedback("lines must be a positive number")
            return await _capture(host, w, lines)
        if action == "wait":
            return await _wait(host, w, pattern, _seconds(timeout, 30.0))
        # kill
        state.windows.pop(w.name, None)
        await host.kill_window(w)
        return f"killed window {w.name!r}"
    except TmuxError as err:
        if "can't find" in str(err) or "no such" in str(err):
            state.windows.pop(w.name, None)
            raise Feedback(
                f"window {w.name!r} is gone (closed from outside?); your windows: {host.window_names(state)}"
            ) from err
        raise


__all__ = ["bash", "tmux"]
