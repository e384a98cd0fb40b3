"""The bubblewrap sandbox: its argv driven directly (a shell inside it), then bash and tmux in it.

Real bwrap, real namespaces, a real local server; nothing mocked. Folders "outside" the
workspace are made under /var/tmp: under /tmp they would be hidden by the private /tmp anyway,
which would prove nothing about the read-only root.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from workbench.config import Settings
from workbench.sandbox import Policy, bwrap_argv, policy_for, probe, refusal_hint
from workbench.seccomp import terminal_injection_filter

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
