"""The texts of bash and tmux the model reads, pinned whole (issue 36 item 8). Without a tmux
server: the argument refusals, the exit-status lines, the notes a failed command's output gets (the
code it points at, a missing module, the sandbox refusing it, a secret kept from the shells) and the
note of an output cut to the limit. With one (marked tmux): a failed command, a command not found,
a timeout, a shell that exited, a success that printed nothing, an in-place edit that changed
nothing, the tmux tool's answers. A change of wording is a reviewed diff
(`pytest --inline-snapshot=review`)."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from inline_snapshot import snapshot

from tests.words import said, steady, tool_ctx
from workbench.terminal.host import TerminalHost
from workbench.terminal.sandbox import Policy, refusal_hint
from workbench.terminal.shell_env import missing_secret_hint
from workbench.tools.code_refs import pointers
from workbench.tools.registry import Toolbox, ToolContext
from workbench.tools.shell import _status_text

BOX = Toolbox()


async def test_bash_arguments_refused_before_anything_runs(workspace: Path, tmp_path: Path) -> None:
    ctx = tool_ctx(workspace, tmp_path)
    assert await said(BOX, ctx, "bash", {"command": "  "}) == snapshot(
        "Error: command is empty; pass the shell command to run"
    )
    assert await said(BOX, ctx, "bash", {"command": "ls", "timeout": 0}) == snapshot(
        "Error: timeout must be a positive number of seconds, got 0"
    )
    assert await said(BOX, ctx, "bash", {"command": "echo a\u0000b"}) == snapshot(
        "Error: command contains a NUL character; remove it"
    )
    assert await said(BOX, ctx, "bash", {"command": "echo \ud83d"}) == snapshot(
        "Error: command contains '\\ud83d' at position 5, a lone UTF-16 surrogate that is not valid text; remove it or write the whole character"
    )


def test_exit_status_lines() -> None:
    lines = {status: _status_text(status) for status in (1, 2, 126, 127, 130, 137, 143, 200)} | {
        "127, close": _status_text(127, ["git", "gtk", "gio"])
    }
    assert lines == snapshot(
        {
            1: "exit code 1",
            2: "exit code 2",
            126: "exit code 126: found but not executable (permission denied?). Check it with `ls -l`, `chmod +x` it, or run it through its interpreter (bash x.sh, python3 x.py).",
            127: "exit code 127: command not found. Check the spelling and PATH (`command -v NAME`), use the full path, or install the program.",
            130: "exit code 130: interrupted (SIGINT)",
            137: "exit code 137: killed by SIGKILL",
            143: "exit code 143: killed by SIGTERM",
            200: "exit code 200",
            "127, close": "exit code 127: command not found. Did you mean `git`? (also close: gtk, gio) Check the spelling, or run `command -v NAME`.",
        }
    )


def test_notes_on_the_code_a_failure_points_at(workspace: Path) -> None:
    (workspace / "app").mkdir()
    (workspace / "app" / "calc.py").write_text("def div(a, b):\n    return a / b\n")
    (workspace / "tests").mkdir()
    (workspace / "tests" / "test_calc.py").write_text(
        "from app.calc import div\n\n\ndef test_div():\n    assert div(1, 0) == 0\n"
    )
    traceback = (
        "Traceback (most recent call last):\n"
        '  File "tests/test_calc.py", line 5, in test_div\n'
        "    assert div(1, 0) == 0\n"
        '  File "/usr/lib/python3.11/fractions.py", line 10, in x\n'
        '  File "app/calc.py", line 2, in div\n'
        "    return a / b\n"
        "ZeroDivisionError: division by zero\n"
    )
    assert pointers(traceback, workspace) == snapshot(
        [
            'the output points at tests/test_calc.py line 5: `assert div(1, 0) == 0` (read it: {"name": "read_file", "arguments": {"path": "tests/test_calc.py", "offset": 1, "limit": 20}}); app/calc.py line 2: `return a / b` (read it: {"name": "read_file", "arguments": {"path": "app/calc.py", "offset": 1, "limit": 20}})'
        ]
    )
    assert pointers("ModuleNotFoundError: No module named 'calc'\n", workspace) == snapshot(
        [
            "No module named 'calc': Python cannot find a module the code imports; app/calc.py is in the workspace: run the command from that file's folder or fix the import"
        ]
    )
    assert pointers("ModuleNotFoundError: No module named 'requests'\n", workspace) == snapshot(
        [
            "No module named 'requests': Python cannot find a module the code imports; install the package that provides it only if it is a published package"
        ]
    )
    assert pointers("main.go:3: undefined: x\n", workspace) == snapshot([])


def _host_writable_outside_tmp() -> Path:
    """A folder the host can write that the sandbox does not: outside /tmp (a checkout under /tmp, as in a
    clean clone there, is writable to commands) and outside the workspace."""
    for folder in (Path.home(), Path(__file__).resolve().parent, Path("/var/tmp")):
        if not folder.resolve().is_relative_to("/tmp") and os.access(folder, os.W_OK):
            return folder.resolve()
    pytest.skip("no host-writable folder outside /tmp")


def test_notes_on_the_sandbox_refusing_a_command(workspace: Path, tmp_path: Path) -> None:
    outside = _host_writable_outside_tmp() / "not-written"
    hidden = tmp_path / "secrets"

    def hint(output: str, mode: str = "workspace-write", command: str = "") -> str | None:
        policy = Policy(mode, workspace, False, (), (hidden,), "bwrap")
        found = refusal_hint(policy, tmp_path / "session", output, str(workspace), command)
        return None if found is None else steady(found, (workspace, "<ws>"), (tmp_path, "<tmp>"), (outside, "<out>"))

    assert hint(f"touch: cannot touch '{outside}': Read-only file system") == snapshot(
        "sandbox: <out> is read-only to commands; they may write only in the workspace and /tmp. The person can add a folder with sandbox_writable in the user config, or run with --sandbox off"
    )
    assert hint("touch: cannot touch 'a.txt': Read-only file system", mode="read-only") == snapshot(
        'sandbox: <ws>/a.txt is read-only: the sandbox is read-only (sandbox = "read-only"); "workspace-write" lets commands write in the workspace'
    )
    assert hint(f"cat: {hidden}/key: No such file or directory") == snapshot(
        "sandbox: <tmp>/secrets is hidden from commands (an empty folder; setting sandbox_hidden, with the data folder and the Workbench config always hidden)"
    )
    assert hint("error: could not lock config file .git/config: Read-only file system") == snapshot(
        "sandbox: the repository's git control files (.git itself, .git/config, hooks, info, modules) are read-only to commands, so that nothing planted there runs when the person uses git. git add, commit, checkout, branch, merge, stash and tag work; git config, remote add, submodule, upstream tracking and lfs install fail by design: ask the person to run them outside the sandbox"
    )
    assert hint("cp: cannot create regular file '.workbench/config.toml': Read-only file system") == snapshot(
        "sandbox: .workbench/ (the project's Workbench config) is read-only to commands; ask the person to change it outside the sandbox"
    )
    assert hint("curl: (6) Could not resolve host: example.com") == snapshot(
        "sandbox: commands have no network (127.0.0.1 is the sandbox's own: a server started in a tmux window is reachable, one outside the sandbox is not). The person can allow it with --allow-net or sandbox_network = true."
    )
    assert hint("ls: cannot access '/run/user/1000/bus': No such file or directory") == snapshot(
        "sandbox: /run is hidden from commands (the host's sockets live there); the person can show a path with sandbox_run_visible in the user config"
    )
    assert hint(f"error connecting to {tmp_path}/session/tmux (No such file or directory)") == snapshot(
        "sandbox: tmux commands inside the sandbox cannot reach the session's tmux server (so that a command cannot steer it); use the tmux tool for windows"
    )
    assert hint("[Errno 2] No such file or directory", command="python3 -c 'open(\"/run/docker.sock\")'") == snapshot(
        "sandbox: /run is hidden from commands (the host's sockets live there); the person can show a path with sandbox_run_visible in the user config"
    )
    assert hint("plain failure") is None


def test_note_on_a_secret_kept_from_the_shells() -> None:
    env = {"GITHUB_TOKEN": "x", "OPENAI_API_KEY": "y", "HOME": "/root"}
    assert missing_secret_hint("error: GITHUB_TOKEN is not set", env) == snapshot(
        'the shells do not get variables that look like secrets (GITHUB_TOKEN here); the person can let one through with shell_env_passthrough = ["GITHUB_TOKEN"] in the user config'
    )
    assert missing_secret_hint("fatal: Authentication failed for 'https://x'", env) == snapshot(
        'the shells do not get variables that look like secrets (GITHUB_TOKEN, OPENAI_API_KEY here); the person can let one through with shell_env_passthrough = ["GITHUB_TOKEN"] in the user config'
    )
    assert missing_secret_hint("fatal: Authentication failed", env, ["GITHUB_TOKEN", "OPENAI_API_KEY"]) is None


async def test_an_output_cut_to_the_output_limit(workspace: Path, tmp_path: Path) -> None:
    (workspace / "long.txt").write_text("".join(f"row {i}\n" for i in range(1, 201)))
    ctx = tool_ctx(workspace, tmp_path, output_limit=300)
    assert await said(BOX, ctx, "read_file", {"path": "long.txt"}) == snapshot("""\
     1	row 1
     2	row 2
     3	row 3
     4	row 4
     5	row 5
     6	row 6
     7	row 7
     8	row 8
     9	row 9
    10	row 10
    11	row 11
    1
[... 820 characters (58 lines) cut from the middle; the whole output (1,120 characters) is saved at <tmp>/session/outputs/c1.txt; open it with read_file(path='<tmp>/session/outputs/c1.txt', offset=N, limit=M) ...]

    71	row 71
    72	row 72
[lines 1-72 of 200 shown; the page stopped at about 1,000 characters; read on with read_file(path='long.txt', offset=73)]\
""")


# --- with a tmux server --------------------------------------------------------------------


@pytest.fixture
async def term(workspace: Path, tmp_path: Path) -> AsyncIterator[ToolContext]:
    host = TerminalHost(f"wbtest-{uuid.uuid4().hex[:10]}")
    ctx = tool_ctx(workspace, tmp_path)
    ctx.terminal = host
    yield ctx
    await host.close()


async def run(ctx: ToolContext, name: str, arguments: dict[str, object]) -> str:
    """`said`, with the test's own tmux socket written `<socket>`."""
    assert isinstance(ctx.terminal, TerminalHost)
    return (await said(BOX, ctx, name, arguments)).replace(ctx.terminal.socket_name, "<socket>")


TRACE = (
    "Traceback (most recent call last):\n"
    '  File "calc.py", line 4, in <module>\n'
    "    print(div(1, 0))\n"
    '  File "calc.py", line 2, in div\n'
    "    return a / b\n"
    "ZeroDivisionError: division by zero\n"
)


@pytest.mark.tmux
async def test_bash_failures(term: ToolContext) -> None:
    (term.workspace / "calc.py").write_text("def div(a, b):\n    return a / b\n\nprint(div(1, 0))\n")
    (term.workspace / "trace.txt").write_text(TRACE)  # a traceback of its own: Python's differs by version
    assert await run(term, "bash", {"command": "echo before; exit_code() { return 3; }; exit_code"}) == snapshot("""\
before
Error: exit code 3\
""")
    assert await run(term, "bash", {"command": "(cat trace.txt; exit 1)"}) == snapshot("""\
Traceback (most recent call last):
  File "calc.py", line 4, in <module>
    print(div(1, 0))
  File "calc.py", line 2, in div
    return a / b
ZeroDivisionError: division by zero
Error: exit code 1; the output points at calc.py line 4: `print(div(1, 0))` (read it: {"name": "read_file", "arguments": {"path": "calc.py", "offset": 1, "limit": 20}}); calc.py line 2: `return a / b` (read it: {"name": "read_file", "arguments": {"path": "calc.py", "offset": 1, "limit": 20}})\
""")
    assert await run(term, "bash", {"command": "frobnicate-the-widgets --now"}) == snapshot("""\
bash: frobnicate-the-widgets: command not found
Error: exit code 127: command not found. Check the spelling and PATH (`command -v NAME`), use the full path, or install the program.\
""")
    assert await run(term, "bash", {"command": "echo partial; sleep 60", "timeout": 5}) == snapshot("""\
partial
Error: timed out after 5 s. What it printed before the timeout is above: if that answers the task, answer now without a tool call. The command still runs in tmux window 'bash-1' (nothing was killed). Inspect it with tmux(action='capture', window='bash-1'), wait for it with tmux(action='wait', window='bash-1', timeout=...), answer a prompt with tmux(action='send', window='bash-1', text=...), stop it with tmux(action='send', window='bash-1', keys='C-c') or tmux(action='kill', window='bash-1'). If it waits for input or is a long-running server, start it with tmux(action='new', ...) instead. Your next bash call gets a fresh shell in <ws>.\
""")
    assert await run(term, "bash", {"command": "pwd"}) == snapshot("""\
<ws>
this is a fresh shell in <ws>: the previous one is still busy with a timed-out command in tmux window 'bash-1'\
""")
    assert await run(term, "bash", {"command": "exec sleep 30"}) == snapshot(
        "Error: the command replaced the shell (exec), so its end cannot be seen; what it started runs on in tmux window 'bash-2' (inspect or stop it with the tmux tool). Your next bash call gets a fresh shell in <ws>. To change this shell's environment, run export/source in it instead of exec; start long-running programs with tmux(action='new', ...)."
    )
    assert await run(term, "bash", {"command": "echo going; kill -9 $$"}) == snapshot("""\
going
Error: the shell ended with exit code 137 while the command ran, without reporting the command's end (did it replace the EXIT trap, or kill the shell?); its output so far is above. The next call starts a fresh shell in <ws>.\
""")
    assert await run(term, "bash", {"command": "exit 4"}) == snapshot(
        "Error: exit code 4; the shell exited (exit code 4); your next bash call starts a fresh shell in <ws>"
    )


@pytest.mark.tmux
async def test_bash_successes_that_did_less_than_they_look(term: ToolContext) -> None:
    (term.workspace / "net.toml").write_text("timeout = 5\n")
    assert await run(term, "bash", {"command": "mkdir build"}) == snapshot(
        "The command succeeded (exit code 0) and printed nothing."
    )
    assert await run(term, "bash", {"command": "sed -i 's/timeout = 120/timeout = 30/' net.toml"}) == snapshot("""\
The command succeeded (exit code 0) and printed nothing.
sed -i changed nothing: net.toml is as before the command (its pattern matched no line). Read the file to copy its exact text: {"name": "read_file", "arguments": {"path": "net.toml"}}\
""")
    assert await run(term, "bash", {"command": "perl -pi -e 's/retries/tries/' net.toml && cat net.toml"}) == snapshot("""\
timeout = 5
perl -i changed nothing: net.toml is as before the command (its pattern matched no line). Read the file to copy its exact text: {"name": "read_file", "arguments": {"path": "net.toml"}}\
""")
    assert await run(term, "bash", {"command": "sed -i 's/timeout = 5/timeout = 30/' net.toml"}) == snapshot(
        "The command succeeded (exit code 0) and printed nothing."
    )
    assert (term.workspace / "net.toml").read_text() == "timeout = 30\n"


@pytest.mark.tmux
async def test_tmux_answers(term: ToolContext) -> None:
    assert await run(term, "tmux", {"action": "list"}) == snapshot(
        "no windows; start one with tmux(action='new', window=NAME, command=...)"
    )
    assert await run(term, "tmux", {"action": "new"}) == snapshot(
        "Error: new needs window=NAME made of letters, digits, . _ + - (at most 40)"
    )
    assert await run(term, "tmux", {"action": "new", "window": "bash"}) == snapshot(
        "Error: 'bash' is reserved for the bash tool's shells; pick another name"
    )
    assert await run(term, "tmux", {"action": "capture"}) == snapshot(
        "Error: this action needs window=NAME; your windows: (none; start one with action='new')"
    )
    assert await run(term, "tmux", {"action": "capture", "window": "nope"}) == snapshot(
        "Error: no window 'nope'; your windows: (none; start one with action='new')"
    )
    assert await run(term, "tmux", {"action": "new", "window": "srv", "command": "echo ready; sleep 30"}) == snapshot(
        "started 'echo ready; sleep 30' in window 'srv' (cwd <ws>); attach: tmux -L <socket> attach"
    )
    assert await run(term, "tmux", {"action": "new", "window": "srv", "command": "true"}) == snapshot(
        "Error: window 'srv' already exists; send to it, or kill it first. Your windows: srv"
    )
    assert await run(term, "tmux", {"action": "wait", "window": "srv", "pattern": "ready"}) == snapshot("""\
'ready' appeared in 'srv':
ready\
""")
    assert await run(term, "tmux", {"action": "wait", "window": "srv", "pattern": "never", "timeout": 1}) == snapshot("""\
ready
Error: 'never' did not appear in 'srv' within 1 s; it still runs. The last lines are above.\
""")
    assert await run(term, "tmux", {"action": "wait", "window": "srv", "pattern": "("}) == snapshot(
        "Error: pattern is not a valid regex: missing ), unterminated subpattern at position 0"
    )
    assert await run(term, "tmux", {"action": "send", "window": "srv"}) == snapshot(
        "Error: send needs text='...' to type and/or keys='Enter' (or 'C-c', ...)"
    )
    assert await run(term, "tmux", {"action": "send", "window": "srv", "keys": "C-c"}) == snapshot("sent to 'srv'")
    assert await run(term, "tmux", {"action": "wait", "window": "srv"}) == snapshot("""\
the program in 'srv' exited with code 130:
ready
^C\
""")
    assert await run(term, "tmux", {"action": "capture", "window": "srv", "lines": 0}) == snapshot(
        "Error: lines must be a positive number"
    )
    assert await run(term, "tmux", {"action": "list"}) == snapshot("srv\texited with code 130: echo ready; sleep 30")
    assert await run(term, "tmux", {"action": "kill", "window": "srv"}) == snapshot("killed window 'srv'")
