"""One bash command in an agent's persistent shell, step by step as the protocol goes.

1. `ready_shell`: the agent's shell; a fresh one if the last had exited.
2. `start`: the command goes to RUN.sh and the run line is typed into the pane (a window
   closed from outside or a server lost before the line was taken gets a fresh shell once).
3. `follow`: RUN.out is streamed until the shell reports the end on the FIFO; a stopped
   server, a shell that ended, an `exec` that replaced it or the deadline ends it as Feedback
   (a command still running at the deadline is detached into a tmux window, never killed).
4. `finish`: the rest of the output, the new working directory, a shell that exited.
On cancellation, `interrupt`: Ctrl-C, then kill the foreground process group; a shell that
does not come back is replaced.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import logging
import os
import signal
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from workbench.core.feedback import Feedback
from workbench.terminal.output_cap import release_head
from workbench.terminal.processes import cmdline, cwd_of, foreground_pgid, pid_alive, zombie_status
from workbench.terminal.sandbox import SANDBOX_WRITES, PlantedFile, open_untrusted, write_untrusted
from workbench.terminal.shell_reports import new_secret
from workbench.terminal.state import AgentState, Completion, Shell, start_dir
from workbench.terminal.tmux_control import ServerGone, ServerStalled, TmuxError

if TYPE_CHECKING:
    from workbench.terminal.host import TerminalHost

CANCEL_GRACE = 1.0  # seconds between Ctrl-C and killing the process group
KILL_DEADLINE = 3.0  # seconds after Ctrl-C before giving up on a shell and replacing it
TICK = 0.05  # seconds between output reads while a command runs (grows to TICK_MAX)
TICK_MAX = 0.25
READ_CHUNK = 1 << 20  # bytes of output read at a time
TICK_READ = 32 << 20  # bytes read per tick while a command runs; the rest at the next tick
# Past RELEASE_FROM bytes read, what was read is given back to the filesystem every RELEASE_STEP:
# a runaway command holds on disk only what is not read yet. Not sooner: a release writes the
# range back first (ext4), which costs time that a merely large output should not pay.
RELEASE_FROM = 256 << 20
RELEASE_STEP = 64 << 20
SERVER_STOPPED = (
    "the tmux server stopped while the command ran (killed from outside?); its output so far is "
    "above. The next call starts a fresh tmux server and shell."
)

log = logging.getLogger("workbench")


class OutputSink(Protocol):
    """Where a command's output goes as it is read (`output_cap.CappedOutput`)."""

    def add(self, text: str) -> None: ...


class OutputFile:
    """Reads a growing output file incrementally, in bounded pieces (whole UTF-8 characters).

    What was read is given back to the filesystem as it goes (a hole punched in the file's
    head), so a command that prints a lot holds only the unread part on disk.
    """

    def __init__(self, path: Path):
        self.path = path
        self.fd: int | None = None
        self.pos = 0
        self.released = 0
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.end: int | None = None  # read no further than this offset

    def read(self, size: int = READ_CHUNK) -> tuple[str, bool]:
        """Up to `size` bytes' text; and whether that filled `size` (more may be there)."""
        if self.fd is None:
            try:  # writable: to release what was read; never through a link a command put there
                self.fd = open_untrusted(self.path, os.O_RDWR)
            except (FileNotFoundError, PlantedFile):
                return "", False
        if self.end is not None:
            size = max(0, min(size, self.end - self.pos))
        data = os.pread(self.fd, size, self.pos) if size else b""
        self.pos += len(data)
        if self.pos >= RELEASE_FROM and self.pos - self.released >= RELEASE_STEP:
            self.released = release_head(self.fd, self.pos, self.released)
        return self.decoder.decode(data), bool(data) and len(data) == size

    def rest(self) -> str:
        """The end of an incomplete character at the end of the file."""
        return self.decoder.decode(b"", final=True)

    def ends_with(self, tail: bytes) -> bool:
        try:
            with os.fdopen(open_untrusted(self.path, os.O_RDONLY), "rb") as fh:
                size = fh.seek(0, os.SEEK_END)
                if size < len(tail):
                    return False
                fh.seek(size - len(tail))
                return fh.read() == tail
        except OSError:
            return False

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


class BashRun:
    """One call of the bash tool: `execute` runs the steps above."""

    def __init__(
        self,
        host: TerminalHost,
        agent_id: str,
        command: str,
        *,
        workspace: Path,
        timeout: float,
        deadline: float,
        sink: OutputSink,
    ):
        self.host, self.agent_id, self.command = host, agent_id, command
        self.state: AgentState = host.agent(agent_id)
        self.workspace, self.timeout, self.deadline, self.sink = workspace, timeout, deadline, sink
        self.cwd = ""
        self.notes: list[str] = []
        self.run_id = host.reports.next_run_id()
        self.key = new_secret()  # what the shell's report of this run carries: no other process knows it
        assert host.dir is not None
        self.script = host.dir / f"{self.run_id}.sh"
        self.out_path = host.dir / SANDBOX_WRITES / f"{self.run_id}.out"
        self.output = OutputFile(self.out_path)
        self.done: asyncio.Future[Completion] = asyncio.get_running_loop().create_future()
        self.shell: Shell | None = None

    async def execute(self) -> tuple[int, list[str]]:
        """(status, notes for the model); the output went to the sink. Feedback on timeout or a
        lost shell or server."""
        self.shell = await self.ready_shell()
        try:
            await self.start()
            await self.follow()
            return await self.finish()
        except asyncio.CancelledError:
            await self.interrupt()
            try:
                self.pump()
            except OSError as err:  # the output cannot be kept (a full disk): the cancel still wins
                log.warning("the output of a cancelled bash call was not saved: %s", err)
            raise
        except ServerStalled as err:
            raise Feedback(str(err)) from err
        except ServerGone as err:
            raise Feedback(
                "the tmux server stopped (killed from outside?); the next call starts a fresh tmux server and shell."
            ) from err
        finally:
            self.output.close()
            if self.shell is None or self.shell.window.run is not self.done:  # a detached run is listened for
                self.host.reports.forget_run(self.run_id)
            if self.done.done():  # a detached shell may not have read it yet (a loaded machine)
                with contextlib.suppress(OSError):
                    self.script.unlink()

    # -- 1. the shell --

    async def ready_shell(self) -> Shell:
        state, host = self.state, self.host
        self.cwd = start_dir(state, self.workspace)
        if state.shell is not None:
            if pid_alive(state.shell.window.pid):  # the common case: its shell is there and idle
                self.notes, state.notes = state.notes, []
                return state.shell
            state.notes.append(f"the previous shell had exited; started a fresh shell in {self.cwd}")
            await host.kill_window(state.shell.window)
            state.shell = None
        try:
            shell = await host.shell(self.agent_id, self.cwd)
        except (TmuxError, ServerGone):  # the server was going away just then: once more, afresh
            await host.recover()
            shell = await host.shell(self.agent_id, self.cwd)
        self.notes, state.notes = state.notes, []
        return shell

    # -- 2. typing the run line --

    async def start(self) -> None:
        write_untrusted(self.script, self.command)  # never through a link a command put there
        self.host.reports.expect_run(self.run_id, self.key, self.done)
        assert self.shell is not None
        try:
            await self.host.type_run(self.shell, self.run_id, self.key)
        except TmuxError:  # its window was closed from outside; the command never started
            await self.host.kill_window(self.shell.window)
            self.state.shell = None
            self.shell = await self.host.shell(self.agent_id, self.cwd)
            self.notes.append(f"the shell's window had been closed; started a fresh shell in {self.cwd}")
            await self.host.type_run(self.shell, self.run_id, self.key)
        except ServerGone:  # the server died before it took the line: start afresh
            await self.host.ensure_started()
            self.shell = await self.host.shell(self.agent_id, self.cwd)
            self.notes += self.state.notes
            self.state.notes = []
            self.done = asyncio.get_running_loop().create_future()
            self.host.reports.expect_run(self.run_id, self.key, self.done)
            await self.host.type_run(self.shell, self.run_id, self.key)

    # -- 3. following the command --

    def pump(self, budget: int = TICK_READ) -> bool:
        """Pass on what the command wrote since the last read, up to `budget` bytes; True if
        there may be more."""
        read = 0
        while read < budget:
            text, more = self.output.read()
            self.sink.add(text)
            if not more:
                return False
            read += READ_CHUNK
        return True

    async def drain(self) -> None:
        """Everything left in the output file, a piece per event-loop turn."""
        while self.pump():  # noqa: ASYNC110 - not a wait: the loop runs between pieces
            await asyncio.sleep(0)
        self.sink.add(self.output.rest())

    async def follow(self) -> None:
        """Stream the output until the command ends; Feedback for whatever else ends the wait."""
        assert self.shell is not None and self.host.control is not None
        gone = self.host.control.gone
        watch: set[asyncio.Future[Any]] = {self.done, gone}
        tick = TICK
        while not self.done.done():
            left = self.deadline - time.monotonic()
            if left <= 0:
                break
            await asyncio.wait(watch, timeout=min(tick, left), return_when=asyncio.FIRST_COMPLETED)
            if self.done.done():
                return
            tick = TICK if self.pump() else min(tick * 2, TICK_MAX)
            if gone.done() or not pid_alive(self.host.server_pid):
                raise Feedback(SERVER_STOPPED)
            if not pid_alive(self.shell.window.pid):
                self.host.reports.read_all()  # its report may have been written just before it ended
                if self.done.done():
                    return
                await self.shell_ended()
            if self.shell.argv and cmdline(self.shell.window.pid) != self.shell.argv:
                await self.shell_replaced()
        if not self.done.done():
            await self.timed_out()

    async def shell_ended(self) -> None:
        assert self.shell is not None
        status = await self.shell_status()
        await self.drain()
        self.state.shell = None
        await self.host.kill_window(self.shell.window)
        ended = "ended" if status is None else f"ended with exit code {status}"
        raise Feedback(
            f"the shell {ended} while the command ran, without reporting the command's end "
            "(did it replace the EXIT trap, or kill the shell?); its output so far is above. "
            f"The next call starts a fresh shell in {self.state.cwd or self.cwd}.",
            metadata={"exit_code": status} if status is not None else None,
        )

    async def shell_replaced(self) -> None:
        assert self.shell is not None
        self.state.cwd = cwd_of(self.shell.window.pid) or self.state.cwd
        name = await self.detach("(a program that replaced the shell by exec)")
        raise Feedback(
            "the command replaced the shell (exec), so its end cannot be seen; what it "
            f"started runs on in tmux window {name!r} (inspect or stop it with the tmux "
            f"tool). Your next bash call gets a fresh shell in {self.state.cwd or self.cwd}. To change "
            "this shell's environment, run export/source in it instead of exec; start "
            "long-running programs with tmux(action='new', ...).",
            metadata={"window": name},
        )

    async def timed_out(self) -> None:
        name = await self.detach()
        where = self.state.cwd or self.cwd
        self.state.notes.append(
            f"this is a fresh shell in {where}: the previous one is still busy "
            f"with a timed-out command in tmux window {name!r}"
        )
        printed = (
            "What it printed before the timeout is above: if that answers the task, answer now without a tool call. "
            if self.output.pos
            else ""
        )
        raise Feedback(
            f"timed out after {self.timeout:g} s. {printed}The command still runs in tmux window {name!r} "
            "(nothing was killed). Inspect it with tmux(action='capture', window="
            f"{name!r}), wait for it with tmux(action='wait', window={name!r}, timeout=...), "
            f"answer a prompt with tmux(action='send', window={name!r}, text=...), stop it "
            f"with tmux(action='send', window={name!r}, keys='C-c') or "
            f"tmux(action='kill', window={name!r}). If it waits for input or is a "
            "long-running server, start it with tmux(action='new', ...) instead. Your next "
            f"bash call gets a fresh shell in {where}.",
            # partial: what it printed may answer the task (text_calls.closing_line)
            metadata={"window": name, "timeout": self.timeout, **({"partial": True} if printed else {})},
        )

    async def shell_status(self) -> int | None:
        """The exit status of a shell that ended on its own: from /proc, else from tmux."""
        assert self.shell is not None
        w = self.shell.window
        for _ in range(10):
            status = zombie_status(w.pid)
            if status is None:
                with contextlib.suppress(ServerGone, TmuxError, RuntimeError):
                    dead, code, _ = (await self.host.window_states()).get(w.window_id, (False, 0, ""))
                    status = code if dead else None
            if status is not None:
                return status
            await asyncio.sleep(0.05)
        return None

    async def detach(self, what: str = "(a bash command that timed out)") -> str:
        """A command that keeps running: its shell becomes the tmux window `bash-N`."""
        assert self.shell is not None
        state = self.state
        state.detached += 1
        name = f"bash-{state.detached}"
        while name in state.windows:
            state.detached += 1
            name = f"bash-{state.detached}"
        w = self.shell.window
        w.name, w.output, w.run, w.command = name, self.out_path, self.done, what
        state.windows[name] = w
        state.shell = None
        self.host.watch_detached()
        with contextlib.suppress(ServerGone, TmuxError):
            await self.host.ctrl(f"rename-window -t {w.window_id} '{self.agent_id}/{name}'")
        return name

    # -- 4. the end --

    async def finish(self) -> tuple[int, list[str]]:
        assert self.shell is not None
        end = self.done.result()
        if end.shell_exited and self.output.ends_with(b"exit\n"):  # bash's goodbye, not the command's
            self.output.end = self.output.path.stat().st_size - len(b"exit\n")
        await self.drain()
        if end.cwd:
            self.state.cwd = end.cwd
        if end.shell_exited:
            if not await self.host.server_answers():
                raise Feedback(SERVER_STOPPED)
            self.state.shell = None
            await self.host.kill_window(self.shell.window)
            self.notes.append(
                f"the shell exited (exit code {end.status}); your next bash call starts a fresh shell "
                f"in {self.state.cwd or self.cwd}"
            )
        with contextlib.suppress(OSError):
            self.out_path.unlink()
        return end.status, self.notes

    # -- cancellation --

    async def interrupt(self) -> None:
        """Ctrl-C; after the grace period kill the foreground process group; keep the shell."""
        shell, state, done = self.shell, self.state, self.done
        assert shell is not None
        pid = shell.window.pid
        try:
            with contextlib.suppress(ServerGone, TmuxError):
                await self.host.ctrl(f"send-keys -t {shell.window.window_id} C-c")
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
                await self.host.kill_window(shell.window)
                state.notes.append(f"the previous shell did not stop; started a fresh shell in {state.cwd or self.cwd}")
        except asyncio.CancelledError:
            raise
        except Exception:  # cleanup must never hide the cancellation
            state.shell = None


__all__ = ["BashRun", "OutputFile"]
