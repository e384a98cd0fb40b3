"""Stand-ins for `bwrap_path` that run the real bubblewrap, but widen a window the kernel leaves
while a sandbox starts, so a test can kill Workbench inside it every time, not once in a hundred
runs (here bwrap binds itself to its parent ~4 ms after its exec, and the sandbox's init binds
itself to bwrap ~10 ms later; on a loaded machine both take longer).

- `slow`: bwrap starts 2 s late, as a loaded machine makes it: Workbench can die before bwrap's
  `--die-with-parent` is set (the defect seen on the shared machine: the sandbox outlived its
  workbench, bwrap's parent death signal set after it was already init's child).
- `detached`: the sandbox runs in a process that nothing binds to Workbench (a double fork): the
  state the kernel leaves when bwrap dies before its sandbox's init has bound itself to it. Only
  the session's marks (its cgroup, the marker in the environment) find it then.

Each writes its own pid to `flag` first: the moment the sandbox's start is under way.
"""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path

from workbench.terminal.processes import cmdline, marked_pids
from workbench.terminal.shell_env import MARKER

SCRIPTS = {
    "slow": 'echo $$ > {flag}\nsleep 2\nexec {bwrap} "$@"\n',
    "detached": 'echo $$ > {flag}\n( ( sleep 0.3; exec {bwrap} "$@" ) & )\nexec sleep 600\n',
}


def stand_in(folder: Path, kind: str, flag: Path) -> Path:
    """An executable bwrap stand-in of `kind` in `folder`."""
    bwrap = shutil.which("bwrap")
    assert bwrap is not None, "bubblewrap is not installed"
    path = folder / f"bwrap-{kind}"
    path.write_text("#!/bin/sh\n" + SCRIPTS[kind].format(flag=shlex.quote(str(flag)), bwrap=shlex.quote(bwrap)))
    path.chmod(0o755)
    return path


def session_processes(socket_name: str) -> list[int]:
    """Every process that carries the session's marker: the stand-in, bwrap, the sandbox's init,
    the tmux server, its shells."""
    return marked_pids(MARKER, socket_name)


def sandboxed_server(socket_name: str) -> list[int]:
    return [pid for pid in session_processes(socket_name) if b"tmux-server" in cmdline(pid).split(b"\0")[0]]


def marker_of(pid: int) -> str:
    """The session a process belongs to (its marker's value); "" when gone or unmarked."""
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return ""
    prefix = f"{MARKER}=".encode()
    return next((e[len(prefix) :].decode() for e in environ if e.startswith(prefix)), "")
