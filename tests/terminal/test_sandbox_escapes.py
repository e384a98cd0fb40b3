"""The ways out of the sandbox an outside review found (issue 23), each re-run as it was found.

Real bwrap, a real tmux server with a person's real tmux client attached, real git on the host,
real Unix socket listeners; nothing mocked. What "escaped" is always a file written outside
the sandbox (under /var/tmp, on the read-only root) by a command the host ran.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pty
import shutil
import signal
import socket
import subprocess
import threading
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cli.test_cli_commands import scripted
from tests.scripted_server import ScriptedModel, call, reply
from tests.terminal.test_sandbox import (  # noqa: F401 - the sandbox fixtures
    SandboxedTerm,
    open_session,
    outside,
    person,
)
from workbench.cli.main import main
from workbench.core.feedback import model_text

pytestmark = [pytest.mark.tmux, pytest.mark.sandbox]


async def _attach_and_detach(s: SandboxedTerm) -> None:
    """A person attaches to the agent's tmux server from a terminal of their own, then leaves."""
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp("tmux", ["tmux", "-L", s.host.socket_name, "attach"])
    try:
        for _ in range(200):  # attached (the control client and the person's), or already gone
            if await asyncio.to_thread(os.waitpid, pid, os.WNOHANG) != (0, 0):
                return  # detached at once: by a hook
            if len(await s.host.tmux("list-clients")) >= 2:
                await asyncio.sleep(0.5)  # a client-attached hook runs now
                return
            await asyncio.sleep(0.02)
        raise AssertionError("the person's client did not attach")
    finally:
        with contextlib.suppress(ProcessLookupError, ChildProcessError):
            os.kill(pid, signal.SIGKILL)
            await asyncio.to_thread(os.waitpid, pid, 0)
        os.close(fd)


async def test_a_planted_tmux_hook_never_runs_when_the_person_attaches(
    open_session: Callable[..., SandboxedTerm],  # noqa: F811
    outside: Path,  # noqa: F811
) -> None:
    """Escape 1: a hook appended to the session's tmux.conf, then the server killed from inside so
    that the host restarts it (and reads the file again); the person attaches."""
    s = open_session()
    pwned = outside / "PWNED"
    hook = f"set-hook -g client-attached 'detach-client -E \"id > {pwned}\"'"
    conf = '"$(dirname "$(ls -d /tmp/workbench-*/bashrc | head -1)")/tmux.conf"'
    await s.call("bash", command=f"echo {_quoted(hook)} >> {conf}; echo {_quoted(hook)} >> $__wb_dir/tmux.conf")
    await s.call("bash", command="kill -9 2")  # the sandbox's tmux server
    await s.ok("bash", command="echo restarted")  # a fresh server, from the session's folder
    await _attach_and_detach(s)
    assert not pwned.exists(), pwned.read_text()
    assert "client-attached" not in (s.host.dir / "tmux.conf").read_text()  # type: ignore[operator]


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


# --- escape 2: git runs on the host what the agent planted in .git ---------------------------------


def _git(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """git as the person runs it, outside the sandbox."""
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=30)


def _repo(folder: Path) -> Path:
    folder.mkdir(exist_ok=True)
    _git(folder, "init", "-q", "-b", "main")
    _git(folder, "config", "user.name", "Person")
    _git(folder, "config", "user.email", "person@example.com")
    (folder / "README").write_text("hello\n")
    _git(folder, "add", "README")
    _git(folder, "commit", "-qm", "first")
    return folder


def _plant(marks: Path) -> list[str]:
    """Each way the review planted a hook or core.fsmonitor, one bash call each."""
    hook = f"printf '#!/bin/sh\\ntouch {marks}/$1\\n'"
    return [
        f"git config core.fsmonitor 'touch {marks}/fsmonitor; false'",
        f"H=.gi; H=${{H}}t/hooks; {hook.replace('$1', 'pre-commit')} > $H/pre-commit && chmod +x $H/pre-commit",
        "cd .git",
        f"{hook.replace('$1', 'post-checkout')} > hooks/post-checkout; chmod +x hooks/post-checkout; cd ..",
        f"git config core.hooksPath myhooks; mkdir -p myhooks; {hook.replace('$1', 'hookspath')} > myhooks/pre-commit;"
        " chmod +x myhooks/pre-commit",
        f"python3 -c \"open('.gi'+'t/hooks/pre-commit','w').write('#!/bin/sh\\\\ntouch {marks}/python')\"",
        f"mv .git .git2 && cp -r .git2 .git && git config core.fsmonitor 'touch {marks}/moved; false'",
        f"rm -rf .git/hooks; mkdir -p .git/hooks; {hook.replace('$1', 'replaced')} > .git/hooks/pre-commit",
        f"printf '[core]\\n\\tfsmonitor = touch {marks}/base64; false\\n' | base64 | (base64 -d >> .git/config)",
        f"printf '* filter=x\\n' > .git/info/attributes; git config filter.x.clean 'touch {marks}/filter; cat'",
        f"printf 'gitdir: {marks}\\n' > .git.new && mv .git.new .git",
    ]


async def test_nothing_planted_in_git_runs_when_the_person_uses_git(
    open_session: Callable[..., SandboxedTerm],  # noqa: F811
    workspace: Path,
    outside: Path,  # noqa: F811
) -> None:
    """Escape 2: hooks and core.fsmonitor planted from the sandox, by every route the review used;
    then the person's own `git status` and `git commit` on the host."""
    _repo(workspace)
    marks = outside / "marks"
    marks.mkdir()
    s = open_session()
    refused = []
    for command in _plant(marks):
        result = await s.call("bash", command=command)
        if result.is_error:
            refused.append(result.error)
    (workspace / "README").write_text("changed\n")
    assert _git(workspace, "status").returncode == 0
    commit = _git(workspace, "commit", "-qam", "by the person")
    assert commit.returncode == 0, commit.stderr
    _git(workspace, "checkout", "-qb", "other")
    assert sorted(p.name for p in marks.iterdir()) == []
    assert "fsmonitor" not in (workspace / ".git" / "config").read_text()
    assert (workspace / ".git").is_dir() and not (workspace / ".git2").exists()
    assert any("git" in e and "sandbox:" in e for e in refused), refused  # the hint names why


# what a script run in the sandbox writes (the guard reads typed commands, not a script's body)
_COMMONDIR_SCRIPT = """
import os, shutil, subprocess
os.makedirs("evil", exist_ok=True)
shutil.copytree(".git/objects", "evil/objects", dirs_exist_ok=True)
shutil.copytree(".git/refs", "evil/refs", dirs_exist_ok=True)
shutil.copy(".git/HEAD", "evil/HEAD")
config = "[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = touch MARKS/commondir; false\\n"
open("evil/config", "w").write(config)
open(".git/" + "commondir", "w").write("../evil\\n")
"""

_SUBMODULE_SCRIPT = """
import os, subprocess
sha = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
os.makedirs(".git/" + "modules/sub", exist_ok=True)
subprocess.run(["git", "init", "-q", "--bare", ".git/" + "modules/sub"])
config = "[core]\\n\\tfsmonitor = touch MARKS/submodule; false\\n\\tbare = false\\n"
open(".git/" + "modules/sub/config", "a").write(config)
os.makedirs("sub", exist_ok=True)
open("sub/.git", "w").write("gitdir: ../.git/modules/sub\\n")
subprocess.run(["git", "update-index", "--add", "--cacheinfo", "160000," + sha + ",sub"])
"""


@pytest.mark.parametrize("script", [_COMMONDIR_SCRIPT, _SUBMODULE_SCRIPT], ids=["commondir", "modules"])
async def test_a_script_cannot_point_git_at_a_config_of_its_own(
    open_session: Callable[..., SandboxedTerm],  # noqa: F811
    workspace: Path,
    outside: Path,  # noqa: F811
    script: str,
) -> None:
    """Issue 39 items 1 and 2: `.git/commondir` naming a copy of the repository with
    core.fsmonitor set, or a submodule's config planted in `.git/modules`, each written by a
    script (python3 mk.py); whether or not the file existed, the person's `git status` runs
    nothing of it."""
    _repo(workspace)
    marks = outside / "marks"
    marks.mkdir()
    (workspace / "mk.py").write_text(script.replace("MARKS", str(marks)))
    s = open_session()
    await s.call("bash", command="python3 mk.py")
    for command in (["status"], ["diff"], ["submodule", "status"]):
        _git(workspace, *command)
    assert sorted(p.name for p in marks.iterdir()) == []
    assert (workspace / ".git" / "commondir").read_text() == "./\n"  # Workbench's stand-in, unchanged
    assert list((workspace / ".git" / "modules").iterdir()) == []
    assert _git(workspace, "log", "--format=%s").stdout == "first\n"  # the person's repository still works


@pytest.mark.parametrize(
    "path",
    [
        "commondir",
        "config.worktree",
        "objects/info/alternates",
        "worktrees/x/gitdir",
        "modules/x/config",
        "remotes/up",
        "branches/up",
        "info/attributes",
        "hooks/pre-commit",
    ],
)
async def test_every_file_git_reads_as_configuration_is_read_only_whether_or_not_it_exists(
    open_session: Callable[..., SandboxedTerm],  # noqa: F811
    workspace: Path,
    path: str,
) -> None:
    _repo(workspace)
    for name in ("hooks", "info", "branches"):  # git init made these; the sandbox must make them anew
        shutil.rmtree(workspace / ".git" / name, ignore_errors=True)
    s = open_session()
    write = f"import os; p='.gi'+'t/{path}'; os.makedirs(os.path.dirname(p), exist_ok=True); open(p, 'a').write('x')"
    await s.call("bash", command=f'python3 -c "{write}"')
    moved = "import os; os.rename('.gi'+'t/objects', '.gi'+'t/o2')"
    await s.call("bash", command=f'python3 -c "{moved}"')
    target = workspace / ".git" / path
    assert not target.exists() or b"x" not in target.read_bytes(), path
    assert (workspace / ".git" / "objects").is_dir() and not (workspace / ".git" / "o2").exists()
    assert await s.ok("bash", command="echo a > f && git add f && git commit -qm two && git log --format=%s") == (
        "two\nfirst\n"
    )


async def test_ordinary_git_work_still_works_in_the_sandbox(
    open_session: Callable[..., SandboxedTerm],  # noqa: F811
    workspace: Path,
) -> None:
    _repo(workspace)
    s = open_session()
    steps = {
        "echo a > f && git add f && git status --short": "A  f\n",
        "git commit -qm one && git log --oneline | wc -l": "2\n",
        "git checkout -qb feature && git branch --show-current": "feature\n",
        "echo b >> f && git commit -qam two && git checkout -q main && cat f": "a\n",
        "git branch --list | tr -d ' *'": "feature\nmain\n",
        "git merge -q feature && cat f && git stash list | wc -l": "a\nb\n0\n",
        "git tag v1 && git tag": "v1\n",
    }
    for command, expected in steps.items():
        assert await s.ok("bash", command=command) == expected, command
    result = await s.call("bash", command="git config user.name Agent")
    assert result.is_error and "git config" in result.error and "sandbox:" in result.error, model_text(result)
    assert _git(workspace, "log", "--format=%s").stdout == "two\none\nfirst\n"  # the person sees the work


async def test_a_worktree_s_git_file_and_its_folders_are_protected(
    open_session: Callable[..., SandboxedTerm],  # noqa: F811
    workspace: Path,
    outside: Path,  # noqa: F811
) -> None:
    """A worktree's `.git` is a file naming a folder of the main repository: both are protected
    (here the main repository is writable to the sandbox through sandbox_writable)."""
    main = _repo(outside / "main")
    workspace.rmdir()
    _git(main, "worktree", "add", "-q", str(workspace), "-b", "wt")
    marks = outside / "marks"
    marks.mkdir()
    s = open_session(sandbox_writable=[main])
    for command in _plant(marks):
        await s.call("bash", command=f"cd {workspace}; {command}")
    work = f"cd {workspace} && echo x > g && git add g && git commit -qm wt && git log -1 --format=%s"
    assert await s.ok("bash", command=work) == "wt\n"
    (workspace / "README").write_text("changed\n")
    assert _git(workspace, "commit", "-qam", "by the person").returncode == 0
    assert _git(main, "status").returncode == 0
    assert sorted(p.name for p in marks.iterdir()) == []
    assert (workspace / ".git").read_text().startswith(f"gitdir: {main}")


async def test_the_project_s_workbench_config_is_read_only_whether_or_not_it_exists(
    open_session: Callable[..., SandboxedTerm],  # noqa: F811
    workspace: Path,
) -> None:
    s = open_session()
    plant = "mkdir -p .workbench/skills; echo 'sandbox = \"off\"' > .workbench/config.toml"
    result = await s.call("bash", command=plant)
    assert result.is_error and ".workbench/" in result.error and "sandbox:" in result.error, model_text(result)
    assert not (workspace / ".workbench" / "config.toml").exists()
    await s.host.close()
    assert not (workspace / ".workbench").exists()  # made empty for the session, gone after it
    (workspace / ".workbench").mkdir()
    s = open_session()
    assert (await s.call("bash", command=plant)).is_error
    assert list((workspace / ".workbench").iterdir()) == []


# --- escape 3: the host's Unix sockets -------------------------------------------------------------


class Listener:
    """A Unix socket the host listens on, recording what it receives."""

    def __init__(self, path: Path):
        self.path = path
        self.got = b""
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.bind(str(path))
        self.sock.listen()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                self.got += conn.recv(100)

    def close(self) -> None:
        self.sock.close()
        with contextlib.suppress(OSError):
            self.path.unlink()


def _run_folder() -> Path:
    """A folder under /run this user can make a socket in (root: /run itself)."""
    for folder in (Path("/run"), Path(f"/run/user/{os.getuid()}"), Path("/run/lock")):
        if os.access(folder, os.W_OK):
            return folder
    pytest.skip("no folder under /run is writable here")


def _send(path: Path) -> str:
    return (
        "python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); "
        f's.connect("{path}"); s.sendall(b"RUNSOCK-FROM-SANDBOX")\''
    )


async def test_host_sockets_in_run_and_in_home_cannot_be_reached(
    open_session: Callable[..., SandboxedTerm],  # noqa: F811
    person: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Escape 3: a listener in /run, one in $HOME, and the ssh agent's socket named by SSH_AUTH_SOCK."""
    name = f"wbtest-{uuid.uuid4().hex[:8]}.sock"
    listeners = [Listener(_run_folder() / name), Listener(person / name), Listener(person / f"agent-{name}")]
    monkeypatch.setenv("SSH_AUTH_SOCK", str(listeners[2].path))
    try:
        s = open_session()
        for listener in listeners:
            result = await s.call("bash", command=_send(listener.path))
            assert result.is_error and "sandbox_run_visible" in result.error, model_text(result)  # the hint
        assert [listener.got for listener in listeners] == [b"", b"", b""]
        result = await s.call(
            "bash", command=f"ls {_run_folder()}; socat - UNIX-CONNECT:{listeners[0].path} </dev/null"
        )
        assert name not in result.output
    finally:
        for listener in listeners:
            listener.close()


async def test_a_path_under_run_can_be_shown_by_the_person_s_setting(
    open_session: Callable[..., SandboxedTerm],  # noqa: F811
) -> None:
    listener = Listener(_run_folder() / f"wbtest-{uuid.uuid4().hex[:8]}.sock")
    try:
        s = open_session(sandbox_run_visible=[str(listener.path)])
        await s.ok("bash", command=_send(listener.path))  # the person let it through
        for _ in range(100):
            if listener.got:
                break
            await asyncio.sleep(0.02)
        assert listener.got == b"RUNSOCK-FROM-SANDBOX"
        s = open_session()
        result = await s.call("bash", command=f"cat {listener.path}")
        assert result.is_error and "sandbox_run_visible" in result.error, model_text(result)
    finally:
        listener.close()


def test_git_control_files_made_during_the_session_are_reported_at_its_end(
    scripted_model: ScriptedModel,
    workspace: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """What the sandbox leaves open (a nested repository, `git init` where there was none) is told
    to the person as the session ends; the agent's ordinary commits in the protected one are not."""
    _repo(workspace)
    nested = "mkdir sub && cd sub && git init -q && git config core.fsmonitor 'touch /tmp/x; false'"
    work = "echo a > f && git add f && git commit -qm work"
    scripted_model.add(reply("", call("bash", command=nested), call("bash", command=work)), reply("done"))
    assert main(scripted(scripted_model, workspace, tmp_path / "d", "go")) == 0
    err = capsys.readouterr().err
    line = next((x for x in err.splitlines() if "git control files appeared" in x), "")
    assert "sub/.git/config" in line and "core.fsmonitor" in line, err
    assert ".git/config," not in line.replace("sub/.git/config", "")  # the protected repository's own: not told


def test_the_report_names_the_file_that_holds_the_command_behind_a_pointer(
    scripted_model: ScriptedModel,
    workspace: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A `.git` file made in the work tree names a folder outside any `.git`: the report names the
    pointer, where it points, and the config there with the command it holds."""
    _repo(workspace)
    plant = (
        "mkdir -p other vault && git init -q --bare vault/repo && "
        "git config --file vault/repo/config core.fsmonitor 'touch /tmp/y; false' && "
        "python3 -c \"open('other/.gi' + 't', 'w').write('gitdir: ../vault/repo')\""
    )
    scripted_model.add(reply("", call("bash", command=plant)), reply("done"))
    assert main(scripted(scripted_model, workspace, tmp_path / "d", "go")) == 0
    err = capsys.readouterr().err
    line = next((x for x in err.splitlines() if "git control files appeared" in x), "")
    assert "other/.git (names ../vault/repo)" in line, err
    assert "vault/repo/config (core.fsmonitor = touch /tmp/y; false)" in line, err
    assert "commondir" not in line and "alternates" not in line  # Workbench's own stand-ins: not told


async def test_a_restart_never_trusts_the_session_s_config_files(
    open_session: Callable[..., SandboxedTerm],  # noqa: F811
) -> None:
    """tmux.conf and the rc file are written anew at every server start, whatever changed them."""
    s = open_session()
    await s.ok("bash", command="true")
    folder = s.host.dir
    assert folder is not None
    conf, rc = (folder / "tmux.conf").read_text(), (folder / "bashrc").read_text()
    for name in ("tmux.conf", "bashrc"):
        (folder / name).unlink()
        (folder / name).symlink_to("/etc/hostname")  # anything but ours, even a link
    os.kill(s.host.server_pid, signal.SIGKILL)
    assert await s.ok("bash", command="echo again") == "again\n"
    assert not (folder / "tmux.conf").is_symlink() and (folder / "tmux.conf").read_text() == conf
    assert not (folder / "bashrc").is_symlink() and (folder / "bashrc").read_text() == rc
