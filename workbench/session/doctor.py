"""`workbench doctor`: can bash and tmux run here, and in the sandbox the settings ask for?

It checks tmux (3.2 or later: the sandbox starts the server with `-D` and sessions with `-N`),
bubblewrap and whether it can create a sandbox here (user namespaces), the guard against
terminal injection, ends what sessions killed with -9 left running (`reap_orphans`), and says
how large the checkpoint stores are.
One line per check; the exit status is 1 when something the settings need is missing.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from workbench.config.settings import Settings
from workbench.terminal.protected import GIT_PINNED_INSIDE, PROJECT_CONFIG
from workbench.terminal.sandbox import INSTALL_HINT, describe, find_bwrap, policy_for, probe, protection
from workbench.terminal.seccomp import legacy_tiocsti, terminal_injection_filter

TMUX_MIN = (3, 2)


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    text: str
    needed: bool = True  # a failure that is not needed is a warning


def _version(argv: list[str]) -> str:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=10, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return (proc.stdout or proc.stderr).strip().splitlines()[0] if (proc.stdout or proc.stderr).strip() else ""


def check_tmux() -> Check:
    path = shutil.which("tmux")
    if path is None:
        return Check("tmux", False, "not found: install it (apt-get install tmux); bash and tmux need it")
    version = _version([path, "-V"])
    found = re.search(r"(\d+)\.(\d+)", version)
    if found is None or (int(found[1]), int(found[2])) < TMUX_MIN:
        return Check("tmux", False, f"{version or 'unknown version'} at {path}: 3.2 or later is needed")
    return Check("tmux", True, f"{version} at {path}")


def check_sandbox(settings: Settings) -> list[Check]:
    needed = settings.sandbox != "off"
    checks = [Check("sandbox", True, describe(settings) + ("" if needed else ": bash and tmux run unsandboxed"))]
    exe = find_bwrap(settings.bwrap_path)
    if exe is None:
        text = f"{settings.bwrap_path!r} not found: {INSTALL_HINT}"
        return [*checks, Check("bubblewrap", False, text, needed)]
    checks.append(Check("bubblewrap", True, f"{_version([exe, '--version'])} at {exe}"))
    reason = probe(settings.bwrap_path)
    works = "bwrap can create the sandbox's namespaces here"
    checks.append(Check("namespaces", reason is None, works if reason is None else reason, needed))
    if needed:
        checks.append(Check("kept from commands", True, _protected_text(settings)))
    if terminal_injection_filter() is not None:
        checks.append(Check("terminal injection", True, "TIOCSTI and TIOCLINUX refused by a seccomp filter"))
    elif legacy_tiocsti() is False:
        checks.append(Check("terminal injection", True, "TIOCSTI refused by the kernel (legacy_tiocsti = 0)"))
    else:
        text = "no seccomp filter for this machine and the kernel allows TIOCSTI (dev.tty.legacy_tiocsti = 1)"
        checks.append(Check("terminal injection", False, text, needed=False))
    return checks


def _protected_text(settings: Settings) -> str:
    """What the sandbox keeps from commands besides its folders, as it would start now."""
    policy = policy_for(settings, settings.workspace)
    if policy is None:
        return ""
    found = protection(policy, Path(tempfile.gettempdir()) / "workbench-doctor", make=False)
    parts = ["/run hidden", f"{len(found.sockets) + len(found.socket_dirs)} host socket(s) or folders masked"]
    git_folders = [p for p in found.pinned if not any(p.match(f"*/{name}") for name in GIT_PINNED_INSIDE)]
    if git_folders:
        parts.append(f"{git_folders[-1]} pinned, what git reads in it as configuration read-only")
    if policy.mode == "workspace-write":
        parts.append(f"{PROJECT_CONFIG}/ read-only")
    return "; ".join(parts)


def check_leftovers(settings: Settings) -> Check:
    from workbench.terminal.leftovers import reap_orphans

    ended = reap_orphans(settings.data_dir)
    if not ended:
        return Check("leftover sessions", True, "none")
    text = f"ended what {len(ended)} killed session(s) left running: {', '.join(ended)}"
    return Check("leftover sessions", True, text)


def check_checkpoints(settings: Settings) -> Check:
    from workbench.session.upkeep import checkpoint_store_line

    try:
        return Check("checkpoint store", True, checkpoint_store_line(settings), needed=False)
    except OSError as err:
        return Check("checkpoint store", False, f"cannot read it: {err}", needed=False)


def check_mcp(settings: Settings) -> list[Check]:
    """Each enabled MCP server: started as a session would (its sandbox), listing its tools."""
    if not any(server.enabled for server in settings.mcp_servers.values()):
        return []
    import asyncio

    from workbench.session.mcp_servers import check_servers

    return [Check(f"mcp {name}", ok, text) for name, ok, text in asyncio.run(check_servers(settings))]


def main(settings: Settings, out: TextIO | None = None) -> int:
    """Print one line per check; 0 when bash and tmux can run as the settings ask, else 1."""
    out = out or sys.stdout  # looked up at the call: a caller (a test) may have replaced it
    checks = [check_tmux(), *check_sandbox(settings), check_leftovers(settings), check_checkpoints(settings)]
    checks += check_mcp(settings)
    for check in checks:
        mark = "ok  " if check.ok else "FAIL" if check.needed else "warn"
        print(f"{mark} {check.name}: {check.text}", file=out)
    return 0 if all(check.ok or not check.needed for check in checks) else 1
