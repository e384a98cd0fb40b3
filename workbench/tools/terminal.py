"""The agent's terminal: one private tmux server per workbench session, for bash and tmux.

`TerminalHost` owns the server (its own socket and config, so the person's tmux and dotfiles
are never touched). libtmux starts and kills the server and runs the tmux tool's commands.

The bash hot path avoids a tmux client process per call. Each agent has a persistent
`bash --noprofile --rcfile OURS` in its own window. A call writes the command to a file and
types one fixed line into the pane through a persistent control-mode client (`tmux -C`, one
pipe write, no fork): it evals the file with stdout and stderr redirected to `ID.out`, then
calls the hook that writes (or PROMPT_COMMAND after a Ctrl-C, or the EXIT trap)
`done TOKEN ID STATUS PWD` into a FIFO that the event loop reads. So:
- the exit status is exact and the output complete, whatever the pane size or scrollback;
- completion needs no `tmux wait-for` client and no polling;
- the echo race cannot happen: the typed line only reaches the pane, never the output file,
  and completion comes from the FIFO, never from text that a command could print;
- `cd` and exported variables persist, since the command runs in the shell itself.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import errno
import os
import secrets
import shlex
import shutil
import signal
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import libtmux

from workbench.feedback import Feedback
from workbench.pb import workbench_pb2 as pb
from workbench.tools.processes import (
    cmdline,
    cwd_of,
    foreground_pgid,
    kill_session,
    pid_alive,
    zombie_status,
)
from workbench.tools.tmux_control import ControlClient, ServerGone, TmuxError

SESSION = "workbench"
CANCEL_GRACE = 1.0  # seconds between Ctrl-C and killing the process group
KILL_DEADLINE = 3.0  # seconds after Ctrl-C before giving up on a shell and replacing it
READY_TIMEOUT = 10.0  # seconds for a new shell to come up
TICK = 0.05  # seconds between output reads while a command runs (grows to TICK_MAX)
TICK_MAX = 0.25

TMUX_CONF = """\
set -g history-limit 50000
set -g remain-on-exit on
set -g default-shell /bin/sh
set -g default-size 200x50
set -g status-right ' workbench '
setw -g automatic-rename off
setw -g allow-rename off
set -s escape-time 0
set -s exit-empty on
"""

# The agent shell's rc file. `__WB_TOKEN` comes from the window's environment.
BASH_RC = r"""
PS1='\W \$ '
PS2='> '
HISTFILE=
HISTCONTROL=ignorespace
__wb_token=$__WB_TOKEN
unset __WB_TOKEN
__wb_dir=%(dir)s
__wb_fifo=%(fifo)s
__wb_run=
__wb_up=
# Every helper returns 0 and guards its own tests: the agent may `set -e` in this shell.
__wb_done() {
  printf '%%s %%s %%s %%s %%s\n' "$1" "$__wb_token" "$__wb_run" "$2" "$PWD" > "$__wb_fifo"
  __wb_run=
  return 0
}
__wb_echo() {  # for a person watching the pane: the output's start and a failing status
  local out=
  IFS= read -r -N 3000 out < "$__wb_dir/$__wb_run.out" 2>/dev/null || :
  if [[ -n $out ]]; then printf '%%s' "$out"; [[ $out == *$'\n' ]] || printf '\n'; fi
  if (( ${#out} >= 3000 )); then printf '\e[2m[... the agent gets the whole output]\e[m\n'; fi
  if (( $1 )); then printf '\e[2m[exit %%s]\e[m\n' "$1"; fi
  return 0
}
__wb_prompt() {
  local s=$?
  if [[ -n $__wb_run ]]; then
    # `set -e` holds for the command that set it: in a shell that lives on, the next failing
    # test would end the shell and lose its variables
    set +e
    __wb_echo "$s"
    __wb_done done "$s"
  elif [[ -z $__wb_up ]]; then
    __wb_up=1
    printf 'ready %%s %%s\n' "$__wb_token" "$$" > "$__wb_fifo"
  fi
  # a command may have replaced PROMPT_COMMAND; Ctrl-C (cancel) still needs this hook
  [[ ${PROMPT_COMMAND-} == *__wb_prompt* ]] || PROMPT_COMMAND="__wb_prompt${PROMPT_COMMAND:+; $PROMPT_COMMAND}"
  return 0
}
PROMPT_COMMAND=__wb_prompt
trap '__wb_s=$?; [[ -n $__wb_run ]] && __wb_done exit "$__wb_s"' EXIT
# The typed line is ` __wb_run=ID; __wb_pre; eval -- "$__wb_cmd" >"$__wb_out" 2>&1; __wb_prompt`:
# no alias (a command may `unalias -a`), and completion does not wait for PROMPT_COMMAND (a
# command may clear it); PROMPT_COMMAND still reports a line that Ctrl-C cut short.
__wb_pre() {  # read the command, show it in the pane in place of the typed line
  IFS= read -r -d "" __wb_cmd < "$__wb_dir/$__wb_run.sh" || :
  __wb_out=$__wb_dir/$__wb_run.out
  printf '\e[A\e[2K\e[1m$ %%s\e[m\n' "${__wb_cmd:0:2000}"
  return 0
}
"""

SHELL_ENV = {"PAGER": "cat", "GIT_PAGER": "cat", "MANPAGER": "cat", "SYSTEMD_PAGER": ""}


# --- state ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Completion:
    """A bash command's end, as its shell reported it."""

    status: int
    cwd: str
    shell_exited: bool  # the command ended the shell (`exit`)


@dataclass
class Window:
    agent_id: str
    name: str  # the name the model sees
    window_id: str  # tmux's @N
    pid: int  # the pane's first process; it leads the pane's terminal session
    command: str
    output: Path | None = None  # a timed-out bash command's output file
    run: asyncio.Future[Completion] | None = None  # that command's completion


@dataclass
class _Shell:
    window: Window
    token: str
    runs: int = 0
    argv: bytes = b""  # the shell's /proc cmdline: a changed one means `exec` replaced the shell


@dataclass
class _Agent:
    shell: _Shell | None = None
    windows: dict[str, Window] = field(default_factory=dict)
    cwd: str = ""  # last known working directory of the bash shell
    notes: list[str] = field(default_factory=list)  # told with the next bash call
    detached: int = 0
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


def start_dir(state: _Agent, workspace: Path) -> str:
    """Where a new shell starts: the agent's last known directory, else the workspace."""
    return state.cwd if state.cwd and Path(state.cwd).is_dir() else str(workspace)


def _tmux_quote(text: str) -> str:
    """One argument of a tmux command line (single quotes; a quote inside as '\\'')."""
    return "'" + text.replace("'", "'\\''") + "'"


def _cmd(server: libtmux.Server, *args: str) -> list[str]:
    # tmux reads an argument ending in `;` as the end of a command (and `\;` as a literal `;`):
    # typed text, a path or a command line that ends in `;` would lose it
    proc = server.cmd(*[arg[:-1] + "\\;" if arg.endswith(";") else arg for arg in args])
    if proc.stderr:
        raise TmuxError("; ".join(proc.stderr))
    return list(proc.stdout)


class _Output:
    """Reads a growing output file incrementally (complete UTF-8 characters only)."""

    def __init__(self, path: Path):
        self.path = path
        self.fh: Any = None
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def read(self, final: bool = False) -> str:
        if self.fh is None:
            try:
                self.fh = open(self.path, "rb")
            except FileNotFoundError:
                return ""
        return self.decoder.decode(self.fh.read(), final=final)

    def close(self) -> None:
        if self.fh is not None:
            self.fh.close()
            self.fh = None


# --- the host ------------------------------------------------------------------------------


class TerminalHost:
    """One private tmux server per workbench session; started on first use.

    bash runs in one persistent shell window per agent; the tmux tool's windows are per agent
    too (tmux name `AGENT/NAME`, the model sees NAME).
    """

    def __init__(self, socket_name: str, publish: Callable[[str, Any], object] | None = None):
        self.socket_name = socket_name
        self.publish = publish or (lambda kind, message: None)
        self.attach_command = f"tmux -L {socket_name} attach"
        self.server: libtmux.Server | None = None
        self.server_pid = 0
        self.socket_path = ""
        self.control: ControlClient | None = None
        self.dir: Path | None = None
        self.agents: dict[str, _Agent] = {}
        self._start_lock: asyncio.Lock | None = None
        self._fifo_fds: tuple[int, int] | None = None
        self._fifo_buf = b""
        self._ready: dict[str, asyncio.Future[int]] = {}
        self._runs: dict[str, asyncio.Future[Completion]] = {}
        self._next_run = 0
        self._closed = False

    # -- lifecycle --

    @property
    def started(self) -> bool:
        return self.control is not None

    def alive(self) -> bool:
        return self.control is not None and not self.control.closed and pid_alive(self.server_pid)

    def agent(self, agent_id: str) -> _Agent:
        return self.agents.setdefault(agent_id, _Agent())

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
                for state in self.agents.values():
                    state.notes.append(
                        "the tmux server had stopped (killed from outside?); started a fresh server "
                        "and shell: earlier windows, shell variables and running programs are gone"
                    )
            await self._start()

    async def _start(self) -> None:
        if self.dir is None:
            self.dir = Path(tempfile.mkdtemp(prefix=f"workbench-{self.socket_name[:40]}-"))
            fifo = self.dir / "done.fifo"
            os.mkfifo(fifo, 0o600)
            rfd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
            wfd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)  # keeps the reader from seeing EOF
            self._fifo_fds = (rfd, wfd)
            asyncio.get_running_loop().add_reader(rfd, self._on_fifo)
            q = shlex.quote
            (self.dir / "tmux.conf").write_text(TMUX_CONF)
            (self.dir / "bashrc").write_text(BASH_RC % {"dir": q(str(self.dir)), "fifo": q(str(fifo))})
        conf = str(self.dir / "tmux.conf")
        env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
        self.server = libtmux.Server(socket_name=self.socket_name, config_file=conf)
        server = self.server
        await asyncio.to_thread(self._new_session, server)
        argv = ["tmux", "-L", self.socket_name, "-f", conf, "-C", "attach-session", "-t", SESSION]
        self.control = await ControlClient.start([*argv, "-f", "ignore-size,no-output"], env)
        (info,) = await self.control.command("display-message -p '#{pid} #{socket_path}'")
        pid, self.socket_path = info.split(" ", 1)
        self.server_pid = int(pid)
        self.publish(
            "terminal_ready",
            pb.TerminalReady(socket_name=self.socket_name, attach_command=self.attach_command),
        )

    def _new_session(self, server: libtmux.Server) -> None:
        if server.is_alive():  # a stale server on our socket (a crashed earlier run)
            server.kill()
        server.new_session(
            session_name=SESSION,
            window_name="workbench",
            window_command="exec bash --noprofile --norc -i",
            environment={"PS1": r"\W \$ ", "HISTFILE": "", **SHELL_ENV},
            x=200,
            y=50,
        )

    async def _forget_server(self) -> None:
        if self.control is not None:
            await self.control.close()
        self.control = None
        if self.server is not None:
            server, self.server = self.server, None
            with contextlib.suppress(Exception):
                if await asyncio.to_thread(server.is_alive):
                    await asyncio.to_thread(server.kill)
        if self.socket_path:  # tmux leaves its socket file behind
            with contextlib.suppress(OSError):
                Path(self.socket_path).unlink()
            self.socket_path = ""
        waiting: list[asyncio.Future[Any]] = [*self._ready.values(), *self._runs.values()]
        for fut in waiting:
            if not fut.done():
                fut.set_exception(ServerGone("the tmux server went away"))
                fut.exception()  # seen: a detached run's future may have no one awaiting it
        self._ready.clear()
        self._runs.clear()
        for state in self.agents.values():
            state.shell = None
            state.windows.clear()

    async def close(self) -> None:
        """Kill the server and remove its files; safe to call twice, or when never started."""
        if self._closed:
            return
        self._closed = True
        await self._forget_server()
        if self._fifo_fds is not None:
            with contextlib.suppress(Exception):
                asyncio.get_running_loop().remove_reader(self._fifo_fds[0])
            for fd in self._fifo_fds:
                with contextlib.suppress(OSError):
                    os.close(fd)
            self._fifo_fds = None
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None

    async def stop_agent(self, agent_id: str) -> None:
        """Stop an agent's running commands (Ctrl-C, then kill) and close its windows."""
        state = self.agents.pop(agent_id, None)
        if state is None or not self.alive():
            return
        windows = list(state.windows.values())
        if state.shell is not None:
            windows.append(state.shell.window)
        for w in windows:
            with contextlib.suppress(ServerGone, TmuxError):
                await self._ctrl(f"send-keys -t {w.window_id} C-c")
        deadline = time.monotonic() + CANCEL_GRACE
        busy = [w for w in windows if foreground_pgid(w.pid) not in (0, w.pid)]
        while busy and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
            busy = [w for w in busy if foreground_pgid(w.pid) not in (0, w.pid)]
        for w in windows:
            await self.kill_window(w)

    # -- FIFO messages from the shells --

    def _on_fifo(self) -> None:
        assert self._fifo_fds is not None
        try:
            data = os.read(self._fifo_fds[0], 65536)
        except BlockingIOError:
            return
        except OSError as err:
            if err.errno == errno.EAGAIN:
                return
            raise
        self._fifo_buf += data
        *lines, self._fifo_buf = self._fifo_buf.split(b"\n")
        for raw in lines:
            parts = raw.decode(errors="replace").split(" ", 4)
            if parts[0] == "ready" and len(parts) >= 3:
                ready = self._ready.pop(parts[1], None)
                if ready is not None and not ready.done():
                    ready.set_result(int(parts[2]))
            elif parts[0] in ("done", "exit") and len(parts) >= 4:
                run = self._runs.pop(parts[2], None)
                if run is not None and not run.done():
                    pwd = parts[4] if len(parts) > 4 else ""
                    run.set_result(Completion(int(parts[3]), pwd, parts[0] == "exit"))

    # -- tmux commands --

    async def _ctrl(self, line: str) -> list[str]:
        if self.control is None:
            raise ServerGone("the tmux server is not running")
        return await self.control.command(line)

    async def tmux(self, *args: str) -> list[str]:
        """Run one tmux command through libtmux (a client process; not for the hot path)."""
        await self.ensure_started()
        assert self.server is not None
        return await asyncio.to_thread(_cmd, self.server, *args)

    async def new_window(self, agent_id: str, name: str, command: str, cwd: str, env: dict[str, str]) -> Window:
        args = ["new-window", "-d", "-P", "-F", "#{window_id} #{pane_pid}", "-t", f"{SESSION}:"]
        args += ["-n", f"{agent_id}/{name}", "-c", cwd]
        for key, value in {**SHELL_ENV, **env}.items():
            args += ["-e", f"{key}={value}"]
        out = await self.tmux(*args, command)
        window_id, pid = out[0].split()
        return Window(agent_id, name, window_id, int(pid), command)

    async def kill_window(self, w: Window) -> None:
        with contextlib.suppress(ServerGone, TmuxError, RuntimeError):
            if self.alive():
                await self.tmux("kill-window", "-t", w.window_id)
        await asyncio.to_thread(kill_session, w.pid)  # what ignored the hangup

    # -- bash --

    async def _shell(self, agent_id: str, cwd: str) -> _Shell:
        state = self.agent(agent_id)
        if state.shell is not None and pid_alive(state.shell.window.pid):
            return state.shell
        assert self.dir is not None
        token = secrets.token_hex(6)
        ready: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._ready[token] = ready
        rc = shlex.quote(str(self.dir / "bashrc"))
        command = f"exec bash --noprofile --rcfile {rc} -i"
        try:
            window = await self.new_window(agent_id, "bash", command, cwd, {"__WB_TOKEN": token})
            try:
                window.pid = await asyncio.wait_for(ready, READY_TIMEOUT)
            except TimeoutError as err:
                await self.kill_window(window)
                raise Feedback(
                    f"a new bash shell in tmux did not come up within {READY_TIMEOUT:g} s; "
                    f"look at it with `{self.attach_command}`"
                ) from err
        finally:
            self._ready.pop(token, None)
        state.shell = _Shell(window, token, argv=await asyncio.to_thread(cmdline, window.pid))
        return state.shell

    async def run(
        self,
        agent_id: str,
        command: str,
        *,
        workspace: Path,
        timeout: float,
        emit: Callable[[str], None],
    ) -> tuple[int, str, list[str]]:
        """Run `command` in the agent's shell; return (status, output, notes for the model).

        Raises Feedback on timeout, a lost shell or a lost server; on cancellation interrupts
        the command (Ctrl-C, then kill) and re-raises.
        """
        state = self.agent(agent_id)
        deadline = time.monotonic() + timeout
        try:  # parallel calls of one agent take turns in its shell; the wait counts toward the timeout
            await asyncio.wait_for(state.lock.acquire(), timeout)
        except TimeoutError:
            raise Feedback(
                f"timed out after {timeout:g} s before it started: another bash call of yours was still "
                "running in your shell (parallel bash calls take turns); nothing ran. Run it again, or "
                "give it a timeout that covers the other command too."
            ) from None
        try:
            return await self._run_locked(state, agent_id, command, workspace, timeout, deadline, emit)
        finally:
            state.lock.release()

    async def _run_locked(
        self,
        state: _Agent,
        agent_id: str,
        command: str,
        workspace: Path,
        timeout: float,
        deadline: float,
        emit: Callable[[str], None],
    ) -> tuple[int, str, list[str]]:
        await self.ensure_started()
        cwd = start_dir(state, workspace)
        fresh = state.shell is None or not pid_alive(state.shell.window.pid)
        if state.shell is not None and fresh:
            state.notes.append(f"the previous shell had exited; started a fresh shell in {cwd}")
            await self.kill_window(state.shell.window)
            state.shell = None
        shell = await self._shell(agent_id, cwd)
        notes, state.notes = state.notes, []
        assert self.dir is not None and self.control is not None
        self._next_run += 1
        run_id = f"r{self._next_run}"
        script, out_path = self.dir / f"{run_id}.sh", self.dir / f"{run_id}.out"
        script.write_text(command)
        done: asyncio.Future[Completion] = asyncio.get_running_loop().create_future()
        self._runs[run_id] = done
        output = _Output(out_path)
        collected: list[str] = []

        def pump(final: bool = False) -> None:
            text = output.read(final)
            if text:
                collected.append(text)
                emit(text)

        gone = self.control.gone
        watch: set[asyncio.Future[Any]] = {done, gone}
        try:
            try:
                await self._type_run(shell, run_id)
            except TmuxError:  # its window was closed from outside; the command never started
                await self.kill_window(shell.window)
                state.shell = None
                shell = await self._shell(agent_id, cwd)
                notes.append(f"the shell's window had been closed; started a fresh shell in {cwd}")
                await self._type_run(shell, run_id)
            except ServerGone:  # the server died before it took the line: start afresh
                await self.ensure_started()
                shell = await self._shell(agent_id, cwd)
                notes += state.notes
                state.notes = []
                done = asyncio.get_running_loop().create_future()
                self._runs[run_id] = done
                assert self.control is not None
                gone = self.control.gone
                watch = {done, gone}
                await self._type_run(shell, run_id)
            tick = TICK
            while not done.done():
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                await asyncio.wait(watch, timeout=min(tick, left), return_when=asyncio.FIRST_COMPLETED)
                if done.done():
                    break
                tick = min(tick * 2, TICK_MAX)
                pump()
                if gone.done() or not pid_alive(self.server_pid):
                    raise Feedback(
                        "the tmux server stopped while the command ran (killed from outside?); its "
                        "output so far is above. The next call starts a fresh tmux server and shell."
                    )
                if not pid_alive(shell.window.pid):
                    self._on_fifo()  # its report may have been written just before it ended
                    if done.done():
                        break
                    status = await self._shell_status(shell.window)
                    pump(final=True)
                    state.shell = None
                    await self.kill_window(shell.window)
                    ended = "ended" if status is None else f"ended with exit code {status}"
                    raise Feedback(
                        f"the shell {ended} while the command ran, without reporting the command's end "
                        "(did it replace the EXIT trap, or kill the shell?); its output so far is above. "
                        f"The next call starts a fresh shell in {state.cwd or cwd}.",
                        metadata={"exit_code": status} if status is not None else None,
                    )
                if shell.argv and cmdline(shell.window.pid) != shell.argv:
                    state.cwd = cwd_of(shell.window.pid) or state.cwd
                    name = await self._detach(
                        agent_id, shell, run_id, done, out_path, "(a program that replaced the shell by exec)"
                    )
                    raise Feedback(
                        "the command replaced the shell (exec), so its end cannot be seen; what it "
                        f"started runs on in tmux window {name!r} (inspect or stop it with the tmux "
                        f"tool). Your next bash call gets a fresh shell in {state.cwd or cwd}. To change "
                        "this shell's environment, run export/source in it instead of exec; start "
                        "long-running programs with tmux(action='new', ...).",
                        metadata={"window": name},
                    )
            if not done.done():
                name = await self._detach(agent_id, shell, run_id, done, out_path)
                state.notes.append(
                    f"this is a fresh shell in {state.cwd or cwd}: the previous one is still busy "
                    f"with a timed-out command in tmux window {name!r}"
                )
                raise Feedback(
                    f"timed out after {timeout:g} s; the command still runs in tmux window {name!r} "
                    "(nothing was killed). Inspect it with tmux(action='capture', window="
                    f"{name!r}), wait for it with tmux(action='wait', window={name!r}, timeout=...), "
                    f"answer a prompt with tmux(action='send', window={name!r}, text=...), stop it "
                    f"with tmux(action='send', window={name!r}, keys='C-c') or "
                    f"tmux(action='kill', window={name!r}). If it waits for input or is a "
                    "long-running server, start it with tmux(action='new', ...) instead. Your next "
                    f"bash call gets a fresh shell in {state.cwd or cwd}.",
                    metadata={"window": name, "timeout": timeout},
                )
            end = done.result()
            status = end.status
            rest = output.read(final=True)
            if end.shell_exited and rest.endswith("exit\n"):
                rest = rest[: -len("exit\n")]  # bash's goodbye on `exit`, not the command's
            if rest:
                collected.append(rest)
                emit(rest)
            if end.cwd:
                state.cwd = end.cwd
            if end.shell_exited and not await self._server_answers():
                raise Feedback(
                    "the tmux server stopped while the command ran (killed from outside?); its output "
                    "so far is above. The next call starts a fresh tmux server and shell."
                )
            if end.shell_exited:
                state.shell = None
                await self.kill_window(shell.window)
                notes.append(
                    f"the shell exited (exit code {status}); your next bash call starts a fresh shell "
                    f"in {state.cwd or cwd}"
                )
            with contextlib.suppress(OSError):
                out_path.unlink()
            return status, "".join(collected), notes
        except asyncio.CancelledError:
            await self._interrupt(state, shell, done, cwd)
            pump(final=True)
            raise
        except ServerGone as err:
            raise Feedback(
                "the tmux server stopped (killed from outside?); the next call starts a fresh tmux server and shell."
            ) from err
        finally:
            output.close()
            if shell.window.run is not done:  # a detached run is still listened for
                self._runs.pop(run_id, None)
            with contextlib.suppress(OSError):
                script.unlink()

    async def _shell_status(self, w: Window) -> int | None:
        """The exit status of a shell that ended on its own: from /proc, else from tmux."""
        for _ in range(10):
            status = zombie_status(w.pid)
            if status is None:
                with contextlib.suppress(ServerGone, TmuxError, RuntimeError):
                    dead, code, _ = (await self.window_info()).get(w.window_id, (False, 0, ""))
                    status = code if dead else None
            if status is not None:
                return status
            await asyncio.sleep(0.05)
        return None

    async def _server_answers(self) -> bool:
        """A round trip through the control client: is the server still alive (not shutting down)?"""
        try:
            await asyncio.wait_for(self._ctrl("display-message -p ok"), 2)
        except (ServerGone, TmuxError, TimeoutError):
            return False
        return pid_alive(self.server_pid)

    async def _type_run(self, shell: _Shell, run_id: str) -> None:
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
            await self._ctrl(f"send-keys -t {wid} C-u {_tmux_quote(line)} Enter")
        finally:
            with contextlib.suppress(TmuxError, ServerGone):
                await leave

    async def _detach(
        self,
        agent_id: str,
        shell: _Shell,
        run_id: str,
        done: asyncio.Future[Completion],
        out_path: Path,
        what: str = "(a bash command that timed out)",
    ) -> str:
        """A timed-out command keeps running: its shell becomes the tmux window `bash-N`."""
        state = self.agent(agent_id)
        state.detached += 1
        name = f"bash-{state.detached}"
        while name in state.windows:
            state.detached += 1
            name = f"bash-{state.detached}"
        w = shell.window
        w.name, w.output, w.run = name, out_path, done
        w.command = what
        state.windows[name] = w
        state.shell = None
        with contextlib.suppress(ServerGone, TmuxError):
            await self._ctrl(f"rename-window -t {w.window_id} '{agent_id}/{name}'")
        return name

    async def _interrupt(self, state: _Agent, shell: _Shell, done: asyncio.Future[Completion], cwd: str) -> None:
        """Ctrl-C; after the grace period kill the foreground process group; keep the shell."""
        pid = shell.window.pid
        try:
            with contextlib.suppress(ServerGone, TmuxError):
                await self._ctrl(f"send-keys -t {shell.window.window_id} C-c")
            started = time.monotonic()
            while not done.done() and time.monotonic() - started < KILL_DEADLINE:
                await asyncio.wait({done}, timeout=0.05)
                if done.done() or time.monotonic() - started < CANCEL_GRACE:
                    continue
                pgid = foreground_pgid(pid)
                if pgid > 0 and pgid != pid:
                    with contextlib.suppress(OSError):
                        os.killpg(pgid, signal.SIGKILL)
            if done.done() and not done.exception():
                state.cwd = done.result().cwd or state.cwd
            else:  # the shell itself does not come back: replace it
                state.shell = None
                await self.kill_window(shell.window)
                state.notes.append(f"the previous shell did not stop; started a fresh shell in {state.cwd or cwd}")
        except asyncio.CancelledError:
            raise
        except Exception:  # cleanup must never hide the cancellation
            state.shell = None

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
    def window_names(state: _Agent) -> str:
        if not state.windows:
            return "(none; start one with action='new')"
        return ", ".join(state.windows)

    async def window_info(self) -> dict[str, tuple[bool, int, str]]:
        """window_id -> (dead, exit status, current command) of every window on the server."""
        fmt = "#{window_id}\t#{pane_dead}\t#{pane_dead_status}\t#{pane_dead_signal}\t#{pane_pid}\t"
        info = {}
        for line in await self.tmux("list-windows", "-a", "-F", fmt + "#{pane_current_command}"):
            wid, dead, status, sig, pid, current = [*line.split("\t"), "", "", "", "", ""][:6]
            # tmux marks a pane dead when its terminal closes, before it reaps the process, and
            # tmux 3.3 at times leaves it unreaped (a zombie) until another child ends; read the
            # zombie's status then. Until a status is known, the program counts as running.
            code = int(status) if status else 128 + int(sig) if sig else None
            if dead == "1" and code is None and pid.isdigit():
                code = zombie_status(int(pid))
            info[wid] = (dead == "1" and code is not None, code or 0, current)
        return info
