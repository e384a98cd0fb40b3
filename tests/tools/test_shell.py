"""bash and tmux on a real private tmux server (no mocks)."""

from __future__ import annotations

import asyncio
import itertools
import json
import subprocess
import time
import uuid
from collections import defaultdict
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.waiting import until
from workbench.config.settings import Settings
from workbench.core.feedback import model_text
from workbench.engine.recorder import kind_of
from workbench.pb import workbench_pb2 as pb
from workbench.terminal.host import TerminalHost
from workbench.terminal.processes import pid_alive
from workbench.tools.not_found import missing_command
from workbench.tools.registry import Toolbox, ToolContext

pytestmark = pytest.mark.tmux


def _server_running(socket: str) -> bool:
    return subprocess.run(["tmux", "-L", socket, "has-session"], capture_output=True).returncode == 0


async def _run(*argv: str) -> str:
    proc = await asyncio.create_subprocess_exec(*argv, stdout=asyncio.subprocess.PIPE)
    out, _ = await proc.communicate()
    return out.decode()


class Term:
    """Calls bash and tmux the way the loop does, for one or more agents of one session."""

    def __init__(self, host: TerminalHost, workspace: Path, tmp: Path):
        self.host = host
        self.workspace = workspace
        self.settings = Settings(workspace=workspace, data_dir=tmp / "data")
        self.session_dir = tmp / "session"
        self.toolbox = Toolbox(["bash", "tmux"])
        self.chunks: dict[str, list[str]] = defaultdict(list)
        self.first_chunk: dict[str, asyncio.Event] = defaultdict(asyncio.Event)
        self.ids = itertools.count(1)

    def ctx(self, agent: str) -> ToolContext:
        def on_output(call_id: str, text: str) -> None:
            self.chunks[call_id].append(text)
            self.first_chunk[call_id].set()

        return ToolContext(
            workspace=self.workspace,
            settings=self.settings,
            session_dir=self.session_dir,
            agent_id=agent,
            terminal=self.host,
            on_output=on_output,
        )

    def next_id(self) -> str:
        return f"call{next(self.ids)}"

    async def call(self, tool: str, agent: str = "a1", call_id: str = "", **args: Any) -> pb.ToolResult:
        call = pb.ToolCall(id=call_id or self.next_id(), name=tool, arguments=json.dumps(args))
        return await self.toolbox.invoke(call, self.ctx(agent))

    async def ok(self, tool: str, agent: str = "a1", **args: Any) -> str:
        result = await self.call(tool, agent, **args)
        assert not result.is_error, model_text(result)
        return result.output


@pytest.fixture
async def host() -> AsyncIterator[TerminalHost]:
    events: list[tuple[str, Any]] = []
    term_host = TerminalHost(f"wbtest-{uuid.uuid4().hex[:10]}", publish=lambda m: events.append((kind_of(m), m)))
    term_host.events = events  # type: ignore[attr-defined]
    yield term_host
    await term_host.close()
    assert not _server_running(term_host.socket_name)


@pytest.fixture
def term(host: TerminalHost, workspace: Path, tmp_path: Path) -> Term:
    return Term(host, workspace, tmp_path)


# --- bash --------------------------------------------------------------------------------


async def test_host_starts_lazily_and_announces_itself(host: TerminalHost, term: Term) -> None:
    assert not host.started and not _server_running(host.socket_name)
    assert await term.ok("bash", command="echo hi") == "hi\n"
    assert _server_running(host.socket_name)
    ((kind, ready),) = host.events  # type: ignore[attr-defined]
    assert kind == "terminal_ready"
    assert ready.socket_name == host.socket_name
    assert ready.attach_command == f"tmux -L {host.socket_name} attach"


async def test_close_is_safe_twice_and_when_never_started(tmp_path: Path) -> None:
    never = TerminalHost(f"wbtest-{uuid.uuid4().hex[:10]}")
    await never.close()
    await never.close()
    started = TerminalHost(f"wbtest-{uuid.uuid4().hex[:10]}")
    await started.ensure_started()
    assert _server_running(started.socket_name)
    await started.close()
    await started.close()
    assert not _server_running(started.socket_name)


@pytest.mark.parametrize(
    ("command", "status", "hint"),
    [
        ("true", 0, ""),
        ("false", 1, "exit code 1"),
        ("no_such_command_xyz", 127, "command not found"),
        ("bash -c 'kill -INT $$'", 130, "interrupted"),
        ("f=$(mktemp); chmod -x $f; $f", 126, "not executable"),
    ],
)
async def test_exit_status(term: Term, command: str, status: int, hint: str) -> None:
    result = await term.call("bash", command=command)
    assert result.is_error == (status != 0)
    if hint:
        assert result.metadata["exit_code"] == status
        assert result.error.startswith(f"exit code {status}")
        assert hint in result.error


async def test_stdout_and_stderr_interleave_in_order(term: Term) -> None:
    result = await term.call("bash", command="echo a; echo b >&2; echo c; echo d >&2; exit_code=3; (exit 3)")
    assert result.output == "a\nb\nc\nd\n"
    assert model_text(result) == "a\nb\nc\nd\nError: exit code 3"


async def test_a_megabyte_of_output_comes_back_whole(term: Term) -> None:
    call_id = term.next_id()
    result = await term.call(
        "bash", call_id=call_id, command="yes 0123456789abcdefghijklmnopqrstuvwxyzABCDEFG | head -c 1000000"
    )
    streamed = "".join(term.chunks[call_id])
    assert len(streamed) == 1_000_000 and streamed.startswith("0123456789")
    # the registry cuts it for the model and saves the whole text
    assert result.metadata["original_chars"] == 1_000_000
    saved = Path(result.metadata["saved_output"])
    assert saved.read_text() == streamed


async def test_cd_and_exports_persist(term: Term, workspace: Path) -> None:
    (workspace / "sub").mkdir()
    assert await term.ok("bash", command="pwd") == f"{workspace}\n"
    await term.ok("bash", command="cd sub && export GREETING=hello && counter=41")
    assert await term.ok("bash", command="pwd; echo $GREETING $((counter + 1))") == f"{workspace}/sub\nhello 42\n"


async def test_user_dotfiles_are_not_read(term: Term, home: Path) -> None:
    for rc in (".bashrc", ".bash_profile", ".profile"):
        (home / rc).write_text("echo DOTFILE-RAN; alias ls='echo broken'\n")
    (home / ".tmux.conf").write_text("set -g history-limit 10\n")
    assert await term.ok("bash", command="type ls | grep -c broken || true") == "0\n"
    assert await term.ok("bash", command="echo $PAGER") == "cat\n"
    limit = await term.host.tmux("show-options", "-gv", "history-limit")
    assert limit == ["50000"]


async def test_sentinel_text_in_commands_and_output_is_plain_output(term: Term) -> None:
    """The echo race: text shaped like the typed run line or the completion message is just output."""
    command = "echo ' __wb_run=r1; __wb'; printf 'done x r1 0 /\\n'; echo __wb_run=$__wb_run; sleep 0.2; echo after"
    out = await term.ok("bash", command=command)
    assert out.splitlines()[0] == " __wb_run=r1; __wb"
    assert out.splitlines()[1] == "done x r1 0 /"
    assert out.endswith("after\n")
    # the typed line never reaches the output, however long the command
    assert await term.ok("bash", command="x=1\n" * 200 + "echo only") == "only\n"


async def test_output_streams_while_the_command_runs(term: Term, workspace: Path) -> None:
    call_id = term.next_id()
    go = workspace / "go"  # the command goes on when the test has seen its first line (the sandbox's /tmp is its own)
    command = f"echo first; while [ ! -e {go} ]; do sleep 0.02; done; echo second"
    task = asyncio.create_task(term.call("bash", call_id=call_id, command=command))
    await asyncio.wait_for(term.first_chunk[call_id].wait(), 10)
    assert not task.done()
    assert "".join(term.chunks[call_id]) == "first\n"
    go.touch()
    result = await asyncio.wait_for(task, 10)
    assert result.output == "first\nsecond\n"


async def test_exit_ends_the_shell_and_the_next_call_gets_a_fresh_one(term: Term, workspace: Path) -> None:
    await term.ok("bash", command="cd /tmp")
    result = await term.call("bash", command="echo bye; exit 4")
    assert result.output == "bye\n"
    assert "exit code 4" in result.error and "fresh shell in /tmp" in result.error
    assert await term.ok("bash", command="pwd") == "/tmp\n"


async def test_timeout_leaves_the_command_running_and_the_next_call_works(
    term: Term, tmp_path: Path, workspace: Path
) -> None:
    pid_file = workspace / "pid"  # the sandbox's /tmp is its own
    await term.ok("bash", command="cd /tmp")
    result = await term.call("bash", command=f"echo started; sh -c 'echo $$ > {pid_file}; exec sleep 60'", timeout=0.5)
    assert result.is_error
    assert result.output == "started\n"
    assert "timed out after 0.5 s" in result.error
    assert "What it printed before the timeout is above" in result.error  # it may already hold the answer
    assert result.metadata["partial"] is True  # so the model is told it may answer from it (text_calls.closing_line)
    assert "tmux window 'bash-1'" in result.error and "tmux(action='capture'" in result.error
    assert "tmux(action='new'" in result.error  # long-running servers belong in the tmux tool
    pid = term.host.sandbox.host_pid(int(pid_file.read_text()))  # $$ in the sandbox's pid namespace
    assert pid_alive(pid)
    # the next call: a fresh shell in the last known directory, and it says so
    result = await term.call("bash", command="pwd")
    assert result.output == "/tmp\n" and not result.is_error
    assert any("fresh shell in /tmp" in note and "bash-1" in note for note in result.notes)
    # the timed-out command is a tmux window: list, capture, stop it
    assert "bash-1\ttimed-out bash command, still running" in await term.ok("tmux", action="list")
    assert "started" in await term.ok("tmux", action="capture", window="bash-1")
    await term.ok("tmux", action="send", window="bash-1", keys="C-c")
    assert "exited with code 130" in await term.ok("tmux", action="wait", window="bash-1", timeout=5)
    assert not pid_alive(pid)
    await term.ok("tmux", action="kill", window="bash-1")


async def test_a_timeout_before_any_output_does_not_point_at_output(term: Term) -> None:
    result = await term.call("bash", command="sleep 60", timeout=0.3)
    assert result.is_error and not result.output and "timed out after 0.3 s" in result.error
    assert "printed" not in result.error and "partial" not in result.metadata


async def test_a_program_waiting_for_input_times_out_with_a_tmux_hint(term: Term) -> None:
    result = await term.call("bash", command="read -p 'name? ' answer; echo got $answer", timeout=0.3)
    assert "timed out" in result.error and "waits for input" in result.error
    await term.ok("tmux", action="send", window="bash-1", text="bob\n")
    assert "got bob" in await term.ok("tmux", action="wait", window="bash-1", pattern="got", timeout=5)


async def test_cancel_stops_the_command_within_two_seconds(term: Term) -> None:
    await term.ok("bash", command="cd /tmp && export KEPT=yes")
    call_id = term.next_id()
    task = asyncio.create_task(term.call("bash", call_id=call_id, command="echo go; sleep 100"))
    await asyncio.wait_for(term.first_chunk[call_id].wait(), 5)
    started = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - started < 2
    # the same shell is still usable, with its state
    assert await term.ok("bash", command="pwd; echo $KEPT") == "/tmp\nyes\n"
    shell = term.host.agents["a1"].shell
    assert shell is not None
    assert "sleep" not in await _run("ps", "-o", "comm=", "--ppid", str(shell.window.pid))


async def test_cancel_kills_a_command_that_ignores_ctrl_c(term: Term, workspace: Path) -> None:
    pid_file = workspace / "pid"  # the sandbox's /tmp is its own
    call_id = term.next_id()
    command = f"echo go; bash -c 'trap \"\" INT; echo $$ > {pid_file}; sleep 100 & wait'"
    task = asyncio.create_task(term.call("bash", call_id=call_id, command=command))
    await asyncio.wait_for(term.first_chunk[call_id].wait(), 5)
    await until(lambda: pid_file.exists() and pid_file.read_text().strip() != "")
    pid = term.host.sandbox.host_pid(int(pid_file.read_text()))  # $$ in the sandbox's pid namespace
    assert pid_alive(pid)
    started = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - started < 3
    assert not pid_alive(pid)
    assert await term.ok("bash", command="echo still here") == "still here\n"


async def test_a_killed_tmux_server_recovers_on_the_next_call(term: Term) -> None:
    await term.ok("bash", command="cd /tmp")
    await _run("tmux", "-L", term.host.socket_name, "kill-server")
    result = await term.call("bash", command="pwd")
    assert result.output == "/tmp\n" and not result.is_error, model_text(result)
    assert any("fresh server" in note for note in result.notes)
    assert await term.ok("bash", command="echo again") == "again\n"


async def test_a_server_killed_during_a_command_is_a_clear_error(term: Term) -> None:
    call_id = term.next_id()
    task = asyncio.create_task(term.call("bash", call_id=call_id, command="echo go; sleep 100"))
    await asyncio.wait_for(term.first_chunk[call_id].wait(), 5)
    await _run("tmux", "-L", term.host.socket_name, "kill-server")
    result = await asyncio.wait_for(task, 5)
    assert result.is_error and "tmux server stopped" in result.error
    assert result.output == "go\n"
    assert await term.ok("bash", command="echo back") == "back\n"


async def test_two_agents_run_at_the_same_time_without_mixing_output(term: Term, tmp_path: Path) -> None:
    # each waits until the other has started: both end only if they overlap (else a timeout)
    loop = (
        "for i in $(seq 300); do echo {tag}$i; done; touch {dir}/{tag}; "
        "while [ ! -e {dir}/{other} ]; do sleep 0.02; done; echo {tag}-end"
    )
    a, b = await asyncio.gather(
        term.call("bash", agent="a1", command=loop.format(tag="A", other="B", dir=tmp_path), timeout=30),
        term.call("bash", agent="a2", command=loop.format(tag="B", other="A", dir=tmp_path), timeout=30),
    )
    assert a.output == "".join(f"A{i}\n" for i in range(1, 301)) + "A-end\n"
    assert b.output == "".join(f"B{i}\n" for i in range(1, 301)) + "B-end\n"
    agents = term.host.agents
    assert agents["a1"].shell is not None and agents["a2"].shell is not None
    assert agents["a1"].shell.window.window_id != agents["a2"].shell.window.window_id
    names = await term.host.tmux("list-windows", "-F", "#{window_name}")
    assert {"a1/bash", "a2/bash"} <= set(names)


async def test_bad_arguments_are_feedback(term: Term) -> None:
    assert "command is empty" in (await term.call("bash", command="  ")).error
    assert "timeout must be a positive" in (await term.call("bash", command="true", timeout=0)).error


# --- tmux ----------------------------------------------------------------------------------


async def test_tmux_drives_a_python_repl(term: Term) -> None:
    out = await term.ok("tmux", action="new", window="py", command="python3 -q")
    assert "'py'" in out
    assert ">>>" in await term.ok("tmux", action="wait", window="py", pattern=r"^>>> ", timeout=10)
    await term.ok("tmux", action="send", window="py", text="print(6 * 7)\n")
    assert "42" in await term.ok("tmux", action="wait", window="py", pattern=r"^42$", timeout=10)
    screen = await term.ok("tmux", action="capture", window="py")
    assert ">>> print(6 * 7)\n42" in screen
    assert (await term.ok("tmux", action="capture", window="py", lines=1)).startswith(">>>")
    assert "py\trunning" in await term.ok("tmux", action="list")
    # keys: Ctrl-D ends the REPL; wait without a pattern waits for the exit
    await term.ok("tmux", action="send", window="py", keys="C-d")
    assert "exited with code 0" in await term.ok("tmux", action="wait", window="py", timeout=10)
    assert "py\texited with code 0" in await term.ok("tmux", action="list")
    assert "killed window 'py'" in await term.ok("tmux", action="kill", window="py")
    assert "no windows" in await term.ok("tmux", action="list")


async def test_tmux_windows_are_per_agent_and_unknown_ones_are_listed(term: Term) -> None:
    await term.ok("tmux", agent="a1", action="new", window="srv", command="sleep 60")
    await term.ok("tmux", agent="a2", action="new", window="srv", command="sleep 60")
    result = await term.call("tmux", agent="a1", action="capture", window="nope")
    assert result.is_error and "no window 'nope'; your windows: srv" in result.error
    again = await term.call("tmux", agent="a1", action="new", window="srv", command="true")
    assert again.is_error and "already exists" in again.error
    reserved = await term.call("tmux", agent="a1", action="new", window="bash", command="true")
    assert reserved.is_error and "reserved" in reserved.error
    names = await term.host.tmux("list-windows", "-F", "#{window_name}")
    assert {"a1/srv", "a2/srv"} <= set(names)
    await term.ok("tmux", agent="a1", action="kill", window="srv")
    assert "srv\trunning" in await term.ok("tmux", agent="a2", action="list")


async def test_tmux_wait_times_out_with_the_screen(term: Term) -> None:
    await term.ok("tmux", action="new", window="w", command="echo hello; sleep 60")
    result = await term.call("tmux", action="wait", window="w", pattern="never", timeout=0.3)
    assert result.is_error and "'never' did not appear" in result.error
    assert "hello" in result.output


async def test_stop_agent_stops_its_commands_and_closes_its_windows(term: Term, tmp_path: Path) -> None:
    await term.ok("tmux", agent="a2", action="new", window="srv", command="sleep 60")
    await term.ok("bash", agent="a1", command="echo other agent")
    call_id = term.next_id()
    task = asyncio.create_task(term.call("bash", agent="a2", call_id=call_id, command="echo go; sleep 100"))
    await asyncio.wait_for(term.first_chunk[call_id].wait(), 5)
    started = time.monotonic()
    await term.host.stop_agent("a2")
    result = await asyncio.wait_for(task, 5)
    assert result.is_error
    assert time.monotonic() - started < 2
    names = await term.host.tmux("list-windows", "-F", "#{window_name}")
    assert not [n for n in names if n.startswith("a2/")]
    assert "a1/bash" in names
    assert await term.ok("bash", agent="a1", command="echo fine") == "fine\n"
    await term.host.stop_agent("never-seen")


async def test_bash_needs_a_terminal_host(workspace: Path, tmp_path: Path) -> None:
    ctx = ToolContext(
        workspace=workspace, settings=Settings(workspace=workspace, data_dir=tmp_path), session_dir=tmp_path
    )
    result = await Toolbox(["bash"]).invoke(pb.ToolCall(id="c", name="bash", arguments='{"command": "true"}'), ctx)
    assert result.is_error and "TerminalHost" in result.error


# --- hostile commands: each ends with a clear result and leaves the shell usable ------------


async def test_set_e_keeps_the_shell_and_reports_the_real_status(term: Term) -> None:
    """The shell's own prompt hooks must not trip `set -e` (a successful command was exit 1)."""
    await term.ok("bash", command="cd /tmp && export KEPT=yes")
    assert await term.ok("bash", command="set -e; echo fine") == "fine\n"
    assert await term.ok("bash", command="echo $KEPT; pwd") == "yes\n/tmp\n"
    result = await term.call("bash", command="set -e; false; echo not reached")
    assert result.output == "" and "exit code 1" in result.error and "shell exited" in result.error
    assert await term.ok("bash", command="pwd") == "/tmp\n"
    # set -e holds for the command that sets it, not for later ones (a failing test would end the shell)
    await term.ok("bash", command="export KEPT=again; set -e")
    result = await term.call("bash", command="test -f /no/such/file")
    assert result.error == "exit code 1"
    assert await term.ok("bash", command="echo $KEPT") == "again\n"


@pytest.mark.parametrize("command", ["unalias -a", "shopt -u expand_aliases"])
async def test_removing_aliases_does_not_break_the_shell(term: Term, command: str) -> None:
    await term.ok("bash", command=f"cd /tmp; {command}", timeout=5)
    assert await term.ok("bash", command="echo still; pwd", timeout=5) == "still\n/tmp\n"


@pytest.mark.parametrize("command", ["PROMPT_COMMAND=", "unset PROMPT_COMMAND", "PROMPT_COMMAND='echo hi'"])
async def test_changing_prompt_command_does_not_break_completion(term: Term, command: str) -> None:
    started = time.monotonic()
    assert await term.ok("bash", command=f"{command}; echo set", timeout=5) == "set\n"
    assert await term.ok("bash", command="echo next", timeout=5) == "next\n"
    assert time.monotonic() - started < 2
    # Ctrl-C (cancel) still ends a command in the same shell
    call_id = term.next_id()
    task = asyncio.create_task(term.call("bash", call_id=call_id, command="export KEPT=1; echo go; sleep 100"))
    await asyncio.wait_for(term.first_chunk[call_id].wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await term.ok("bash", command="echo $KEPT", timeout=5) == "1\n"


@pytest.mark.parametrize("command", ["exec bash", "exec bash --norc -i", "exec sleep 100"])
async def test_exec_replacing_the_shell_is_reported_at_once(term: Term, command: str) -> None:
    await term.ok("bash", command="mkdir -p d && cd d")
    started = time.monotonic()
    result = await term.call("bash", command=f"echo before; {command}", timeout=20)
    assert time.monotonic() - started < 3
    assert result.output.startswith("before\n")  # an interactive bash adds its prompt
    assert "replaced the shell" in result.error and "bash-1" in result.error
    out = await term.call("bash", command="pwd", timeout=5)
    assert out.output.endswith("/d\n") and not out.is_error
    assert "bash-1" in await term.ok("tmux", action="list")
    await term.ok("tmux", action="kill", window="bash-1")


async def test_tmux_send_to_an_exited_program_says_so(term: Term) -> None:
    await term.ok("tmux", action="new", window="x", command="echo hi; exit 3")
    assert "exited with code 3" in await term.ok("tmux", action="wait", window="x", timeout=5)
    result = await term.call("tmux", action="send", window="x", text="hello\n")
    assert result.is_error and "exited with code 3" in result.error and "nothing was sent" in result.error


async def test_tmux_wait_sees_a_detached_shell_end_without_a_completion(term: Term) -> None:
    result = await term.call("bash", command="echo go; exec sleep 0.5", timeout=10)
    assert "bash-1" in result.error
    started = time.monotonic()
    assert "exited with code 0" in await term.ok("tmux", action="wait", window="bash-1", timeout=10)
    assert time.monotonic() - started < 3
    assert "bash-1\ttimed-out bash command, since exited with code 0" in await term.ok("tmux", action="list")


@pytest.mark.parametrize("timeout", [float("nan"), float("inf"), -1.0, 0.0])
async def test_a_timeout_that_is_not_a_positive_finite_number_is_feedback(term: Term, timeout: float) -> None:
    result = await asyncio.wait_for(term.call("bash", command="sleep 100", timeout=timeout), 5)
    assert result.is_error and "timeout must be a positive" in result.error
    await term.ok("tmux", action="new", window="w", command="sleep 100")
    result = await asyncio.wait_for(term.call("tmux", action="wait", window="w", timeout=timeout), 5)
    assert result.is_error and "timeout must be a positive" in result.error


async def test_parallel_calls_of_one_agent_keep_their_own_timeouts(term: Term) -> None:
    """Parallel tool calls of one agent share its shell one at a time; waiting counts toward a timeout."""
    started = time.monotonic()
    slow, quick = await asyncio.gather(
        term.call("bash", command="sleep 2; cd /tmp; echo slow", timeout=10),
        term.call("bash", command="echo quick", timeout=0.5),
    )
    assert quick.is_error and "before it started" in quick.error and quick.output == ""
    assert slow.output == "slow\n"
    assert time.monotonic() - started < 3
    assert await term.ok("bash", command="pwd") == "/tmp\n"


async def test_tmux_wait_reports_the_real_exit_status_and_signal(term: Term) -> None:
    """tmux marks a pane dead (pty closed) a moment before its exit status is known."""
    for i in range(15):
        await term.ok("tmux", action="new", window=f"x{i}", command="exit 3")
        assert "exited with code 3" in await term.ok("tmux", action="wait", window=f"x{i}", timeout=5)
    await term.ok("tmux", action="new", window="k", command="kill -9 $$")
    assert "exited with code 137" in await term.ok("tmux", action="wait", window="k", timeout=5)


@pytest.mark.parametrize(
    ("command", "status"),
    [("trap 'echo trapped' EXIT; exit 3", 3), ("trap - EXIT; exit 5", 5), ("kill -9 $$", 137)],
)
async def test_a_shell_that_ends_without_reporting_still_gives_its_status(
    term: Term, command: str, status: int
) -> None:
    await term.ok("bash", command="cd /tmp")
    result = await term.call("bash", command=command, timeout=10)
    assert result.is_error and f"exit code {status}" in result.error and "fresh shell" in result.error
    assert await term.ok("bash", command="pwd") == "/tmp\n"


async def test_exit_is_reported_as_an_exit_every_time(term: Term) -> None:
    for _ in range(10):
        result = await term.call("bash", command="echo bye; exit 4")
        assert result.output == "bye\n"
        assert "exit code 4" in result.error and "the shell exited" in result.error


async def test_a_shell_that_ignores_ctrl_c_is_replaced_and_the_note_names_the_directory(
    term: Term, workspace: Path
) -> None:
    call_id = term.next_id()
    command = "trap '' INT; echo go; while :; do :; done"
    task = asyncio.create_task(term.call("bash", call_id=call_id, command=command))
    await asyncio.wait_for(term.first_chunk[call_id].wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 6)
    result = await term.call("bash", command="pwd")
    assert result.output == f"{workspace}\n"
    assert f"started a fresh shell in {workspace}" in " ".join(result.notes)


async def test_tmux_send_keeps_a_trailing_semicolon(term: Term) -> None:
    """tmux reads an argument that ends in ; as a command separator; typed text must not lose it."""
    await term.ok("tmux", action="new", window="sh")
    await term.ok("tmux", action="send", window="sh", text="echo 'a;")
    await term.ok("tmux", action="send", window="sh", text="b' 'c\\;")
    await term.ok("tmux", action="send", window="sh", text="'\n")
    out = await term.ok("tmux", action="wait", window="sh", pattern=r"^a;b c\\;$", timeout=5)
    assert "a;b c\\;" in out


async def test_a_lone_surrogate_in_text_is_feedback_not_a_defect(term: Term) -> None:
    result = await term.call("bash", command="echo \ud800 x")
    assert result.is_error and "surrogate" in result.error and "command" in result.error
    await term.ok("tmux", action="new", window="t")
    for args in ({"text": "echo \udcff\n"}, {"keys": "Enter \ud800"}):
        result = await term.call("tmux", action="send", window="t", **args)
        assert result.is_error and "surrogate" in result.error
    result = await term.call("tmux", action="new", window="s", command="echo \ud800")
    assert result.is_error and "surrogate" in result.error
    assert await term.ok("bash", command="echo ok") == "ok\n"


async def test_tmux_wait_and_capture_leave_out_tmux_dead_pane_banner(term: Term) -> None:
    # (a program that ends at once can lose its output in tmux itself: give it a moment)
    await term.ok("tmux", action="new", window="x", command="echo hi; sleep 0.2; exit 3")
    out = await term.ok("tmux", action="wait", window="x", timeout=5)
    assert out == "the program in 'x' exited with code 3:\nhi"
    assert await term.ok("tmux", action="capture", window="x") == "hi"


@pytest.mark.parametrize("command", ["--version", "-x", "-- echo hi"])
async def test_a_command_that_starts_with_a_dash_is_run_as_bash_would(term: Term, command: str) -> None:
    """Not taken for an option of the shell's internals (it said 'eval: -x: invalid option')."""
    result = await term.call("bash", command=command)
    assert result.metadata["exit_code"] == 127
    assert "eval" not in result.output and "command not found" in result.output


async def test_a_person_scrolling_the_shell_pane_does_not_eat_the_command(term: Term) -> None:
    """Scrolling back in an attached pane enters copy mode, where typed keys never reach the shell."""
    await term.ok("bash", command="echo first")
    shell = term.host.agents["a1"].shell
    assert shell is not None
    await term.host.tmux("copy-mode", "-t", shell.window.window_id)
    assert await term.ok("bash", command="echo second", timeout=5) == "second\n"


async def test_a_bash_call_rings_no_bell_in_the_shell_window(term: Term) -> None:
    """The run line's C-u on an empty line rang readline's bell: every command flagged the
    agent's window with an alert (`!` for a person attached) and made tmux do its alert work."""
    for _ in range(3):
        await term.ok("bash", command="true")
    shell = term.host.agents["a1"].shell
    assert shell is not None
    flags = await term.host.ctrl(f"display-message -p -t {shell.window.window_id} '#{{window_bell_flag}}'")
    assert flags == ["0"]


async def test_tmux_send_reaches_a_program_whose_pane_a_person_scrolled(term: Term) -> None:
    await term.ok("tmux", action="new", window="py", command="python3 -q")
    await term.ok("tmux", action="wait", window="py", pattern=r"^>>> ", timeout=10)
    w = term.host.agents["a1"].windows["py"]
    await term.host.tmux("copy-mode", "-t", w.window_id)
    await term.ok("tmux", action="send", window="py", text="print(6 * 7)\n")
    assert "42" in await term.ok("tmux", action="wait", window="py", pattern=r"^42$", timeout=5)


async def test_a_directory_name_with_a_newline_is_kept_across_a_fresh_shell(term: Term, workspace: Path) -> None:
    weird = workspace / "a\nb c\\d"
    weird.mkdir()
    await term.ok("bash", command="cd $'a\\nb c\\\\d'")
    assert term.host.agent("a1").cwd == str(weird)
    await term.call("bash", command="exit 0")  # the next shell starts where the last one was
    assert await term.ok("bash", command="pwd") == f"{weird}\n"


async def test_python_output_is_unbuffered_in_the_shell(term: Term, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTHONUNBUFFERED", raising=False)  # the server starts on the first call
    result = await term.call("bash", command="python3 -c 'import time; print(\"early\"); time.sleep(100)'", timeout=4)
    assert result.is_error and "timed out" in result.error
    assert result.output == "early\n"


async def test_command_not_found_names_the_close_executable_on_path(
    term: Term, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "pytest").write_text("#!/bin/sh\necho ran\n")
    (tools / "pytest").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}:/usr/bin:/bin")  # the server starts on the first call
    result = await term.call("bash", command="pytset -q")
    assert result.metadata["exit_code"] == 127
    assert "Did you mean `pytest`?" in result.error and "install" not in result.error
    unknown = await term.call("bash", command="zqxjkv --help")
    assert "Did you mean" not in unknown.error and "install the program" in unknown.error


def test_the_missing_name_is_read_from_bash_s_message() -> None:
    assert missing_command("x\nbash: pytset: command not found\n") == "pytset"
    assert missing_command("bash: line 3: ./gradlew: command not found") == ""
    assert missing_command("all fine") == ""


async def test_a_command_detached_before_its_shell_read_it_still_runs(term: Term) -> None:
    """A slow shell (a loaded machine; here a PROMPT_COMMAND that sleeps) reads the command late."""
    await term.ok("bash", command="PROMPT_COMMAND='__wb_prompt; sleep 1'")
    result = await term.call("bash", command="echo ran-late; sleep 30", timeout=0.2)
    assert "timed out" in result.error
    found = await term.ok("tmux", action="wait", window="bash-1", pattern="ran-late", timeout=15)
    assert "ran-late" in found
