"""Git's files that Workbench reads itself (the sandbox's protection at a session's start, the git
report at its end) are read only when they are regular files: a FIFO planted as `.git/commondir`,
as a nested repository's `config` or as a hook hung the start or the end of the session forever."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = """
import sys, time
from pathlib import Path
from workbench.terminal.git_report import describe, git_changes
from workbench.terminal.protected import git_control
ws = Path(sys.argv[1])
pinned, read_only = git_control(ws, lambda p: True, make=False)
print("protected", len(pinned), len(read_only))
print("report", describe(git_changes(ws, 0, ws / ".git"), ws))
"""


def test_fifos_in_git_folders_are_named_not_read(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    subprocess.run(["git", "init", "-q", str(workspace / "sub")], check=True)
    os.mkfifo(workspace / ".git" / "commondir")  # the workspace's own repository: read at the start
    nested = workspace / "sub" / ".git"
    (nested / "config").unlink()
    os.mkfifo(nested / "config")
    os.mkfifo(nested / "hooks" / "pre-commit")
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(workspace)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("protected ")  # the start went on: the FIFO commondir was not read
    report = done.stdout.split("report ", 1)[1]
    assert "sub/.git/config (a FIFO (named pipe), not read)" in report, report
    assert "sub/.git/hooks/pre-commit (a FIFO (named pipe), not read)" in report, report
