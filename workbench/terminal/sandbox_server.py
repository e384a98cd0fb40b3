"""The session's tmux server, started inside the bubblewrap sandbox (`sandbox.py` has the policy).

- The server runs in the foreground (`tmux -D`) as the sandbox's command, with its socket in
  the session folder's `io/` (the one part bound writable). bwrap's process is bound to the event
  loop's thread before its exec (`processes.ends_with_this_thread`), and bwrap's
  `--die-with-parent` binds the sandbox's init to bwrap: when workbench dies (even by kill -9) the
  whole sandbox ends. One window stays open, bwrap killed before its sandbox's init bound itself
  (~10 ms as it starts): the session's cgroup and marker end that sandbox (`leftovers.py`).
- The session is created by a client with `-N`, which never starts a server: no client can
  silently start an unsandboxed one. `tmux -L NAME` (libtmux, the control client, the person's
  attach command) reaches the socket through a hard link in tmux's socket folder: never by a
  name in the session's folder, which sandboxed commands can write.
- The server cannot be commanded from inside: its socket's name is removed once the host holds
  its hard link, the seccomp filter refuses the SIGUSR1 that would make tmux bind it anew, and
  the server runs from a copy of tmux it cannot read, so it is not dumpable (no ptrace, no
  /proc/2/mem or fd). Otherwise a sandboxed command could make an attached person's tmux
  client run a command outside (`detach-client -E`).
- The agents' shells run from an unreadable copy of bash too (`shell_program`), so no other
  sandboxed process reads a shell's report token, run key or descriptors (`shell_reports.py`).
- tmux and the shells report pids of the sandbox's pid namespace; `host_pid` translates them
  to the host's (NSpid in /proc), which is what signals and /proc lookups need.
- the sandbox gets none of the person's terminals: stdin and stdout are null, its own session.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO

from google.protobuf.message import Message

from workbench.pb import workbench_pb2 as pb
from workbench.terminal.leftovers import join_cgroup
from workbench.terminal.processes import ends_with_this_thread
from workbench.terminal.protected import PROJECT_CONFIG
from workbench.terminal.sandbox import (
    SANDBOX_WRITES,
    Policy,
    SandboxSettings,
    SandboxUnavailable,
    bwrap_argv,
    find_bwrap,
    first_line,
    missing_text,
    open_untrusted,
    policy_for,
    refusal_hint,
    refused_text,
)
from workbench.terminal.seccomp import SERVER_PID, terminal_injection_filter

SOCKET = "tmux.sock"  # in the part of the session's folder that the sandbox writes
# The host pid of a sandboxed process that is gone: above the kernel's PID_MAX_LIMIT (2**22), so
# no process has it. Not 0: signals and /proc scans read 0 as "my group" or "no session".
GONE = 4_194_305


def _nspid(pid: int) -> list[int]:
    """The pid in each namespace from /proc's own down (NSpid); [] when gone."""
    try:
        with open(f"/proc/{pid}/status", "rb") as fh:
            for line in fh:
                if line.startswith(b"NSpid:"):
                    return [int(x) for x in line.split()[1:]]
    except (OSError, ValueError):
        pass
    return []


def _ppid(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return int(fh.read().rsplit(b")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def _pid_ns(pid: int) -> int:
    try:
        return os.stat(f"/proc/{pid}/ns/pid").st_ino
    except OSError:
        return 0


class TmuxSandbox:
    """Starts the session's tmux server inside bwrap and maps the pids it reports.

    `configure` (by the Session as it opens; else from the bash and tmux tools' context) decides
    the policy before the first start; without it the built-in defaults hold (sandboxed): never a
    silent unsandboxed run.
    """

    def __init__(self, publish: Callable[[Message], object]):
        self.publish = publish
        self.configured = False
        self.policy: Policy | None = None
        self.proc: asyncio.subprocess.Process | None = None
        self.link: Path | None = None  # tmux's socket path for -L NAME, a hard link to ours
        self._ns = 0  # inode of the sandbox's pid namespace
        self._level = 1  # index of the sandbox's pids in NSpid
        self._pids: dict[int, int] = {}  # inner pid -> host pid
        self._told = False
        self._made: list[Path] = []  # empty folders made for the sandbox in the workspace (.workbench/)
        self.shell_program: str | None = None  # the agents' bash: an unreadable copy (see `start`)

    @property
    def active(self) -> bool:
        return self.policy is not None

    def configure(self, settings: SandboxSettings, workspace: Path) -> None:
        """Set the policy once (one sandbox per session): the Session does as it opens, since a run
        starts the server ahead of its first bash call; the tools' calls then change nothing."""
        if not self.configured:
            self.policy = policy_for(settings, workspace)
            self.configured = True

    def _fail(self, error: SandboxUnavailable) -> SandboxUnavailable:
        if not self._told:  # the person sees it once; the model at every call
            self._told = True
            self.publish(pb.Notice(level="error", text=error.message))
        return error

    async def start(
        self, argv: list[str], env: Mapping[str, str], session_dir: Path, timeout: float, cgroup: Path | None = None
    ) -> None:
        """Start the tmux server of `argv` (tmux -L NAME -f CONF new-session ...) in the sandbox.

        With `cgroup`, bwrap joins it before exec, so the sandbox and all it starts are in it.
        """
        from workbench.terminal.tmux_control import ServerGone

        if not self.configured:  # used without the tools (a test, a script): the built-in defaults
            from workbench.config.settings import Settings

            defaults = Settings()
            self.configure(defaults, defaults.workspace)
        if self.policy is None:
            raise RuntimeError("the sandbox is off: start the server unsandboxed instead")
        policy = self.policy
        assert policy is not None
        exe = find_bwrap(policy.bwrap)
        if exe is None:
            raise self._fail(SandboxUnavailable(missing_text(policy.bwrap)))
        await self.stop()
        i = argv.index("-L")
        name, rest = argv[i + 1], argv[i + 2 :]
        conf = rest[rest.index("-f") + 1]
        sock = session_dir / SANDBOX_WRITES / SOCKET
        with contextlib.suppress(FileNotFoundError):
            sock.unlink()
        program = terminal_injection_filter()
        fds: tuple[int, ...] = ()
        if program is not None:
            fd = os.memfd_create("workbench-seccomp", 0)
            os.write(fd, program)
            os.lseek(fd, 0, os.SEEK_SET)
            fds = (fd,)
        server = [str(_unreadable_copy(argv[0], session_dir, "tmux-server")), "-S", str(sock), "-f", conf, "-D"]
        # the agents' shells run from an unreadable copy too: not dumpable, so no other sandboxed
        # process reads their environment (a shell's report token), memory (a run's key) or
        # descriptors (its report channel) through /proc or ptrace (`shell_reports.py`)
        self.shell_program = str(_unreadable_copy("bash", session_dir, "bash"))
        project = policy.workspace / PROJECT_CONFIG
        if not os.path.lexists(project) and project not in self._made:
            self._made.append(project)  # the mounts make it, empty: gone again with the session
        errors: IO[bytes] = tempfile.TemporaryFile()
        try:
            self.proc = await asyncio.create_subprocess_exec(
                *bwrap_argv(exe, policy, session_dir, fds[0] if fds else None),
                *server,
                env={**env, "TMPDIR": "/tmp"},
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=errors,
                start_new_session=True,
                pass_fds=fds,
                preexec_fn=_bound_child(cgroup),
            )
        finally:
            for fd in fds:
                os.close(fd)
        deadline = time.monotonic() + timeout
        try:
            while not sock.exists():
                if self.proc.returncode is not None or time.monotonic() > deadline:
                    errors.seek(0)
                    reason = first_line(errors.read().decode(errors="replace"))
                    if self.proc.returncode is None:
                        raise ServerGone(f"the sandboxed tmux server did not start within {timeout:g} s")
                    raise self._fail(SandboxUnavailable(refused_text(reason or "bwrap failed")))
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(self.proc.wait()), 0.01)
            await self._new_session([argv[0], "-N", "-S", str(sock), *rest], env, deadline)
            self._find_namespace()
            self.link = _link_socket(name, sock)
            sock.unlink()  # no name inside: sandboxed commands cannot command the server
        except BaseException:
            await self.stop()
            raise
        finally:
            errors.close()

    async def _new_session(self, argv: list[str], env: Mapping[str, str], deadline: float) -> None:
        """The first session, by a client that never starts a server (-N); retried while the
        socket is not listening yet."""
        from workbench.terminal.tmux_control import ServerGone, TmuxError

        while True:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                env=dict(env),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
            _, err = await proc.communicate()
            if proc.returncode == 0:
                return
            text = err.decode(errors="replace").strip()
            if "no server running" not in text and "error connecting" not in text:
                raise TmuxError(text or f"tmux exited with code {proc.returncode}")
            if time.monotonic() > deadline or (self.proc is not None and self.proc.returncode is not None):
                raise ServerGone(f"the sandboxed tmux server did not answer: {text}")
            await asyncio.sleep(0.01)

    def _find_namespace(self) -> None:
        """The sandbox's init (bwrap's child) names the pid namespace and its NSpid level."""
        from workbench.terminal.tmux_control import ServerGone

        assert self.proc is not None
        for entry in os.listdir("/proc"):
            if entry.isdigit() and _ppid(int(entry)) == self.proc.pid:
                self._ns = _pid_ns(int(entry))
                self._level = len(_nspid(int(entry))) - 1
                # the seccomp filter guards the server by its pid: it must be init's first child
                if self._ns and self._level >= 1 and _ppid(self.host_pid(SERVER_PID)) == int(entry):
                    return
        raise ServerGone("the sandbox's pid namespace or its tmux server was not found in /proc")

    def host_pid(self, inner: int) -> int:
        """The host's pid of the sandboxed process tmux or a shell calls `inner`; GONE when gone.

        Without a sandbox the pid is the host's already.
        """
        if self.proc is None:
            return inner
        known = self._pids.get(inner)
        if known is not None:
            ids = _nspid(known)
            if len(ids) > self._level and ids[self._level] == inner and _pid_ns(known) == self._ns:
                return known
            del self._pids[inner]
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            pid = int(entry)
            if _pid_ns(pid) != self._ns:
                continue
            ids = _nspid(pid)
            if len(ids) > self._level and ids[self._level] == inner:
                self._pids[inner] = pid
                return pid
        return GONE

    def refusal_hint(self, output: str, session_dir: Path | None, cwd: str, command: str = "") -> str | None:
        """A note for a failed command that the sandbox refused (see `sandbox.refusal_hint`)."""
        if self.policy is None or session_dir is None:
            return None
        return refusal_hint(self.policy, session_dir, output, cwd, command)

    def tidy(self) -> None:
        """At the session's end: remove the empty folders made for the sandbox (left if used)."""
        for folder in self._made:
            with contextlib.suppress(OSError):
                folder.rmdir()
        self._made.clear()

    async def stop(self) -> None:
        """End the sandbox (every process in it) and remove the socket's symlink."""
        proc, self.proc = self.proc, None
        self._pids.clear()
        if proc is not None:
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()  # its init gets SIGKILL (--die-with-parent): the namespace ends
            with contextlib.suppress(Exception):
                await proc.wait()
        if self.link is not None:
            with contextlib.suppress(OSError):
                self.link.unlink()
            self.link = None


def _bound_child(cgroup: Path | None) -> Callable[[], None]:
    """What bwrap's process does before exec: bind itself to this thread's life (bwrap's own
    `--die-with-parent` comes only after its exec and its clone, too late for a workbench that
    dies meanwhile: docs/DECISIONS.md), then join the session's cgroup."""
    bind = ends_with_this_thread()

    def setup() -> None:
        bind()
        if cgroup is not None:
            join_cgroup(cgroup)

    return setup


def _unreadable_copy(program: str, session_dir: Path, name: str) -> Path:
    """A program (tmux, bash) as a file the sandbox may run but not read: the kernel then makes
    what runs it non-dumpable, so sandboxed commands (same user) can neither ptrace it nor open
    its /proc files (mem, fd, environ, root). Made anew at each start: a command may have
    swapped the old one."""
    from workbench.terminal.tmux_control import ServerGone

    found = shutil.which(program)
    if found is None:
        raise ServerGone(f"{program!r} was not found on PATH")
    copy = session_dir / name
    with open(found, "rb") as source, os.fdopen(open_untrusted(copy, os.O_WRONLY | os.O_CREAT, 0o700), "wb") as fh:
        shutil.copyfileobj(source, fh)
        os.fchmod(fh.fileno(), 0o111)
    return copy


def _link_socket(name: str, sock: Path) -> Path:
    """Give the sandbox's socket tmux's path for `-L name`: a hard link, so the host reaches the
    server by the socket itself, not by a name in a folder the sandbox can write (a command
    there could swap the name for another server's socket, one outside the sandbox)."""
    from workbench.terminal.tmux_control import ServerGone

    folder = Path(os.environ.get("TMUX_TMPDIR") or "/tmp") / f"tmux-{os.getuid()}"
    with contextlib.suppress(FileExistsError):
        folder.mkdir(mode=0o700)
    link = folder / name
    with contextlib.suppress(FileNotFoundError):
        link.unlink()
    try:
        os.link(sock, link, follow_symlinks=False)
    except OSError as err:
        raise ServerGone(
            f"cannot link the sandbox's tmux socket into {folder} ({err.strerror}): the session's folder "
            "and tmux's socket folder must be on one filesystem (TMPDIR and TMUX_TMPDIR)"
        ) from err
    return link
