"""The session's tmux server (`TmuxServer`, held by `TerminalHost` as `host.tmux_server`): started
on first use (its private folder, tmux.conf and rc file written anew, the owner record saved
before the server exists, the sandbox around it, the control client attached), every command
time-bounded (through the control client, or libtmux for answers a program chose), a server
that stalls killed and replaced with the agents told their shells were lost, a server killed
from outside replaced on the next call. `tmux_server.start_server` starts the process.

The host gives it the agents' states (`agents`, the host's own dict): a server that is lost
clears their shells and windows and leaves each a note; the rest (shells, windows, bash) is the
host's (`terminal/host.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import shutil
import signal
import tempfile
from collections.abc import Callable
from pathlib import Path

import libtmux
from google.protobuf.message import Message

from workbench.pb import workbench_pb2 as pb
from workbench.terminal.leftovers import (
    end_session,
    in_cgroup,
    kill_cgroup,
    make_cgroup,
    owner_record,
    records_dir,
    remove_record,
    write_record,
)
from workbench.terminal.processes import kill_session, pid_alive, start_time
from workbench.terminal.sandbox import SANDBOX_WRITES, write_untrusted
from workbench.terminal.sandbox_server import TmuxSandbox
from workbench.terminal.shell_env import BASH_RC, TMUX_CONF, shell_environment
from workbench.terminal.shell_reports import REPORTS, ShellReports
from workbench.terminal.state import AgentState
from workbench.terminal.tmux_control import ControlClient, ServerGone, ServerStalled, TmuxError
from workbench.terminal.tmux_server import (
    COMMAND_TIMEOUT,
    SESSION,
    control_line,
    libtmux_cmd,
    server_argv,
    start_server,
)


class TmuxServer:
    """The private tmux server of one session, its control client and its time-bounded commands."""

    def __init__(
        self,
        socket_name: str,
        publish: Callable[[Message], object] | None = None,
        *,
        env_passthrough: tuple[str, ...] = (),
        data_dir: Path | None = None,
        session_id: str = "",
        use_cgroup: bool = True,
        agents: dict[str, AgentState] | None = None,
    ):
        self.socket_name = socket_name
        self.publish = publish or (lambda message: None)
        self.env_passthrough = env_passthrough
        # what ends the session's processes, also after a kill -9 (leftovers.reap_orphans)
        self.record = owner_record(session_id or socket_name, socket_name)
        self.records_dir = records_dir(data_dir) if data_dir is not None else None
        self.use_cgroup = use_cgroup
        self.attach_command = f"tmux -L {socket_name} attach"
        self.command_timeout = COMMAND_TIMEOUT
        self.server: libtmux.Server | None = None
        self.server_pid = 0
        self.socket_path = ""
        self.control: ControlClient | None = None
        self.dir: Path | None = None
        self.agents: dict[str, AgentState] = agents if agents is not None else {}  # the host's: told of a loss
        self._start_lock: asyncio.Lock | None = None
        self.reports = ShellReports()
        self._closed = False
        self.sandbox = TmuxSandbox(self.publish)  # configured by the Session, else the first bash or tmux call

    # -- lifecycle --

    async def close(self, terminals: list[int]) -> None:
        """Kill the server and remove its files, and end what its shells (`terminals`: their pids)
        started, wherever it went; safe to call twice, or when never started."""
        if self._closed:
            return
        self._closed = True
        await self._forget_server()
        self.sandbox.tidy()
        if self.record.dir:  # it was started: end what its shells started, wherever it went
            await asyncio.to_thread(end_session, self.record)
            for pid in terminals:
                await asyncio.to_thread(kill_session, pid)
            if self.records_dir is not None:
                remove_record(self.records_dir / f"{self.socket_name}.json")
        self.reports.close()
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def started(self) -> bool:
        return self.control is not None

    def alive(self) -> bool:
        return self.control is not None and not self.control.closed and pid_alive(self.server_pid)

    async def ensure_started(self) -> None:
        if self._closed:
            raise RuntimeError("the terminal host is closed")
        if self.alive():
            return
        if self._start_lock is None:
            self._start_lock = asyncio.Lock()
        async with self._start_lock:
            if self.alive():
                return
            if self.started:  # it was running and is gone: killed from outside
                await self._forget_server()
                self._tell_all(
                    "the tmux server had stopped (killed from outside?); started a fresh server "
                    "and shell: earlier windows, shell variables and running programs are gone"
                )
            await self._start()

    async def recover(self) -> None:
        """A tmux command just failed: if the server is going away, wait until its control client
        sees it gone, then start a fresh one (a server that still answers is left as it is)."""
        if self.control is not None and not await self.server_answers():
            await asyncio.wait({self.control.gone}, timeout=2)
        await self.ensure_started()

    def _tell_all(self, note: str) -> None:
        for state in self.agents.values():
            if note not in state.notes:
                state.notes.append(note)

    def _prepare_dir(self) -> Path:
        """The session's private folder: tmux.conf, the rc file, the shells' report channels and the
        commands (read-only to the sandbox), and `io/` for the outputs and the tmux socket (writable to it)."""
        if self.dir is None:
            self.dir = Path(tempfile.mkdtemp(prefix=f"workbench-{self.socket_name[:40]}-"))
            (self.dir / SANDBOX_WRITES).mkdir(mode=0o700)
            self.reports.open(self.dir / REPORTS)
        return self.dir

    def _write_config(self, folder: Path) -> Path:
        """tmux.conf and the rc file, written anew at every server start: a start never trusts a
        file that an earlier sandbox could have changed."""
        q = shlex.quote
        conf = folder / "tmux.conf"
        write_untrusted(conf, TMUX_CONF)
        values = {"dir": q(str(folder)), "io": q(str(folder / SANDBOX_WRITES)), "reports": q(str(folder / REPORTS))}
        write_untrusted(folder / "bashrc", BASH_RC % values)
        return conf

    async def _start(self) -> None:
        folder = self._prepare_dir()
        conf = self._write_config(folder)
        self.server = libtmux.Server(socket_name=self.socket_name, config_file=str(conf))
        await self._kill_stale_server()
        record = self.record
        if self.use_cgroup and not record.cgroup:
            record.cgroup = str(await asyncio.to_thread(make_cgroup, self.socket_name) or "")
        record.dir = str(folder)
        self._save_record()  # before the server exists: a kill -9 from here on is cleaned up
        env = shell_environment(os.environ, self.socket_name, self.env_passthrough)
        await self.launch_server(server_argv(self.socket_name, conf), env)
        argv = ["tmux", "-L", self.socket_name, "-f", str(conf), "-C", "attach-session", "-t", SESSION]
        self.control = await ControlClient.start([*argv, "-f", "ignore-size,no-output"], env)
        (info,) = await self.ctrl("display-message -p '#{pid} #{socket_path}'")
        pid, self.socket_path = info.split(" ", 1)
        self.server_pid = self.sandbox.host_pid(int(pid))
        record.server_pid, record.server_start = self.server_pid, start_time(self.server_pid)
        record.socket_path = self.socket_path
        if record.cgroup and not in_cgroup(self.server_pid, Path(record.cgroup)):  # joining was refused
            await asyncio.to_thread(kill_cgroup, Path(record.cgroup))
            record.cgroup = ""
        self._save_record()
        self.publish(pb.TerminalReady(socket_name=self.socket_name, attach_command=self.attach_command))

    async def launch_server(self, argv: list[str], env: dict[str, str]) -> None:
        """Start the tmux server process (the one place; a sandbox wraps `argv` here)."""
        cgroup = Path(self.record.cgroup) if self.record.cgroup else None
        if self.sandbox.active or not self.sandbox.configured:  # unconfigured: the default sandbox
            await self.sandbox.start(argv, env, self._prepare_dir(), self.command_timeout, cgroup)
            return
        await start_server(argv, env, self.command_timeout, cgroup)

    def _save_record(self) -> None:
        if self.records_dir is not None:
            write_record(self.records_dir, self.record)

    async def _kill_stale_server(self) -> None:
        """A server already on our socket (a crashed earlier run of a resumed session) goes."""
        server = self.server
        assert server is not None
        with contextlib.suppress(Exception):
            if await asyncio.wait_for(asyncio.to_thread(server.is_alive), self.command_timeout):
                await asyncio.wait_for(asyncio.to_thread(server.kill), self.command_timeout)

    async def _forget_server(self) -> None:
        if self.control is not None:
            await self.control.close()
        self.control = None
        if self.server is not None:
            server, self.server = self.server, None
            with contextlib.suppress(Exception):
                if await asyncio.wait_for(asyncio.to_thread(server.is_alive), self.command_timeout):
                    await asyncio.wait_for(asyncio.to_thread(server.kill), self.command_timeout)
        if pid_alive(self.server_pid):  # it did not go when asked (stopped, wedged)
            with contextlib.suppress(OSError):
                os.kill(self.server_pid, signal.SIGKILL)
        if self.socket_path:  # tmux leaves its socket file behind
            with contextlib.suppress(OSError):
                Path(self.socket_path).unlink()
            self.socket_path = ""
        self.reports.fail_all("the tmux server went away")
        for state in self.agents.values():
            state.shell = None
            state.windows.clear()
        await self.sandbox.stop()

    async def _stalled(self, what: str) -> ServerStalled:
        """The server did not answer in time: kill it; the next call starts a fresh one."""
        if pid_alive(self.server_pid):
            with contextlib.suppress(OSError):
                os.kill(self.server_pid, signal.SIGKILL)
        await self._forget_server()
        self._tell_all(
            f"the tmux server stopped answering ({what} took over {self.command_timeout:g} s), so it was "
            "killed and a fresh one started: your shell's variables, windows and running programs are gone"
        )
        return ServerStalled(
            f"the tmux server stopped answering for {self.command_timeout:g} s and was killed; your next call "
            "starts a fresh tmux server and shell (shell variables, windows and running programs are lost)"
        )

    # -- tmux commands, each with a time bound --

    async def ctrl(self, line: str) -> list[str]:
        """One command through the control client (the hot path: a pipe write, no process)."""
        if self.control is None:
            raise ServerGone("the tmux server is not running")
        try:
            async with asyncio.timeout(self.command_timeout):
                return await self.control.command(line)
        except TimeoutError:
            raise await self._stalled(line.split(" ", 1)[0]) from None

    async def ctrl_all(self, commands: list[list[str]]) -> None:
        """tmux commands that print nothing, through the control client: written at once and
        answered in order (no process per command, as libtmux has); the first failure is raised."""
        if self.control is None:
            raise ServerGone("the tmux server is not running")
        answers = [self.control.send(control_line(*args)) for args in commands]
        try:
            async with asyncio.timeout(self.command_timeout):
                done = await asyncio.gather(*answers, return_exceptions=True)
        except TimeoutError:
            raise await self._stalled(commands[0][0]) from None
        if failed := next((a for a in done if isinstance(a, BaseException)), None):
            raise failed

    async def tmux(self, *args: str) -> list[str]:
        """Run one tmux command through libtmux (a client process; not for the hot path)."""
        await self.ensure_started()
        assert self.server is not None
        try:
            return await asyncio.wait_for(asyncio.to_thread(libtmux_cmd, self.server, *args), self.command_timeout)
        except TimeoutError:
            raise await self._stalled(args[0]) from None

    async def server_answers(self) -> bool:
        """A round trip through the control client: is the server still alive (not shutting down)?"""
        try:
            await asyncio.wait_for(self.ctrl("display-message -p ok"), 2)
        except (ServerGone, TmuxError, TimeoutError):
            return False
        return pid_alive(self.server_pid)
