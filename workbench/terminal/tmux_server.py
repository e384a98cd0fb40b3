"""The session's private tmux server: the one function that starts it, and bounded tmux commands.

`start_server` is the only place the server process is started (the sandbox wraps its argv
there). Every tmux command the host runs has a time bound (`COMMAND_TIMEOUT`): a stalled
server (stopped, or wedged) is killed and replaced instead of hanging the session.
"""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
from collections.abc import Mapping
from pathlib import Path

import libtmux

from workbench.terminal.leftovers import join_cgroup
from workbench.terminal.tmux_control import ServerGone, TmuxError

SESSION = "workbench"  # the tmux session that holds every agent's windows
COMMAND_TIMEOUT = 10.0  # seconds a tmux command may take before the server counts as stalled
FIRST_WINDOW = "exec bash --noprofile --norc -i"


def server_argv(socket_name: str, conf: Path) -> list[str]:
    """The command line that starts the server: a detached session with one idle window."""
    return [
        "tmux",
        "-L",
        socket_name,
        "-f",
        str(conf),
        "new-session",
        "-d",
        "-s",
        SESSION,
        "-n",
        "workbench",
        "-x",
        "200",
        "-y",
        "50",
        FIRST_WINDOW,
    ]


async def start_server(
    argv: list[str], env: Mapping[str, str], timeout: float = COMMAND_TIMEOUT, cgroup: Path | None = None
) -> None:
    """Start the tmux server: `argv` from `server_argv`, `env` becomes every shell's environment.

    tmux copies the starting client's environment into the server's global environment, which
    every window inherits: this is where the shells' environment is decided. With `cgroup`, the
    starting client joins it before exec, so the server and all it starts are in it.
    """
    proc = await asyncio.create_subprocess_exec(
        *argv,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=(lambda: join_cgroup(cgroup)) if cgroup is not None else None,
    )
    try:
        _, err = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        await proc.wait()
        raise ServerGone(f"the tmux server did not start within {timeout:g} s") from None
    if proc.returncode != 0:
        raise TmuxError(err.decode(errors="replace").strip() or f"tmux exited with code {proc.returncode}")


def libtmux_cmd(server: libtmux.Server, *args: str) -> list[str]:
    """One tmux command through libtmux (a client process; blocking: run it in a thread)."""
    # tmux reads an argument ending in `;` as the end of a command (and `\;` as a literal `;`):
    # typed text, a path or a command line that ends in `;` would lose it
    proc = server.cmd(*[arg[:-1] + "\\;" if arg.endswith(";") else arg for arg in args])
    if proc.stderr:
        raise TmuxError("; ".join(proc.stderr))
    return list(proc.stdout)


def tmux_quote(text: str) -> str:
    """One argument of a tmux command line (single quotes; a quote inside as '\\'')."""
    return "'" + text.replace("'", "'\\''") + "'"


def control_line(command: str, *args: str) -> str:
    """One tmux command for the control client, each argument quoted. The control protocol is a
    line per command: an argument with a newline (or a NUL, which ends tmux's string) is refused."""
    if any("\n" in arg or "\x00" in arg for arg in args):
        raise ValueError("a tmux argument sent through the control client cannot hold a newline or a NUL")
    return " ".join([command, *map(tmux_quote, args)])
