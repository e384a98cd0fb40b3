"""The tmux tool: programs the agent starts and drives in windows of the session's tmux server
(dev servers, REPLs, TUIs), one action each: list, new, send, capture, wait, kill."""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal

from workbench.core.feedback import Feedback
from workbench.terminal.host import TerminalHost, Window, start_dir
from workbench.terminal.sandbox import PlantedFile, open_untrusted
from workbench.terminal.state import AgentState
from workbench.terminal.tmux_control import TmuxError
from workbench.tools.registry import ToolContext, tool
from workbench.tools.shell import check_text, host_of, seconds_of, server_loss_is_feedback

WAIT_POLL = 0.1  # seconds between screen checks of tmux(action="wait")
RESERVED = re.compile(r"^bash(-\d+)?$")
WINDOW_NAME = re.compile(r"^[A-Za-z0-9_.+-]{1,40}$")
DEAD_SCREEN_LINES = 50  # what capture shows of a program that ended (the default window height)
TAIL_BYTES = 1 << 20  # what capture and wait read of a detached command's output
DEAD_BANNER = re.compile(r"^Pane is dead \((status \d+|signal \d+)?[^)]*\)\s*$")


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


@tool
@server_loss_is_feedback
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
    check_text(command=command, keys=keys, text=text)
    host = host_of(ctx)
    await host.ensure_started()
    call = TmuxCall(ctx, host, host.agent(ctx.agent_id), window, command, keys, text, lines, pattern, timeout)
    if action in OWN_ACTIONS:
        return await OWN_ACTIONS[action](call)
    w = host.window(ctx.agent_id, window)
    try:
        return await WINDOW_ACTIONS[action](call, w)
    except TmuxError as err:
        if "can't find" in str(err) or "no such" in str(err):
            call.state.windows.pop(w.name, None)
            raise Feedback(
                f"window {w.name!r} is gone (closed from outside?); your windows: {host.window_names(call.state)}"
            ) from err
        raise


@dataclass(frozen=True)
class TmuxCall:
    """One tmux call: its arguments, the session's host and the calling agent's shells and windows."""

    ctx: ToolContext
    host: TerminalHost
    state: AgentState
    window: str | None
    command: str | None
    keys: str | None
    text: str | None
    lines: int | None
    pattern: str | None
    timeout: float | None


async def _list_windows(call: TmuxCall) -> str:
    if not call.state.windows:
        return "no windows; start one with tmux(action='new', window=NAME, command=...)"
    info = await call.host.window_info()
    return "\n".join([await _describe(call.host, w, info) for w in call.state.windows.values()])


async def _new_window(call: TmuxCall) -> str:
    host, state, window, command = call.host, call.state, call.window, call.command
    if not window or not WINDOW_NAME.match(window):
        raise Feedback("new needs window=NAME made of letters, digits, . _ + - (at most 40)")
    if RESERVED.match(window):
        raise Feedback(f"{window!r} is reserved for the bash tool's shells; pick another name")
    if window in state.windows:
        raise Feedback(
            f"window {window!r} already exists; send to it, or kill it first. Your windows: {host.window_names(state)}"
        )
    cwd = start_dir(state, call.ctx.workspace)
    rc = shlex.quote(str(host.dir / "bashrc")) if host.dir else ""
    if command and command.strip():
        shell_cmd = f"exec bash --noprofile --norc -c {shlex.quote(command)}"
    else:
        shell_cmd = f"exec bash --noprofile --rcfile {rc} -i"
    env = {} if command and command.strip() else {"__WB_TOKEN": "tmux"}
    w = await host.new_window(call.ctx.agent_id, window, shell_cmd, cwd, env)
    w.command = command or "bash"
    state.windows[window] = w
    return f"started {w.command!r} in window {window!r} (cwd {cwd}); attach: {host.attach_command}"


async def _send_to(call: TmuxCall, w: Window) -> str:
    if not call.text and not call.keys:
        raise Feedback("send needs text='...' to type and/or keys='Enter' (or 'C-c', ...)")
    info = await call.host.window_states()
    end = _bash_end(w, info) if w.run is not None else None
    dead, status, _ = info.get(w.window_id, (False, 0, ""))
    if dead or end is not None:
        raise Feedback(
            f"the program in {w.name!r} has exited with code {status if end is None else end}; "
            f"nothing was sent. See its last output with tmux(action='capture', window={w.name!r}), "
            "close it with action='kill', or start it again with action='new'."
        )
    # copy-mode: a person scrolled back, the keys go to the program; one pipe write for all
    await call.host.ctrl_all([["copy-mode", "-q", "-t", w.window_id], *_send_args(w.window_id, call.text, call.keys)])
    return f"sent to {w.name!r}"


async def _capture_window(call: TmuxCall, w: Window) -> str:
    if call.lines is not None and call.lines <= 0:
        raise Feedback("lines must be a positive number")
    return await _capture(call.host, w, call.lines)


async def _wait_in(call: TmuxCall, w: Window) -> str:
    return await _wait(call.host, w, call.pattern, seconds_of(call.timeout, 30.0))


async def _kill_window(call: TmuxCall, w: Window) -> str:
    call.state.windows.pop(w.name, None)
    await call.host.kill_window(w)
    return f"killed window {w.name!r}"


# the tmux tool's actions: those on the agent's windows as a whole, and those on one named window
OWN_ACTIONS: dict[str, Callable[[TmuxCall], Awaitable[str]]] = {"list": _list_windows, "new": _new_window}
WINDOW_ACTIONS: dict[str, Callable[[TmuxCall, Window], Awaitable[str]]] = {
    "send": _send_to,
    "capture": _capture_window,
    "wait": _wait_in,
    "kill": _kill_window,
}


__all__ = ["tmux"]
