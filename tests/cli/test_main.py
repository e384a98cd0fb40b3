"""The command line's dispatch (workbench/cli/main.py): a registered command's argparse
subcommand, or the app for anything else; `--` before a task that is a command's name."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from workbench.cli.commands import app, run
from workbench.cli.main import COMMANDS, commands, main, parse


def test_a_free_prompt_is_the_apps_task_and_a_command_name_is_the_command() -> None:
    free = parse(["fix the login check in auth.go"])
    assert free.handle is app.handle and free.prompt == "fix the login check in auth.go"
    command = parse(["run", "go", "--max-turns", "3"])
    assert command.handle is run.handle and (command.prompt, command.max_turns) == ("go", 3)
    escaped = parse(["--", "run"])
    assert escaped.handle is app.handle and escaped.prompt == "run"
    flagged = parse(["--model", "demo", "sessions"])  # the first word decides, as before
    assert flagged.handle is app.handle and flagged.prompt == "sessions"
    assert parse([]).handle is app.handle and parse([]).prompt is None


def test_the_app_handler_runs_for_a_task_after_dashes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nope"
    assert main(["--workspace", str(missing), "--data-dir", str(tmp_path / "d"), "--", "run"]) == 2
    assert capsys.readouterr().err == f"workbench: workspace {missing} is not a folder\n"
    assert main(["   "]) == 2
    assert "the task is empty" in capsys.readouterr().err


def test_help_lists_every_command_and_says_when_dashes_are_needed(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: workbench ")
    width = max(len(c.name) for c in commands())
    for command in commands():  # one column: each name and its summary apart, the summaries aligned
        assert f"  {command.name:<{width}}  {command.summary}\n" in out, out
    assert "workbench -- run" in out


@pytest.mark.parametrize("name", COMMANDS)
def test_each_command_has_its_own_usage_and_bad_flags_are_exit_2(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    positional = {
        "run": ["go"],
        "export": ["an-id"],
        "mcp": ["list"],
        "rewind": ["an-id", "--to", "1"],
        "checkpoints": ["an-id"],
        "engine": ["status"],
        "attach": ["an-id"],
    }.get(name, [])
    assert main([name, *positional, "--no-such-flag"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"usage: workbench {name}") and "--no-such-flag" in err


def test_the_command_line_imports_nothing_below_the_session_package() -> None:
    """Its start stays light: no engine, guard, tools, model, terminal module and no litellm."""
    code = (
        "import sys, workbench.cli.main, workbench.cli.launch; "
        "print(sorted(m for m in sys.modules if m == 'litellm' or m.split('.')[:2] in "
        "[['workbench', p] for p in ('engine', 'guard', 'tools', 'model', 'terminal')]))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_a_command_s_line_loads_no_other_command_s_module() -> None:
    """`workbench run ...` parsed its flags with every command's parser built, so every
    command's module (the app's, web, acp, attach, ...) loaded: ~40 ms of each run's start."""
    code = (
        "import sys; from workbench.cli.main import parse; parse(['run', 'x']); "
        "print(sorted(m for m in sys.modules if m.startswith('workbench.cli.commands.')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "['workbench.cli.commands.app', 'workbench.cli.commands.run']"  # app: the default


def test_the_apps_start_on_a_new_session_loads_no_engine_before_the_first_frame(tmp_path: Path) -> None:
    """`workbench` up to the app's run: flags, settings, log file, the TUI's modules. `resumed`
    imported the session catalog (and with it the engine, ~150 ms) even with no --resume."""
    code = (
        "import sys, workbench.tui.run as app, workbench.cli.commands.app as command; "
        "command.not_terminals = lambda: ''; "  # as in a terminal (here stdout is a pipe)
        "app.run_app = lambda *a, **k: print(sorted(m for m in sys.modules if m in "
        "('litellm', 'sqlite3', 'workbench.session.catalog', 'workbench.session.session') "
        "or m.startswith('workbench.engine'))) or 0; "
        "from workbench.cli.main import main; "
        f"sys.exit(main(['--model', 'demo', '--workspace', {str(tmp_path)!r}, '--data-dir', {str(tmp_path / 'd')!r}]))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_a_command_runs_with_the_collector_on_and_the_app_starts_with_it_off(tmp_path: Path) -> None:
    """The console script turns the garbage collector off at once (cli/launch.py); the app turns it
    on after its first frame, any other command before its handler runs."""
    code = (
        "import gc, sys; gc.disable(); import workbench.tui.run as app, workbench.cli.commands.app as command; "
        "command.not_terminals = lambda: ''; "  # as in a terminal (here stdout is a pipe)
        "app.run_app = lambda *a, **k: print('app', gc.isenabled()) or 0; "
        "from workbench.cli.main import main; "
        f"main(['--model', 'demo', '--workspace', {str(tmp_path)!r}, '--data-dir', {str(tmp_path / 'd')!r}]); "
        "main(['config']); print('config', gc.isenabled())"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path)
    assert done.stdout.split("\n")[0] == "app False" and done.stdout.strip().endswith("config True")


def _app(tmp_path: Path, stdin: int, stdout: int) -> subprocess.CompletedProcess[str]:
    """`workbench TASK` as a new process on the demo model, with these stdin and stdout."""
    cmd = [sys.executable, "-m", "workbench.cli.launch", "fix the tests", "--model", "demo"]
    cmd += ["--workspace", str(tmp_path), "--data-dir", str(tmp_path / "d")]
    return subprocess.run(cmd, stdin=stdin, stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=60)


def test_the_app_without_a_terminal_refuses_in_one_line_with_exit_2(tmp_path: Path) -> None:
    """Issue 37 item 5: `workbench TASK < /dev/null > out` drew the full-screen app into the file
    and never ended. Real processes: stdin /dev/null; stdout a file; each with the other a terminal."""
    out = tmp_path / "out"
    primary, secondary = pty.openpty()
    try:
        with out.open("w") as file:
            cases = {
                "stdin and stdout are not one": _app(tmp_path, subprocess.DEVNULL, file.fileno()),
                "stdin is not one": _app(tmp_path, subprocess.DEVNULL, secondary),
                "stdout is not one": _app(tmp_path, secondary, file.fileno()),
            }
    finally:
        os.close(primary)
        os.close(secondary)
    for missing, done in cases.items():
        assert done.returncode == 2, (missing, done.stderr)
        assert done.stderr == (
            f"workbench: the app needs a terminal, and {missing}; without one, run a task with `workbench run PROMPT`\n"
        )
    assert out.read_text() == "", "nothing drawn into the file"
