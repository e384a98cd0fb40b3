"""The agent's terminal: one private tmux server per workbench session, for bash and tmux.

`TerminalHost` owns the server (its own socket and config, so the person's tmux and dotfiles
are never touched) through a `TmuxServer` it holds (`terminal/server_lifecycle.py`), which
starts, replaces and stops it (`tmux_server.start_server` starts the process); the host keeps
the agents' shells and windows and runs bash in them. Commands go through
the control client (one line down a pipe, no process) when their answer holds nothing a program chose:
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
`done ID KEY STATUS PWD` into the shell's own FIFO, which the event loop reads (`bash_run` has
the steps; `shell_reports` the channel, which no other process in the sandbox can reach).
So:
- the exit status is exact and the output complete, whatever the pane size or scrollback;
- completion needs no `tmux wait-for` client and no polling;
- the echo race cannot happen: the typed line only reaches the pane, never the output file,
  and completion comes from the shell's channel with the run's key, never from text that a
  command could print;
- `cd` and exported variables persist, since the command runs in the shell itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import time
from collections.abc import Callable
from pathlib import Path

from google.protobuf.message import Message

from workbench.core.feedback import Feedback
from workbench.terminal.agent_cgroups import AgentCgroups, gated
from workbench.terminal.bash_run import CANCEL_GRACE, BashRun, OutputSink
from workbench.terminal.output_cap import keep_tails
from workbench.terminal.processes import cmdline, foreground_pgid, kill_session, pid_alive, zombie_status
from workbench.terminal.server_lifecycle import TmuxServer
from workbench.terminal.shell_env import SHELL_ENV
from workbench.terminal.shell_reports import new_secret
from workbench.terminal.state import AgentState, Completion, Shell, Window, start_dir
from workbench.terminal.tmux_control import ControlClient, ServerGone, TmuxError
from workbench.terminal.tmux_server import SESSION, control_line, tmux_quote

READY_TIMEOUT = 10.0  # seconds for a new shell to come up
DETACHED_KEEP = 4 << 20  # bytes of a detached command's output kept on disk (capture and wait read 1 MB)
TRIM_EVERY = 0.5  # seconds between two trims of detached commands' output files
WINDOW_FORMAT = "#{window_id}\t#{pane_dead}\t#{pane_dead_status}\t#{pane_dead_signal}\t#{pane_pid}\t"


class TerminalHost:
    """One private tmux server per workbench session; started on first use (`TmuxServer`).

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
        self.agents: dict[str, AgentState] = {}
        server = self.tmux_server = TmuxServer(
            socket_name,
            publish,
            env_passthrough=env_passthrough,
            data_dir=data_dir,
            session_id=session_id,
            use_cgroup=use_cgroup,
            agents=self.agents,
        )
        # what the host's callers (the tools, the Session, bash_run) read of the server, at hand
        self.socket_name, self.attach_command, self.env_passthrough = (
            socket_name,
            server.attach_command,
            env_passthrough,
        )
        self.sandbox, self.reports, self.record = server.sandbox, server.reports, server.record
        self.ensure_started, self.recover, self.alive = server.ensure_started, server.recover, server.alive
        self.ctrl, self.ctrl_all, self.tmux, self.server_answers = (
            server.ctrl,
            server.ctrl_all,
            server.tmux,
            server.server_answers,
        )
        self._trimmer: asyncio.Task[None] | None = None
        self.cgroups = AgentCgroups(lambda: Path(self.record.cgroup) if self.record.cgroup else None)

    # the server's state as it changes (started, replaced, closed)
    @property
    def dir(self) -> Path | None:
        return self.tmux_server.dir

    @property
    def control(self) -> ControlClient | None:
        return self.tmux_server.control

    @property
    def server_pid(self) -> int:
        return self.tmux_server.server_pid

    @property
    def socket_path(self) -> str:
        return self.tmux_server.socket_path

    @property
    def started(self) -> bool:
        return self.tmux_server.started

    @property
    def command_timeout(self) -> float:
        return self.tmux_server.command_timeout

    @command_timeout.setter
    def command_timeout(self, seconds: float) -> None:
        self.tmux_server.command_timeout = seconds

    def agent(self, agent_id: str) -> AgentState:
        return self.agents.setdefault(agent_id, AgentState())

    async def close(self) -> None:
        """Kill the server and remove its files; safe to call twice, or when never started."""
        if self.tmux_server.closed:
            return
        if self._trimmer is not None:
            self._trimmer.cancel()
        await self.tmux_server.close([w.pid for state in self.agents.values() for w in self._windows_of(state)])

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

    async def new_window(
        self, agent_id: str, name: str, command: str, cwd: str, env: dict[str, str], shell: str | None = None
    ) -> Window:
        """A window of the agent's. With cgroups, its first process waits at a gate (a FIFO) until it
        is in the agent's cgroup, so nothing it starts can be left outside (agent_cgroups.py).
        `command` runs in tmux's default shell (/bin/sh), or in `shell` (`shell -c command`)."""
        args = ["new-window", "-d", "-P", "-F", "#{window_id} #{pane_pid}", "-t", f"{SESSION}:"]
        args += ["-n", f"{agent_id}/{name}", "-c", cwd]
        for key, value in {**SHELL_ENV, **env}.items():
            args += ["-e", f"{key}={value}"]
        cgroup = self.cgroups.of(agent_id) if self.dir is not None else None
        gate = self.cgroups.gate(self.dir) if cgroup is not None and self.dir is not None else None
        try:
            line = gated(command, gate) if gate else command
            out = await self.tmux(*args, *([shell, "-c", line] if shell else [line]))
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
        if w.channel:
            self.reports.close_channel(w.channel)

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
        token = new_secret()
        ready = self.reports.expect_ready(token)
        rc = shlex.quote(str(self.dir / "bashrc"))
        # in the sandbox, bash is an unreadable copy (not dumpable: its token, key and channel stay its
        # own) run under its own name, from its first exec on (`shell -c`, not tmux's /bin/sh)
        program = self.sandbox.shell_program
        command = f"exec {f'-a bash {shlex.quote(program)}' if program else 'bash'} --noprofile --rcfile {rc} -i"
        window: Window | None = None
        try:
            window = await self.new_window(agent_id, "bash", command, cwd, {"__WB_TOKEN": token}, shell=program)
            window.channel = token
            try:
                window.pid = self.sandbox.host_pid(await asyncio.wait_for(ready, READY_TIMEOUT))
            except TimeoutError as err:
                await self.kill_window(window)
                raise Feedback(
                    f"a new bash shell in tmux did not come up within {READY_TIMEOUT:g} s; "
                    f"look at it with `{self.attach_command}`"
                ) from err
        except BaseException:
            if window is None:
                self.reports.close_channel(token)
            raise
        finally:
            self.reports.forget_ready(token)
        state.shell = Shell(window, token, argv=await asyncio.to_thread(cmdline, window.pid))
        return state.shell

    async def type_run(self, shell: Shell, run_id: str, key: str) -> None:
        """The hot path: one line to the control client types the run's line into the pane."""
        line = f' __wb_run={run_id} __wb_key={key}; __wb_pre; eval -- "$__wb_cmd" >"$__wb_out" 2>&1; __wb_prompt'
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
