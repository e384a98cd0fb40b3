"""The two ways `workbench run` runs a session, for tests that check a behaviour in both: in this
process (`--no-engine`) and hosted in an engine (`--engine require`, issue 32). An engine case
is slow (its engine imports litellm) and stops the engine of each data folder it used."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from workbench.service.place import engine_place

IN_PROCESS = ("--no-engine",)
HOSTED = ("--engine", "require")
MODES = [
    pytest.param(IN_PROCESS, id="in-process"),
    pytest.param(HOSTED, id="engine", marks=[pytest.mark.slow, pytest.mark.tmux]),
]


def stop_engine(data_dir: Path) -> None:
    """Stop the engine of `data_dir` (asked, then killed by its lock file's pid) if one runs."""
    place = engine_place(data_dir)
    if not place.lock.exists():
        return
    subprocess.run(
        [sys.executable, "-m", "workbench.cli.main", "engine", "stop", "--data-dir", str(data_dir)],
        capture_output=True,
        timeout=60,
    )
    try:
        pid = int(place.lock.read_text().strip() or 0)
    except (OSError, ValueError):
        pid = 0
    if pid and _is_engine(pid):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _is_engine(pid: int) -> bool:
    try:
        return b"workbench.service.engine" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
