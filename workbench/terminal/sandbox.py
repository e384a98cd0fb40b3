"""The sandbox of bash and tmux: the session's private tmux server runs inside bubblewrap.

One sandbox per session, not per shell: the tmux server itself is the sandbox's command, so
every shell and program of the session shares one private /tmp and one network namespace (a
dev server in a tmux window is reachable from bash). Modes (setting `sandbox`):
- `workspace-write` (the default): `/` read-only; the workspace, a private /tmp, `io/` in the
  session's own folder (the commands' output files, the tmux socket) and `sandbox_writable`
  writable; a fresh /dev and /proc;
- `read-only`: the same, with the workspace read-only too;
- `off`: no sandbox (as before it existed).
The network is cut (`--unshare-net`) unless `sandbox_network` is on. The data folder (every
transcript), the person's Workbench config (keys), their runtime folder (agent sockets) and
`sandbox_hidden` are hidden under empty read-only tmpfs (a file under an empty read-only file).

Decisions:
- a pid namespace: without one a sandboxed process reaches the whole machine through
  /proc/PID/root of any process of the person's it can see.
- `--cap-drop ALL`: run as root, bwrap keeps every capability and `mount -o remount,rw /`
  would undo the read-only root.
- no `--new-session` (it cuts the pane's terminal off: Ctrl-C, the foreground process, REPLs).
  Terminal injection is refused by a seccomp filter instead (ioctl TIOCSTI and TIOCLINUX give
  EPERM: `seccomp.py`), since the kernel's `legacy_tiocsti` is on in many systems; the sandbox
  also gets none of the person's terminals (stdin and stdout are null, its own session).

How the tmux server is started inside it: `sandbox_server.py`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import stat
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from workbench.core.feedback import Feedback
from workbench.terminal.protected import PROJECT_CONFIG, RUN_DIRS, Protected, in_run, is_socket, protected_paths

MODES = ("workspace-write", "read-only", "off")  # loosest last
INSTALL_HINT = "install it (apt-get install bubblewrap) or choose --sandbox off"
# The session's folder holds what the host reads as configuration or runs (tmux.conf, the rc file,
# the commands, the tmux binary): read-only to the sandbox. Only this subfolder is writable (the
# commands' outputs and the tmux server's socket), and the host reads it as data, never through
# a link (`open_untrusted`).
SANDBOX_WRITES = "io"


class SandboxSettings(Protocol):
    """The settings the sandbox reads (workbench.config.settings.Settings has them)."""

    sandbox: str
    sandbox_network: bool
    sandbox_writable: list[Path]
    sandbox_hidden: list[str]
    sandbox_run_visible: list[str]
    bwrap_path: str
    data_dir: Path


class SandboxUnavailable(Feedback):
    """bubblewrap is missing or cannot create namespaces here: bash and tmux do not run."""


@dataclass(frozen=True)
class Policy:
    """What the sandbox allows: one per session, from the settings and the workspace."""

    mode: str  # workspace-write | read-only
    workspace: Path
    network: bool
    writable: tuple[Path, ...]  # besides the workspace, /tmp and the session's folder
    hidden: tuple[Path, ...]
    bwrap: str
    run_visible: tuple[str, ...] = ()  # shown inside the hidden /run (setting sandbox_run_visible)

    def describe(self) -> str:
        return f"{self.mode}, network {'on' if self.network else 'off'}"


def describe(settings: SandboxSettings) -> str:
    """The sandbox in force, for a status or header line: `workspace-write, network off`."""
    if settings.sandbox == "off":
        return "off"
    return f"{settings.sandbox}, network {'on' if settings.sandbox_network else 'off'}"


def _real(path: Path | str) -> Path:
    return Path(os.path.expanduser(str(path))).resolve()


def _user_config_dir() -> Path:
    from workbench.config.load import user_config_path

    return user_config_path().parent


def policy_for(settings: SandboxSettings, workspace: Path) -> Policy | None:
    """The session's policy; None when the sandbox is off."""
    if settings.sandbox == "off":
        return None
    if settings.sandbox not in MODES:
        raise ValueError(f"sandbox must be one of {', '.join(MODES)}, got {settings.sandbox!r}")
    hidden: list[Path | str] = [settings.data_dir, _user_config_dir(), *settings.sandbox_hidden]
    runtime = os.environ.get("XDG_RUNTIME_DIR")  # the person's agent and bus sockets
    if runtime:
        hidden.append(Path(runtime))
    return Policy(
        mode=settings.sandbox,
        workspace=_real(workspace),
        network=settings.sandbox_network,
        writable=tuple(_real(p) for p in settings.sandbox_writable),
        hidden=tuple(dict.fromkeys(_real(p) for p in hidden)),
        bwrap=settings.bwrap_path,
        run_visible=tuple(settings.sandbox_run_visible),
    )


def _under(path: Path, roots: Sequence[Path]) -> Path | None:
    return next((root for root in roots if path == root or root in path.parents), None)


def can_write(policy: Policy, session_dir: Path, path: Path) -> bool:
    """May a sandboxed command write at `path`? The deepest mount above it decides."""
    session = _real(session_dir)
    mounts = [(Path("/tmp"), True), (session, False), (session / SANDBOX_WRITES, True)]
    mounts.append((policy.workspace, policy.mode == "workspace-write"))
    if policy.mode == "workspace-write":
        mounts += [(p, True) for p in policy.writable]
    mounts += [(p, False) for p in policy.hidden]
    best = max((m for m in mounts if _under(path, [m[0]])), key=lambda m: len(m[0].parts), default=None)
    return best is not None and best[1]


def mount_args(policy: Policy, session_dir: Path) -> list[str]:
    """bwrap's filesystem arguments: parents before children, so a deeper mount wins. What the host
    reads or listens on later is worked out anew at every start (`protected.py`)."""
    ws = "--bind" if policy.mode == "workspace-write" else "--ro-bind"
    # (path, order at equal depth, arguments); the private /tmp comes before what is bound
    # under it (a workspace in /tmp is bound at its real path on top)
    workspace = str(policy.workspace)
    mounts: list[tuple[Path, int, list[str]]] = [(policy.workspace, 0, [ws, workspace, workspace])]
    session = _real(session_dir)
    mounts.append((session, 0, ["--ro-bind", str(session), str(session)]))
    writes = session / SANDBOX_WRITES
    writes.mkdir(mode=0o700, exist_ok=True)
    mounts.append((writes, 0, ["--bind", str(writes), str(writes)]))
    if policy.mode == "workspace-write":
        mounts += [(p, 0, ["--bind", str(p), str(p)]) for p in policy.writable if p.exists()]
    runs = [Path(run) for run in RUN_DIRS if os.path.isdir(run) and not os.path.islink(run)]
    mounts += [(run, 0, ["--tmpfs", str(run)]) for run in runs]
    guard = protection(policy, session)
    for place in guard.run_visible:
        if place.is_symlink():
            mounts.append((place, 1, ["--symlink", os.readlink(place), str(place)]))
        else:
            mounts.append((place, 1, ["--ro-bind", str(place), str(place)]))
    mounts += [(p, 2, ["--bind", str(p), str(p)]) for p in guard.pinned]
    mounts += [(p, 2, ["--ro-bind", str(p), str(p)]) for p in guard.read_only]
    for path in (*[p for p in policy.hidden if not in_run(p)], *guard.socket_dirs, *guard.sockets):
        if path.is_dir():
            mounts.append((path, 3, ["--tmpfs", str(path), "--remount-ro", str(path)]))
        elif os.path.lexists(path):
            mounts.append((path, 3, ["--ro-bind", str(_empty_file(session)), str(path)]))
    mounts.sort(key=lambda m: (len(m[0].parts), m[1]))
    args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    for _, _, more in mounts:
        args += more
    for run in runs:  # after what was bound back into it
        args += ["--remount-ro", str(run)]
    return args


def protection(policy: Policy, session_dir: Path, make: bool = True) -> Protected:
    """What is kept from sandboxed commands besides the policy's folders (`protected.py`), as of now."""
    session = _real(session_dir)

    def shown(path: Path) -> bool:
        hidden = (Path("/tmp"), session, *policy.hidden)
        return not in_run(path) and _under(path, hidden) is None

    return protected_paths(
        policy.workspace,
        policy.network,
        list(policy.run_visible),
        lambda p: can_write(policy, session, p),
        shown,
        make,
    )


def _empty_file(session_dir: Path) -> Path:
    """What a hidden file shows: an empty file (/dev/null would not open on bwrap's nodev binds),
    made anew at each start (a command may have swapped it for a link to a secret)."""
    empty = session_dir / "hidden-file"
    write_untrusted(empty, "")
    return empty


def bwrap_argv(bwrap: str, policy: Policy, session_dir: Path, seccomp_fd: int | None) -> list[str]:
    """The bwrap command line up to `--`; the sandboxed command follows."""
    argv = [bwrap, *mount_args(policy, session_dir)]
    argv += ["--unshare-pid", "--unshare-ipc", "--die-with-parent", "--cap-drop", "ALL"]
    if not policy.network:
        argv.append("--unshare-net")
    if seccomp_fd is not None:
        argv += ["--seccomp", str(seccomp_fd)]
    return [*argv, "--"]


# --- the session's folder, which sandboxed commands can write ------------------------------------


class PlantedFile(OSError):
    """Not a regular file where the host expected one (a link or a FIFO a command put there)."""


def open_untrusted(path: os.PathLike[str] | str, flags: int, mode: int = 0o600) -> int:
    """Open a file in a folder that sandboxed commands can write, the way the host may.

    A command could have put a symbolic link there (to a file outside the sandbox, which the
    host would then read or write for it) or a FIFO (which would block the host): the last
    component is not followed (O_NOFOLLOW), the open does not wait (O_NONBLOCK), and anything
    but a regular file is refused (PlantedFile). With O_CREAT the file is made anew (what was
    there is removed first; O_EXCL).
    """
    flags |= os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    if flags & os.O_CREAT:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        flags |= os.O_EXCL
    try:
        fd = os.open(path, flags, mode)
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise PlantedFile(errno.ELOOP, "a symbolic link, not a regular file", str(path)) from err
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise PlantedFile(errno.EINVAL, "not a regular file", str(path))
    os.set_blocking(fd, True)
    return fd


def write_untrusted(path: Path, text: str) -> None:
    """Write a new file in a folder that sandboxed commands can write (see `open_untrusted`)."""
    fd = open_untrusted(path, os.O_WRONLY | os.O_CREAT)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)


# --- is it there, does it work ----------------------------------------------------------------


def find_bwrap(path: str) -> str | None:
    return shutil.which(path)


def missing_text(path: str) -> str:
    return f"bash and tmux run in a bubblewrap sandbox, but {path!r} was not found: {INSTALL_HINT}"


def refused_text(reason: str) -> str:
    return (
        f"bash and tmux run in a bubblewrap sandbox, which cannot start here ({reason}): allow "
        "unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1), or choose --sandbox off"
    )


def probe(bwrap_path: str) -> str | None:
    """None when bwrap runs a sandbox like ours here; else a one-line reason (for doctor)."""
    exe = find_bwrap(bwrap_path)
    if exe is None:
        return missing_text(bwrap_path)
    argv = [exe, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    argv += ["--unshare-pid", "--unshare-net", "--die-with-parent", "--cap-drop", "ALL", "--", "true"]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=10, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as err:
        return refused_text(str(err))
    if proc.returncode != 0:
        return refused_text(first_line(proc.stderr) or f"bwrap exited with code {proc.returncode}")
    return None


def first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


# --- hints for what the sandbox refused -----------------------------------------------------------

_WRITE_REFUSED = re.compile(r"read-only file system|\bEROFS\b|permission denied|\bEACCES\b", re.I)
_BUSY = re.compile(r"device or resource busy|\bEBUSY\b|could not (?:lock|write|commit) config file", re.I)
_REFUSED = re.compile(r"connection refused|\bECONNREFUSED\b", re.I)
_NOT_FOUND = re.compile(r"no such file or directory|\bENOENT\b", re.I)
_NO_NETWORK = re.compile(
    r"network is unreachable|\bENETUNREACH\b|could not resolve|temporary failure in name resolution|"
    r"name or service not known|no address associated with hostname|\bEAI_AGAIN\b|getaddrinfo|"
    r"connection refused|\bECONNREFUSED\b|failed to connect",
    re.I,
)
# a path in an error line: quoted ('x', "x", `x', ‘x’), or a field between ": " holding a slash
_QUOTED = re.compile(r"""['"`‘]([^'"`’\n]+)['"’]""")
_FIELD = re.compile(r"(?:^|: )([^\s:'\"`]*/[^\s:'\"`]*)(?=: |$)")
_NO_TMUX = re.compile(r"no server running on|error connecting to")
SCAN_BYTES = 65536  # of the output's start and of its end


def _host_writable(path: Path) -> bool:
    """Could the person write there (outside the sandbox)? Then the sandbox refused it."""
    probe_path = path
    while not probe_path.exists() and probe_path != probe_path.parent:
        probe_path = probe_path.parent
    try:
        return os.access(probe_path, os.W_OK) and not os.statvfs(probe_path).f_flag & os.ST_RDONLY
    except OSError:
        return False


def _paths(line: str, cwd: str) -> list[Path]:
    """The paths an error line names, resolved as the host sees them (symlinks followed)."""
    found = [*_QUOTED.findall(line), *_FIELD.findall(line)]
    base = Path(cwd or "/")
    return [Path(os.path.realpath(base / os.path.expanduser(p))) for p in found if p.strip()]


GIT_HINT = (
    "sandbox: the repository's git control files (.git itself, .git/config, hooks, info, modules) are "
    "read-only to commands, so that nothing planted there runs when the person uses git. git add, commit, "
    "checkout, branch, merge, stash and tag work; git config, remote add, submodule, upstream tracking and "
    "lfs install fail by design: ask the person to run them outside the sandbox"
)
PROJECT_HINT = (
    "sandbox: .workbench/ (the project's Workbench config) is read-only to commands; ask the person to "
    "change it outside the sandbox"
)


_GIT_NAMED = re.compile(r"(?:^|[\s'\"`/])\.git(?:[/\s'\"`:]|$)")


RUN_HINT = (
    "sandbox: /run is hidden from commands (the host's sockets live there); the person can show a path "
    "with sandbox_run_visible in the user config"
)
SOCKET_HINT = (
    "sandbox: the host's Unix sockets (ssh and gpg agents, editors, daemons) are masked for commands; the "
    "person can show one under /run with sandbox_run_visible, or run with --sandbox off"
)


def _socket_hint(paths: list[Path], refused: bool) -> str | None:
    """The note for a path under the hidden /run, or a host socket that refused a connection."""
    for path in paths:
        if in_run(path):
            return RUN_HINT
        if refused and is_socket(path):
            return SOCKET_HINT
    return None


def _protected_hint(policy: Policy, line: str, paths: list[Path]) -> str | None:
    """The note for a write refused on git's control files or the project's Workbench config."""
    if _GIT_NAMED.search(line):
        return GIT_HINT
    for path in paths:
        if ".git" in path.parts or any(part.startswith(".git") and part.endswith(".lock") for part in path.parts):
            return GIT_HINT
        if _under(path, [policy.workspace / PROJECT_CONFIG]):
            return PROJECT_HINT
    return None


_SOCKETISH = re.compile(r"""(?:^|[\s'"=(:])(/[^\s'"();|&<>]+)""")


def _command_socket_hint(command: str, output: str) -> str | None:
    """A program that names no path in its error (python: "[Errno 2] No such file or directory",
    "Connection refused"): the paths the command itself names, under /run or a host socket."""
    if not (_NOT_FOUND.search(output) or _REFUSED.search(output)):
        return None
    paths = [Path(os.path.realpath(p)) for p in _SOCKETISH.findall(command[:SCAN_BYTES])]
    return _socket_hint(paths, refused=bool(_REFUSED.search(output)))


def refusal_hint(policy: Policy, session_dir: Path, output: str, cwd: str = "", command: str = "") -> str | None:
    """A short note when a failed command's output (or, for an error that names no path, the
    command) shows the sandbox refusing it; else None.

    Observable signs only: a write error (EROFS, EACCES) on a path outside the writable folders
    that the person could write, a path under a hidden folder that is "not found", a network
    error while the network is off. `cwd` is the shell's directory, for relative paths.
    """
    text = output if len(output) <= 2 * SCAN_BYTES else output[:SCAN_BYTES] + "\n" + output[-SCAN_BYTES:]
    network = refused = False
    for line in text.splitlines():
        paths = _paths(line, cwd)
        if _WRITE_REFUSED.search(line) or _BUSY.search(line):
            if protected := _protected_hint(policy, line, paths):
                return protected
        if _WRITE_REFUSED.search(line) or _NOT_FOUND.search(line):
            for path in paths:
                hidden = _under(path, policy.hidden)
                if hidden is not None:
                    return (
                        f"sandbox: {hidden} is hidden from commands (an empty folder; setting sandbox_hidden, "
                        "with the data folder and the Workbench config always hidden)"
                    )
                if _WRITE_REFUSED.search(line) and not can_write(policy, session_dir, path) and _host_writable(path):
                    if policy.mode == "read-only" and _under(path, [policy.workspace]):
                        return (
                            f"sandbox: {path} is read-only: the sandbox is read-only (sandbox = "
                            '"read-only"); "workspace-write" lets commands write in the workspace'
                        )
                    return (
                        f"sandbox: {path} is read-only to commands; they may write only in the workspace "
                        "and /tmp. The person can add a folder with sandbox_writable in the user config, "
                        "or run with --sandbox off"
                    )
        if _NOT_FOUND.search(line) or _REFUSED.search(line):
            if socket_note := _socket_hint(paths, refused=bool(_REFUSED.search(line))):
                return socket_note
        if _NO_TMUX.search(line) and str(_real(session_dir)) in line:
            return (
                "sandbox: tmux commands inside the sandbox cannot reach the session's tmux server (so "
                "that a command cannot steer it); use the tmux tool for windows"
            )
        if not policy.network and _NO_NETWORK.search(line):
            network = True
            refused = refused or bool(_REFUSED.search(line))
    if command and (from_command := _command_socket_hint(command, text)):
        return from_command
    if network:
        sockets = (
            " The host's Unix sockets (under /run, in the home folder) are masked as well; "
            "sandbox_run_visible shows one under /run"
            if refused
            else ""
        )
        return (
            "sandbox: commands have no network (127.0.0.1 is the sandbox's own: a server started in a "
            "tmux window is reachable, one outside the sandbox is not). The person can allow it with "
            f"--allow-net or sandbox_network = true.{sockets}"
        )
    return None
