"""The bubblewrap sandbox: its argv driven directly (a shell inside it), then bash and tmux in it.

Real bwrap, real namespaces, a real local server; nothing mocked. Folders "outside" the
workspace are made under /var/tmp: under /tmp they would be hidden by the private /tmp anyway,
which would prove nothing about the read-only root.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import pty
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.scripted_server import ScriptedModel, call, reply
from tests.waiting import until, until_blocking, until_true
from workbench.config.settings import Settings
from workbench.core.feedback import model_text
from workbench.engine.recorder import kind_of
from workbench.pb import workbench_pb2 as pb
from workbench.terminal.host import TerminalHost
from workbench.terminal.processes import pid_alive
from workbench.terminal.sandbox import Policy, bwrap_argv, policy_for, probe, refusal_hint
from workbench.terminal.sandbox_server import GONE
from workbench.terminal.seccomp import terminal_injection_filter
from workbench.tools.registry import Toolbox, ToolContext

pytestmark = [pytest.mark.tmux, pytest.mark.sandbox]

PUBLIC = "203.0.113.7"  # TEST-NET-3: public, never answers


@pytest.fixture
def outside() -> Iterator[Path]:
    """A folder outside the workspace and outside /tmp, on the read-only root."""
    folder = Path(tempfile.mkdtemp(prefix="wbtest-sandbox-", dir="/var/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def person(outside: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A HOME with secrets, and the data folder and Workbench config beside it (all outside /tmp)."""
    home = outside / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("PRIVATE KEY\n")
    (home / ".netrc").write_text("machine example.com password hunter2\n")
    (home / "notes.txt").write_text("mine\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    (home / ".config" / "workbench").mkdir(parents=True)
    (home / ".config" / "workbench" / "config.toml").write_text('api_key = "sk-secret"\n')
    (outside / "data" / "sessions").mkdir(parents=True)
    (outside / "data" / "workbench.db").write_text("transcripts\n")
    return home


def _policy(workspace: Path, data: Path, **changes: object) -> Policy:
    settings = Settings(workspace=workspace, data_dir=data, **changes)  # type: ignore[arg-type]
    policy = policy_for(settings, workspace)
    assert policy is not None
    return policy


def _sandboxed(policy: Policy, session: Path, script: str) -> subprocess.CompletedProcess[str]:
    """bash -c SCRIPT inside the sandbox's argv, as the tmux server would run."""
    program = terminal_injection_filter()
    fds: tuple[int, ...] = ()
    if program is not None:
        fd = os.memfd_create("test-seccomp", 0)
        os.write(fd, program)
        os.lseek(fd, 0, os.SEEK_SET)
        fds = (fd,)
    try:
        argv = bwrap_argv("bwrap", policy, session, fds[0] if fds else None)
        return subprocess.run([*argv, "bash", "-c", script], capture_output=True, text=True, timeout=30, pass_fds=fds)
    finally:
        for fd in fds:
            os.close(fd)


@pytest.fixture
def session(tmp_path: Path) -> Path:
    folder = tmp_path / "session"
    folder.mkdir()
    return folder


class LocalServer:
    """A TCP server on the host's 127.0.0.1 that answers every connection with `hello`."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.sendall(b"hello")

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def local_server() -> Iterator[LocalServer]:
    server = LocalServer()
    yield server
    server.close()


def _connect_script(host: str, port: int) -> str:
    return (
        "python3 -c 'import socket,sys\n"
        f's = socket.create_connection(("{host}", {port}), timeout=5)\n'
        "print(s.recv(5).decode())'"
    )


# --- the argv, driven directly ----------------------------------------------------------------------


def test_writes_outside_the_workspace_fail_and_change_nothing(
    workspace: Path, session: Path, outside: Path, person: Path
) -> None:
    (workspace / "to-home").symlink_to(person)
    policy = _policy(workspace, outside / "data")
    script = f"""
    echo x > /etc/wb-sandbox-test && echo WROTE-ETC
    echo x > "$HOME/notes.txt" && echo WROTE-HOME
    touch "$HOME/new-file" && echo WROTE-HOME-NEW
    echo x > {workspace}/to-home/notes.txt && echo WROTE-THROUGH-LINK
    echo x > /proc/self/root{person}/notes.txt && echo WROTE-THROUGH-PROC
    echo x > /proc/1/root{person}/notes.txt && echo WROTE-THROUGH-PID1
    echo inside > {workspace}/made-inside && echo WROTE-INSIDE
    echo tmp > /tmp/private && cat /tmp/private
    """
    proc = _sandboxed(policy, session, script)
    assert "WROTE-INSIDE" in proc.stdout and "tmp" in proc.stdout
    assert "WROTE-" not in proc.stdout.replace("WROTE-INSIDE", ""), proc.stdout
    assert proc.stderr.count("Read-only file system") >= 5, proc.stderr
    assert not Path("/etc/wb-sandbox-test").exists()
    assert (person / "notes.txt").read_text() == "mine\n"
    assert not (person / "new-file").exists()
    assert (workspace / "made-inside").read_text() == "inside\n"
    assert not Path("/tmp/private").exists()  # the sandbox's /tmp is its own


def test_read_only_mode_keeps_the_workspace_read_only(workspace: Path, session: Path, outside: Path) -> None:
    (workspace / "f").write_text("before\n")
    policy = _policy(workspace, outside / "data", sandbox="read-only")
    proc = _sandboxed(
        policy, session, f"cat {workspace}/f; echo after > {workspace}/f; echo tmp > /tmp/x && cat /tmp/x"
    )
    assert proc.stdout == "before\ntmp\n", proc
    assert "Read-only file system" in proc.stderr
    assert (workspace / "f").read_text() == "before\n"


def test_secrets_the_data_folder_and_the_config_are_hidden(
    workspace: Path, session: Path, outside: Path, person: Path
) -> None:
    policy = _policy(workspace, outside / "data")
    proc = _sandboxed(
        policy,
        session,
        f"""cat ~/.ssh/id_ed25519 ~/.netrc {outside}/data/workbench.db ~/.config/workbench/config.toml
        ls -A ~/.ssh {outside}/data ~/.config/workbench; echo x > ~/.ssh/planted; echo listed""",
    )
    assert "PRIVATE KEY" not in proc.stdout and "hunter2" not in proc.stdout
    assert "transcripts" not in proc.stdout and "sk-secret" not in proc.stdout
    assert proc.stdout.strip().endswith("listed")
    assert not (person / ".ssh" / "planted").exists()
    assert "Read-only file system" in proc.stderr  # the hidden folders cannot be written either


def test_a_hidden_socket_cannot_be_reached(workspace: Path, session: Path, outside: Path) -> None:
    """Unix sockets in the filesystem are not in the network namespace: masking is what stops them
    (every socket the host listens on is masked; sandbox_hidden hides a path besides)."""
    path = outside / "control.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen()
    connect = f'python3 -c \'import socket; socket.socket(socket.AF_UNIX).connect("{path}"); print("connected")\''
    try:
        proc = _sandboxed(_policy(workspace, outside / "data"), session, connect)
        assert proc.returncode != 0 and "Connection refused" in proc.stderr
        hidden = _policy(workspace, outside / "data", sandbox_hidden=[str(path)])
        proc = _sandboxed(hidden, session, connect)
        assert proc.returncode != 0 and "Connection refused" in proc.stderr
    finally:
        server.close()


def test_the_network_is_off_unless_allowed(
    workspace: Path, session: Path, outside: Path, local_server: LocalServer
) -> None:
    off = _policy(workspace, outside / "data")
    proc = _sandboxed(off, session, _connect_script("127.0.0.1", local_server.port))
    assert proc.returncode != 0 and "Connection refused" in proc.stderr, proc
    proc = _sandboxed(off, session, _connect_script(PUBLIC, 80))
    assert proc.returncode != 0 and "Network is unreachable" in proc.stderr, proc
    on = _policy(workspace, outside / "data", sandbox_network=True)
    proc = _sandboxed(on, session, _connect_script("127.0.0.1", local_server.port))
    assert proc.returncode == 0 and proc.stdout == "hello\n", proc


def test_a_server_inside_the_sandbox_is_reachable_without_network(
    workspace: Path, session: Path, outside: Path
) -> None:
    policy = _policy(workspace, outside / "data")
    script = (
        'python3 -c \'import socket; s = socket.create_server(("127.0.0.1", 0)); '
        'print(s.getsockname()[1], flush=True); s.listen(); c, _ = s.accept(); c.sendall(b"hello")\' > /tmp/port &\n'
        "for _ in $(seq 100); do [ -s /tmp/port ] && break; sleep 0.05; done\n"
        + _connect_script("127.0.0.1", 0).replace(", 0)", ', int(open("/tmp/port").read()))')
    )
    proc = _sandboxed(policy, session, script)
    assert proc.stdout.strip() == "hello", proc


def test_terminal_injection_is_refused(workspace: Path, session: Path, outside: Path) -> None:
    policy = _policy(workspace, outside / "data")
    script = """python3 -c '
import fcntl, os, pty, termios
pid, fd = pty.fork()
if pid == 0:
    try:
        fcntl.ioctl(0, termios.TIOCSTI, b"x")
        print("injected")
    except OSError as err:
        print("refused", err.errno)
    os._exit(0)
out = b""
while True:
    try:
        chunk = os.read(fd, 100)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
print(out.decode().strip())
'"""
    proc = _sandboxed(policy, session, script)
    assert proc.stdout.strip() == "refused 1", proc


def test_capabilities_are_dropped_even_for_root(workspace: Path, session: Path, outside: Path) -> None:
    policy = _policy(workspace, outside / "data")
    proc = _sandboxed(policy, session, "grep CapEff /proc/self/status; mount -o remount,rw / && echo REMOUNTED")
    assert "CapEff:\t0000000000000000" in proc.stdout and "REMOUNTED" not in proc.stdout, proc


def test_probe_names_the_missing_binary_and_the_way_out() -> None:
    reason = probe("/nowhere/bwrap")
    assert reason is not None
    assert "/nowhere/bwrap" in reason and "apt-get install bubblewrap" in reason and "--sandbox off" in reason
    assert probe("bwrap") is None


def test_sandbox_off_has_no_policy(workspace: Path) -> None:
    assert policy_for(Settings(workspace=workspace, sandbox="off"), workspace) is None


# --- hints ------------------------------------------------------------------------------------------


def test_hints_name_what_the_sandbox_refused_and_the_setting(workspace: Path, session: Path, outside: Path) -> None:
    policy = _policy(workspace, outside / "data")
    refused = "touch: cannot touch '/etc/x': Read-only file system"
    hint = refusal_hint(policy, session, refused)
    assert hint is not None and "/etc/x" in hint and "sandbox_writable" in hint
    assert refusal_hint(policy, session, f"touch: cannot touch '{workspace}/x': Read-only file system") is None
    assert refusal_hint(policy, session, "OSError: [Errno 101] Network is unreachable") is not None
    assert "--allow-net" in (refusal_hint(policy, session, "curl: (6) Could not resolve host: pypi.org") or "")
    assert refusal_hint(policy, session, "error: expected ';' before '}' token") is None
    hidden = refusal_hint(policy, session, f"cat: {outside}/data/workbench.db: No such file or directory")
    assert hidden is not None and "hidden" in hidden
    networked = _policy(workspace, outside / "data", sandbox_network=True)
    assert refusal_hint(networked, session, "Network is unreachable") is None
    read_only = _policy(workspace, outside / "data", sandbox="read-only")
    hint = refusal_hint(read_only, session, f"rm: cannot remove '{workspace}/f': Read-only file system")
    assert hint is not None and "workspace-write" in hint


# --- bash and tmux in the sandbox (the session's tmux server runs inside it) ------------------------


class SandboxedTerm:
    """bash and tmux called the way the loop does, on one TerminalHost with the given settings."""

    def __init__(self, workspace: Path, settings: Settings, tmp: Path):
        self.events: list[tuple[str, Any]] = []
        self.host = TerminalHost(
            f"wbtest-{uuid.uuid4().hex[:10]}", publish=lambda m: self.events.append((kind_of(m), m))
        )
        self.ctx = ToolContext(workspace=workspace, settings=settings, session_dir=tmp / "session", terminal=self.host)
        self.toolbox = Toolbox(["bash", "tmux"])
        self.ids = itertools.count(1)

    async def call(self, tool: str, **args: Any) -> pb.ToolResult:
        call = pb.ToolCall(id=f"c{next(self.ids)}", name=tool, arguments=json.dumps(args))
        return await self.toolbox.invoke(call, self.ctx.for_call(call.id))

    async def ok(self, tool: str, **args: Any) -> str:
        result = await self.call(tool, **args)
        assert not result.is_error, model_text(result)
        return result.output


@pytest.fixture
async def open_session(workspace: Path, tmp_path: Path, outside: Path) -> AsyncIterator[Callable[..., SandboxedTerm]]:
    sessions: list[SandboxedTerm] = []

    def make(**changes: Any) -> SandboxedTerm:
        settings = Settings(workspace=workspace, data_dir=outside / "data", **changes)
        sessions.append(SandboxedTerm(workspace, settings, tmp_path))
        return sessions[-1]

    yield make
    for session_ in sessions:
        await session_.host.close()


async def test_bash_writes_only_in_the_workspace_and_says_why(
    open_session: Callable[..., SandboxedTerm], workspace: Path, person: Path
) -> None:
    s = open_session()
    (workspace / "to-home").symlink_to(person)
    for target in [
        "/etc/wb-sandbox-test",
        "$HOME/notes.txt",
        "to-home/notes.txt",
        f"/proc/self/root{person}/notes.txt",
    ]:
        result = await s.call("bash", command=f"echo x > {target}")
        assert result.is_error and "Read-only file system" in result.output, model_text(result)
        assert "sandbox:" in result.error and "sandbox_writable" in result.error and "--sandbox off" in result.error
    assert not Path("/etc/wb-sandbox-test").exists()
    assert (person / "notes.txt").read_text() == "mine\n"
    assert await s.ok("bash", command="echo inside > made && cat made") == "inside\n"
    assert (workspace / "made").read_text() == "inside\n"


async def test_bash_cannot_read_secrets_or_transcripts(
    open_session: Callable[..., SandboxedTerm], outside: Path, person: Path
) -> None:
    s = open_session()
    result = await s.call("bash", command=f"cat ~/.ssh/id_ed25519 {outside}/data/workbench.db")
    assert result.is_error and "PRIVATE KEY" not in result.output and "transcripts" not in result.output
    assert "hidden" in result.error
    assert await s.ok("bash", command=f"ls -A ~/.ssh {outside}/data; cat ~/.netrc; echo end") == (
        f"{outside}/data:\n\n{person}/.ssh:\nend\n"
    )


async def test_network_is_off_by_default_and_on_when_allowed(
    open_session: Callable[..., SandboxedTerm], local_server: LocalServer
) -> None:
    connect = _connect_script("127.0.0.1", local_server.port)
    result = await open_session().call("bash", command=connect)
    assert result.is_error and "Connection refused" in result.output
    assert "no network" in result.error and "--allow-net" in result.error
    assert await open_session(sandbox_network=True).ok("bash", command=connect) == "hello\n"


async def test_a_server_in_a_tmux_window_is_reachable_from_bash_without_network(
    open_session: Callable[..., SandboxedTerm],
) -> None:
    s = open_session()
    serve = 'python3 -c \'import socket; s = socket.create_server(("127.0.0.1", 0)); '
    serve += 'open("/tmp/port", "w").write(str(s.getsockname()[1]))\nwhile True: s.accept()[0].sendall(b"hello")\''
    await s.ok("tmux", action="new", window="srv", command=serve)
    wait = "for _ in $(seq 200); do [ -s /tmp/port ] && break; sleep 0.05; done; "
    connect = _connect_script("127.0.0.1", 0).replace(", 0)", ', int(open("/tmp/port").read()))')
    assert await s.ok("bash", command=wait + connect) == "hello\n"


async def test_environment_and_directory_persist_and_the_shell_is_sandboxed(
    open_session: Callable[..., SandboxedTerm], workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-leak-sandboxed")
    s = open_session()
    assert "sk-leak-sandboxed" not in await s.ok("bash", command="env")
    (workspace / "sub").mkdir()
    await s.ok("bash", command="cd sub && export WB_SANDBOX_VAR=kept")
    assert await s.ok("bash", command='echo "$PWD $WB_SANDBOX_VAR"') == f"{workspace}/sub kept\n"
    assert "Read-only file system" in (await s.call("bash", command="touch /etc/x")).output
    # a pid of the sandbox that names no process maps to one no process has (not 0: "my group")
    assert s.host.sandbox.host_pid(4_000_000) == GONE and not pid_alive(GONE)


async def test_timeout_and_cancel_work_sandboxed(open_session: Callable[..., SandboxedTerm], workspace: Path) -> None:
    s = open_session()
    result = await s.call("bash", command="echo started; sleep 60", timeout=0.5)
    assert result.is_error and "timed out after 0.5 s" in result.error
    await s.ok("tmux", action="send", window="bash-1", keys="C-c")
    assert "exited with code 130" in await s.ok("tmux", action="wait", window="bash-1", timeout=5)
    task = asyncio.create_task(s.call("bash", command=f"echo $$ > {workspace}/pid; sleep 100"))
    await until(lambda: (workspace / "pid").exists() and (workspace / "pid").read_text().strip(), what="the pid")
    started = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - started < 3
    assert await s.ok("bash", command="echo still here") == "still here\n"


async def test_terminal_injection_is_refused_in_the_shell(open_session: Callable[..., SandboxedTerm]) -> None:
    s = open_session()
    inject = "python3 -c 'import fcntl, termios; fcntl.ioctl(0, termios.TIOCSTI, b\"x\")'"
    result = await s.call("bash", command=inject)
    assert result.is_error and "Operation not permitted" in result.output, model_text(result)


async def test_sandbox_off_runs_as_before(open_session: Callable[..., SandboxedTerm], outside: Path) -> None:
    s = open_session(sandbox="off")
    await s.ok("bash", command=f"echo written > {outside}/by-bash")
    assert (outside / "by-bash").read_text() == "written\n"
    pid = int(await s.ok("bash", command="echo $$"))
    assert pid == s.host.agent("main").shell.window.pid  # type: ignore[union-attr]  # the host's own pid
    assert s.host.sandbox.proc is None


async def test_missing_bubblewrap_is_one_clear_error_told_once(open_session: Callable[..., SandboxedTerm]) -> None:
    s = open_session(bwrap_path="/nowhere/bwrap")
    for tool, args in [("bash", {"command": "echo hi"}), ("tmux", {"action": "list"}), ("bash", {"command": "id"})]:
        result = await s.call(tool, **args)
        assert result.is_error and not result.output
        assert "/nowhere/bwrap" in result.error and "apt-get install bubblewrap" in result.error
        assert "--sandbox off" in result.error and "\n" not in result.error
    notices = [m for kind, m in s.events if kind == "notice"]
    assert len(notices) == 1 and "apt-get install bubblewrap" in notices[0].text
    assert not [kind for kind, _ in s.events if kind == "terminal_ready"]  # nothing ran unsandboxed


def test_killing_workbench_ends_everything_in_the_sandbox(workspace: Path, tmp_path: Path) -> None:
    """kill -9 of the process that started the sandbox: bwrap's --die-with-parent ends it all."""
    script = f"""
import asyncio, json
from pathlib import Path
from workbench.config.settings import Settings
from workbench.tools.registry import Toolbox, ToolContext
from workbench.terminal.host import TerminalHost
from workbench.pb import workbench_pb2 as pb

async def main():
    host = TerminalHost("wbtest-die-{uuid.uuid4().hex[:8]}")
    ws = Path({str(workspace)!r})
    ctx = ToolContext(workspace=ws, settings=Settings(workspace=ws, data_dir=ws / "data"),
                      session_dir=ws / "s", terminal=host)
    command = "setsid nohup sleep 300 >/dev/null 2>&1 & echo ok"
    call = pb.ToolCall(id="c1", name="bash", arguments=json.dumps({{"command": command}}))
    result = await Toolbox(["bash"]).invoke(call, ctx)
    print(host.sandbox.proc.pid, result.output.split()[-1], flush=True)
    await asyncio.sleep(300)

asyncio.run(main())
"""
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=Path.cwd())
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        bwrap_pid, answer = line.split(" ", 1)
        assert answer.strip() == "ok", line
        namespace = os.stat(f"/proc/{bwrap_pid}/ns/pid").st_ino  # bwrap's own: the host's
        inside = [p for p in _pids() if _ppid(p) == int(bwrap_pid)]
        assert inside
        sandbox_ns = os.stat(f"/proc/{inside[0]}/ns/pid").st_ino
        assert sandbox_ns != namespace
        assert len([p for p in _pids() if _ns_of(p) == sandbox_ns]) >= 4  # init, tmux, bash, sleep
    finally:
        proc.kill()
        proc.wait()
    until_blocking(lambda: not [p for p in _pids() if _ns_of(p) == sandbox_ns], 10, "the sandbox's processes to end")


def _pids() -> list[int]:
    return [int(e) for e in os.listdir("/proc") if e.isdigit()]


def _ppid(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[1])
    except (OSError, IndexError):
        return 0


def _ns_of(pid: int) -> int:
    try:
        return os.stat(f"/proc/{pid}/ns/pid").st_ino
    except OSError:
        return 0


async def test_links_planted_in_the_session_folder_lead_the_host_nowhere(
    open_session: Callable[..., SandboxedTerm], outside: Path
) -> None:
    """The session's `io/` is writable in the sandbox; the host reads there outside it. The rest of
    the session's folder (commands, config) is read-only to the sandbox."""
    s = open_session()
    victim, secret = outside / "victim", outside / "secret"
    victim.write_text("untouched\n")
    secret.write_text("SECRET\n")
    # a command's file, a link to a file outside: the host would write through it; not possible
    result = await s.call("bash", command=f'ln -s {victim} "$__wb_dir/r2.sh"')
    assert result.is_error and "Read-only file system" in result.output, model_text(result)
    assert await s.ok("bash", command="echo next") == "next\n"
    assert victim.read_text() == "untouched\n"
    # its own output file swapped for a link to a file outside: the host must not read through it
    result = await s.call("bash", command=f'rm -f "$__wb_out"; ln -s {secret} "$__wb_out"; echo hi; sleep 0.3')
    assert "SECRET" not in model_text(result)
    result = await s.call("bash", command=f'rm -f "$__wb_out"; ln -s {secret} "$__wb_out"; sleep 60', timeout=0.5)
    assert "timed out" in result.error
    assert "SECRET" not in await s.ok("tmux", action="capture", window="bash-1")
    assert secret.read_text() == "SECRET\n" and victim.read_text() == "untouched\n"


async def test_a_swapped_tmux_socket_does_not_lead_the_host_out_of_the_sandbox(
    open_session: Callable[..., SandboxedTerm], tmp_path: Path
) -> None:
    decoy = tmp_path / "decoy.sock"  # an unsandboxed server, with the session name ours has
    await _tmux("-S", str(decoy), "-f", "/dev/null", "new-session", "-d", "-s", "workbench")
    try:
        s = open_session()
        await s.ok("bash", command=f'rm -f "$__wb_io/tmux.sock"; ln -s {decoy} "$__wb_io/tmux.sock"')
        await s.ok("tmux", action="new", window="w", command="sleep 100")
        assert "w\t" in await s.ok("tmux", action="list")
        windows = await _tmux("-S", str(decoy), "list-windows")
        assert len(windows.splitlines()) == 1, windows  # the decoy's own window only
    finally:
        await _tmux("-S", str(decoy), "kill-server")


async def _tmux(*args: str) -> str:
    proc = await asyncio.create_subprocess_exec("tmux", *args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out, _ = await proc.communicate()
    return out.decode()


async def test_sandboxed_commands_cannot_command_the_tmux_server(open_session: Callable[..., SandboxedTerm]) -> None:
    """Its socket has no name inside, SIGUSR1 (which remakes it) is refused, and the server is not
    dumpable: no ptrace, no /proc/2/mem or fd."""
    s = open_session()
    command = 'tmux ls; ls "$__wb_io" | grep -cx tmux.sock; kill -USR1 2; cat /proc/2/environ'
    result = await s.call("bash", command=command)
    assert result.is_error
    assert "no server running" in result.output or "error connecting" in result.output, result.output
    assert "\n0\n" in result.output  # no socket in the session's folder
    assert "use the tmux tool" in result.error  # the hint
    assert "kill: (2) - Operation not permitted" in result.output
    assert "/proc/2/environ: Permission denied" in result.output
    probe = (
        "python3 -c 'import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); "
        "print(libc.ptrace(16, 2, 0, 0), os.strerror(ctypes.get_errno()))'"
    )
    assert await s.ok("bash", command=probe) == "-1 Operation not permitted\n"
    other = "bash -c 'sleep 100 & p=$!; kill -USR1 $p; wait $p; echo $?'"
    assert (await s.ok("bash", command=other)).endswith("138\n")  # SIGUSR1 to another process: as usual


async def test_an_attached_person_s_client_runs_nothing_for_the_sandbox(
    open_session: Callable[..., SandboxedTerm], outside: Path
) -> None:
    """`detach-client -E CMD` makes a client run CMD where it runs: outside, for a person attached."""
    s = open_session()
    await s.ok("bash", command="true")
    pid, fd = pty.fork()
    if pid == 0:  # the person, attached from a terminal of their own
        os.execvp("tmux", ["tmux", "-L", s.host.socket_name, "attach"])
    try:
        await until_true(lambda: _attached(s), what="the person's client to attach")
        planted = outside / "escaped"
        detach = f"tmux detach-client -t $c -E 'touch {planted}'"
        await s.call("bash", command=f"for c in $(tmux list-clients -F '#{{client_name}}'); do {detach}; done")
        await asyncio.sleep(0.5)
        assert not planted.exists()
    finally:
        os.kill(pid, signal.SIGKILL)
        await asyncio.to_thread(os.waitpid, pid, 0)
        os.close(fd)


async def _attached(s: SandboxedTerm) -> bool:
    return len(await s.host.tmux("list-clients")) >= 2  # the control client and the person's


async def test_a_session_s_sandbox_is_its_own_when_a_run_starts_the_server_ahead(
    settings: Settings, scripted_model: ScriptedModel, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A run starts the tmux server before its first bash call: the sandbox it starts in follows
    the session's settings and workspace, never the built-in defaults with the process's folder
    as the workspace (a `read-only` session wrote into the folder workbench was started in)."""
    from workbench.session.session import Session

    elsewhere = tmp_path / "started-here"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    settings.sandbox = "read-only"
    scripted_model.add(reply("", call("bash", command="pwd; touch made.txt")), reply("done"))
    session = await Session.open(settings)
    try:
        session.send("go")
        await session.wait()
        policy = session.terminal.sandbox.policy
    finally:
        await session.close()
    assert policy is not None and (policy.mode, policy.workspace) == ("read-only", settings.workspace)
    assert not (settings.workspace / "made.txt").exists() and not (elsewhere / "made.txt").exists()
    (result,) = [m["content"] for m in scripted_model.requests[1]["messages"] if m["role"] == "tool"]
    assert str(settings.workspace) in result and "Read-only file system" in result, result


async def test_links_named_like_outputs_leave_later_calls_working(open_session: Callable[..., SandboxedTerm]) -> None:
    """Links named like the session's output files, planted where outputs go (finding 9): later
    calls run as before (a run's file names cannot be guessed ahead)."""
    s = open_session()
    await s.ok("bash", command='for i in $(seq 1 60); do ln -s /etc/passwd-nowhere "$__wb_io/r$i.out"; done')
    for n in range(3):
        assert await s.ok("bash", command=f"echo call-{n}") == f"call-{n}\n"
