"""The agent's terminal: one private tmux server per workbench session, for bash and tmux.

`TerminalHost` owns the server (its own socket and config, so the person's tmux and dotfiles
are never touched). `tmux_server.start_server` starts it. Commands go through the control
client (one line down a pipe, no process) when their answer holds nothing a program chose:
keys, copy-mode, kill-window, window states as numbers; through libtmux (a client process per
command) when it does: capture-pane and the running program's name, which could hold a line
that reads as the control protocol's, and new-window, whose command line may hold a newline.
Every tmux command has a time bound, and a server that stalls is killed and replaced (the
model is told its shell state was lost).

The bash hot path avoids a tmux client process per call. Each agent has a persistent
`bash --noprofile --rcfile OURS` in its own window. A call writes the command to a file and
types one fixed line into the pane through a persistent control-mode client (`tmux -C`, one
pipe write, no fork): it evals the file with stdout and stderr redirected to `ID.out`, then
calls the hook that writes (or PROMPT_COMMAND after a Ctrl-C, or the EXIT trap)
`done TOKEN ID STATUS PWD` into a FIFO that the event loop reads (`bash_run` has the steps).
So:
- the exit status is exact and the output complete, whatever the pane size or scrollback;
- completion needs no `tmux wait-for` client and no polling;
- the echo race cannot happen: the typed line only reaches the pane, never the output file,
  and completion comes from the FIFO, never from text that a command could print;
- `cd` and exported variables persist, since the command runs in the shell itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import shlex
import shutil
import signal
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import libtmux
from google.protobuf.message import Message

from workbench.core.feedback import Feedback
from workbench.pb import workbench_pb2 as pb
from workbench.terminal.agent_cgroups import AgentCgroups, gated
from workbench.terminal.bash_run import CANCEL_GRACE, BashRun, OutputSink
from workbench.terminal.leftovers import (
    end_session,
    in_cgroup,
    kill_cgroup,
    make_cgroup,
    owner_record,
    records_dir,
    write_record,
)
from workbench.terminal.output_cap import keep_tails
from workbench.terminal.processes import cmdline, foreground_pgid, kill_session, pid_alive, start_time, zombie_status
from workbench.terminal.sandbox import SANDBOX_WRITES, write_untrusted
from workbench.terminal.sandbox_server import TmuxSandbox
from workbench.terminal.shell_env import BASH_RC, SHELL_ENV, TMUX_CONF, shell_environment
from workbench.terminal.shell_reports import ShellReports
from workbench.terminal.state import AgentState, Completion, Shell, Window, start_dir
from workbench.terminal.tmux_control import ControlClient, ServerGone, ServerStalled, TmuxError
from workbench.terminal.tmux_server import (
    COMMAND_TIMEOUT,
    SESSION,
    control_line,
    libtmux_cmd,
    server_argv,
    start_server,
    tmux_quote,
)

READY_TIMEOUT = 10.0  # seconds for a new shell to come up
DETACHED_KEEP = 4 << 20  # bytes of a detached command's output kept on disk (capture and wait read 1 MB)
TRIM_EVERY = 0.5  # seconds between two trims of detached commands' output files
WINDOW_FORMAT = "#{window_id}\t#{pane_dead}\t#{pane_dead_status}\t#{pane_dead_signal}\t#{pane_pid}\t"


class TerminalHost:
    """One private tmux server per workbench session; started on first use.

    bash runs in one persistent shell window per agent; the tmux tool's windows are per agent
    too (tmux name `AGENT/NAME`, the model sees NAME).
    """

    def __init__(
        self,
        socket_name: str,
        publish: Callable[[Message], object] | None = None,
        *,
        env_passthrough: tuple[str, ...] = (),
        data_dir: Path | None = None,
        session_id: str = "",
        use_cgroup: bool = True,
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
        self.agents: dict[str, AgentState] = {}
        self._start_lock: asyncio.Lock | None = None
        self.reports = ShellReports()
        self._closed = False
        self._trimmer: asyncio.Task[None] | None = None
        self.sandbox = TmuxSandbox(self.publish)  # configured by the Session, else the first bash or tmux call
        self.cgroups = AgentCgroups(lambda: Path(self.record.cgroup) if self.record.cgroup else None)

    # -- lifecycle --

    @property
    def started(self) -> bool:
        return self.control is not None

    def alive(self) -> bool:
        return self.control is not None and not self.control.closed and pid_alive(self.server_pid)

    def agent(self, agent_id: str) -> AgentState:
        return self.agents.setdefault(agent_id, AgentState())

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
        """The session's private folder: tmux.conf, the rc file, the FIFO and the commands (read-only
        to the sandbox), and `io/` for the outputs and the tmux socket (writable to it)."""
        if self.dir is None:
            self.dir = Path(tempfile.mkdtemp(prefix=f"workbench-{self.socket_name[:40]}-"))
            (self.dir / SANDBOX_WRITES).mkdir(mode=0o700)
            self.reports.open(self.dir / "done.fifo")
        return self.dir

    def _write_config(self, folder: Path) -> Path:
        """tmux.conf and the rc file, written anew at every server start: a start never trusts a
        file that an earlier sandbox could have changed."""
        q = shlex.quote
        conf = folder / "tmux.conf"
        write_untrusted(conf, TMUX_CONF)
        values = {"dir": q(str(folder)), "io": q(str(folder / SANDBOX_WRITES)), "fifo": q(str(folder / "done.fifo"))}
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

    async def close(self) -> None:
        """Kill the server and remove its files; safe to call twice, or when never started."""
        if self._closed:
            return
        self._closed = True
        if self._trimmer is not None:
            self._trimmer.cancel()
        terminals = [w.pid for state in self.agents.values() for w in self._windows_of(state)]
        await self._forget_server()
        self.sandbox.tidy()
        if self.record.dir:  # it was started: end what its shells started, wherever it went
            await asyncio.to_thread(end_session, self.record)
            for pid in terminals:
                await asyncio.to_thread(kill_session, pid)
            if self.records_dir is not None:
                with contextlib.suppress(OSError):
                    (self.records_dir / f"{self.socket_name}.json").unlink()
        self.reports.close()
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None

    async def stop_agent(self, agent_id: str) -> None:
        """Stop an agent's running commands (Ctrl-C, then kill) and close its windows."""
        state = self.agents.pop(agent_id, None)
        if state is None or not self.alive():
            return
        windows = self._windows_of(state)
        for w in windows:
            with contextlib.suppress(ServerGone, TmuxError):
                await self.ctrl(f"send-keys -t {w.window_id} C-c")
        deadline = time.monotonic() + CANCEL_GRACE
        busy = [w for w in windows if foreground_pgid(w.pid) not in (0, w.pid)]
        while busy and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
            busy = [w for w in busy if foreground_pgid(w.pid) not in (0, w.pid)]
        for w in windows:
            await self.kill_window(w)
        await self.cgroups.kill([agent_id])  # what its commands started and left (setsid, nohup, ...)

    async def kill_agents(self, agent_ids: list[str]) -> None:
        """End every process these agents started now (SIGKILL through their cgroups), the others'
        run on; their windows stay until `stop_agent`. Without cgroups this does nothing."""
        await self.cgroups.kill(agent_ids)

    @staticmethod
    def _windows_of(state: AgentState) -> list[Window]:
        return [*state.windows.values(), *([state.shell.window] if state.shell is not None else [])]

    # -- detached commands' output files --

    def watch_detached(self) -> None:
        """A command runs on detached: keep its output file's size on disk bounded."""
        if self._trimmer is None or self._trimmer.done():
            self._trimmer = asyncio.create_task(keep_tails(self._detached_outputs, DETACHED_KEEP, TRIM_EVERY))

    def _detached_outputs(self) -> list[Path]:
        return [w.output for s in self.agents.values() for w in s.windows.values() if w.output is not None]

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

    async def new_window(self, agent_id: str, name: str, command: str, cwd: str, env: dict[str, str]) -> Window:
        """A window of the agent's. With cgroups, its first process waits at a gate (a FIFO) until it
        is in the agent's cgroup, so nothing it starts can be left outside (agent_cgroups.py)."""
        args = ["new-window", "-d", "-P", "-F", "#{window_id} #{pane_pid}", "-t", f"{SESSION}:"]
        args += ["-n", f"{agent_id}/{name}", "-c", cwd]
        for key, value in {**SHELL_ENV, **env}.items():
            args += ["-e", f"{key}={value}"]
        cgroup = self.cgroups.of(agent_id) if self.dir is not None else None
        gate = self.cgroups.gate(self.dir) if cgroup is not None and self.dir is not None else None
        try:
            out = await self.tmux(*args, gated(command, gate) if gate else command)
            window_id, pid = out[0].split()
            window = Window(agent_id, name, window_id, self.sandbox.host_pid(int(pid)), command)
            if cgroup is not None and gate is not None:
                await self.cgroups.admit(window.pid, cgroup, gate)
        finally:
            if gate is not None:
                gate.unlink(missing_ok=True)
        return window

    async def kill_window(self, w: Window) -> None:
        with contextlib.suppress(ServerGone, TmuxError, RuntimeError):
            if self.alive():
                await self.ctrl(f"kill-window -t {w.window_id}")
        await asyncio.to_thread(kill_session, w.pid)  # what ignored the hangup

    async def window_info(self) -> dict[str, tuple[bool, int, str]]:
        """window_id -> (dead, exit status, current command) of every window on the server (through
        libtmux: a program names itself, and a name could hold a line that reads as the control
        protocol's)."""
        return self._windows(await self.tmux("list-windows", "-a", "-F", WINDOW_FORMAT + "#{pane_current_command}"))

    async def window_states(self) -> dict[str, tuple[bool, int, str]]:
        """`window_info` without the current command (""): through the control client, whose answer
        is then numbers only (no process per query)."""
        return self._windows(await self.ctrl(control_line("list-windows", "-a", "-F", WINDOW_FORMAT)))

    def _windows(self, lines: list[str]) -> dict[str, tuple[bool, int, str]]:
        info = {}
        for line in lines:
            wid, dead, status, sig, pid, current = [*line.split("\t"), "", "", "", "", ""][:6]
            # tmux marks a pane dead when its terminal closes, before it reaps the process, and
            # tmux 3.3 at times leaves it unreaped (a zombie) until another child ends; read the
            # zombie's status then. Until a status is known, the program counts as running.
            code = int(status) if status else 128 + int(sig) if sig else None
            if dead == "1" and code is None and pid.isdigit():
                code = zombie_status(self.sandbox.host_pid(int(pid)))
            info[wid] = (dead == "1" and code is not None, code or 0, current)
        return info

    # -- the tmux tool's windows --

    def window(self, agent_id: str, name: str | None) -> Window:
        state = self.agent(agent_id)
        if not name:
            raise Feedback(f"this action needs window=NAME; your windows: {self.window_names(state)}")
        w = state.windows.get(name)
        if w is None:
            raise Feedback(f"no window {name!r}; your windows: {self.window_names(state)}")
        return w

    @staticmethod
    def window_names(state: AgentState) -> str:
        if not state.windows:
            return "(none; start one with action='new')"
        return ", ".join(state.windows)

    # -- bash --

    async def shell(self, agent_id: str, cwd: str) -> Shell:
        """The agent's bash shell: the running one, else a new window that reports ready."""
        state = self.agent(agent_id)
        if state.shell is not None and pid_alive(state.shell.window.pid):
            return state.shell
        assert self.dir is not None
        token = secrets.token_hex(6)
        ready = self.reports.expect_ready(token)
        rc = shlex.quote(str(self.dir / "bashrc"))
        command = f"exec bash --noprofile --rcfile {rc} -i"
        try:
            window = await self.new_window(agent_id, "bash", command, cwd, {"__WB_TOKEN": token})
            try:
                window.pid = self.sandbox.host_pid(await asyncio.wait_for(ready, READY_TIMEOUT))
            except TimeoutError as err:
                await self.kill_window(window)
                raise Feedback(
                    f"a new bash shell in tmux did not come up within {READY_TIMEOUT:g} s; "
                    f"look at it with `{self.attach_command}`"
                ) from err
        finally:
            self.reports.forget_ready(token)
        state.shell = Shell(window, token, argv=await asyncio.to_thread(cmdline, window.pid))
        return state.shell

    async def type_run(self, shell: Shell, run_id: str) -> None:
        """The hot path: one line to the control client types the run's line into the pane."""
        line = f' __wb_run={run_id}; __wb_pre; eval -- "$__wb_cmd" >"$__wb_out" 2>&1; __wb_prompt'
        wid = shell.window.window_id
        # A person who scrolls back in the pane puts it in copy mode, where typed keys are copy-mode
        # commands: the line would never reach the shell, and a key that opens a prompt would stall
        # this control client. Leave any mode first (one more line down the same pipe, no wait).
        if self.control is None:
            raise ServerGone("the tmux server is not running")
        leave = self.control.send(f"copy-mode -q -t {wid}")
        try:
            await self.ctrl(f"send-keys -t {wid} C-u {tmux_quote(line)} Enter")
        finally:
            with contextlib.suppress(TmuxError, ServerGone):
                await leave

    async def run(
        self,
        agent_id: str,
        command: str,
        *,
        workspace: Path,
        timeout: float,
        sink: OutputSink,
    ) -> tuple[int, list[str]]:
        """Run `command` in the agent's shell, its output to `sink`; return (status, notes for the model).

        Raises Feedback on timeout, a lost shell or a lost server; on cancellation interrupts
        the command (Ctrl-C, then kill) and re-raises.
        """
        state = self.agent(agent_id)
        deadline = time.monotonic() + timeout
        try:  # parallel calls of one agent take turns in its shell; the wait counts toward the timeout
            async with asyncio.timeout(timeout):  # not wait_for: no task per call
                await state.lock.acquire()
        except TimeoutError:
            raise Feedback(
                f"timed out after {timeout:g} s before it started: another bash call of yours was still "
                "running in your shell (parallel bash calls take turns); nothing ran. Run it again, or "
                "give it a timeout that covers the other command too."
            ) from None
        try:
            await self.ensure_started()
            run = BashRun(self, agent_id, command, workspace=workspace, timeout=timeout, deadline=deadline, sink=sink)
            return await run.execute()
        except ServerGone as err:
            raise Feedback(str(err)) from err
        finally:
            state.lock.release()


__all__ = ["Completion", "TerminalHost", "Window", "start_dir"]
