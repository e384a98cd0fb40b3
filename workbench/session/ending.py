"""A client process that ends by a signal, SIGHUP (its terminal closed) or SIGTERM, first ends what
its sessions started and still run: their sandboxed tmux servers (a sandbox still starting
included), the shells' commands, the MCP servers. Left to themselves they would end with the
process only once bound to it (bwrap binds the sandbox's init to itself ~10 ms after its start)
or at the next start's `reap_orphans`. The process then ends by the signal, as it did before.

`workbench.cli.launch` installs the handlers as the process starts and ends the rest on the way
out (an error, Ctrl-C). Nothing here imports the engine: a process that never opened a session
has nothing to end.
"""

from __future__ import annotations

import os
import signal
import sys
from types import FrameType

SIGNALS = (signal.SIGHUP, signal.SIGTERM)


def end_sessions_leftovers() -> None:
    """End what this process's sessions still run (`leftovers.end_own_sessions`)."""
    leftovers = sys.modules.get("workbench.terminal.leftovers")
    if leftovers is not None:  # not imported: no session started anything
        leftovers.end_own_sessions()


def _ended_by(signum: int, _frame: FrameType | None) -> None:
    end_sessions_leftovers()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)  # the signal's own end and exit status, now that nothing is left


def end_leftovers_on_signals() -> None:
    """SIGHUP and SIGTERM end the sessions' leftovers, then the process (a command that handles
    SIGTERM itself, `workbench run`, replaces the handler while it runs)."""
    for signum in SIGNALS:
        signal.signal(signum, _ended_by)
