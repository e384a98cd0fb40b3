"""`workbench run` and the guard: --approval and --guard-model reach the session; with no
terminal a review is a denial naming the way out; on a terminal (a real pty as stdin and
stderr) a y/n prompt asks and the answer decides."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cli.test_cli import args
from tests.scripted_server import ScriptedModel, call, reply
from workbench.cli.main import main, parse

pytestmark = pytest.mark.tmux


def tool_messages(body: dict) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def test_the_flags_parse() -> None:
    parsed = parse(["run", "go", "--approval", "read-only", "--guard-model", "openai/mini"])
    assert (parsed.approval, parsed.guard_model) == ("read-only", "openai/mini")


def test_without_a_terminal_a_review_is_a_denial_that_names_the_flag(
    scripted_model: ScriptedModel, workspace: Path, tmp_path: Path, capsys
) -> None:
    scripted_model.add(reply("", call("write_file", {"path": "notes.md", "content": "x"})), reply("could not write"))
    assert main(args(scripted_model, workspace, tmp_path, "--approval", "ask", "write notes")) == 0
    assert not (workspace / "notes.md").exists()
    denial = tool_messages(scripted_model.requests[1])[-1]
    assert "--approval auto" in denial and "'write_file:notes.md'" in denial


def test_read_only_from_the_flag_blocks(scripted_model: ScriptedModel, workspace: Path, tmp_path: Path) -> None:
    scripted_model.add(reply("", call("write_file", {"path": "notes.md", "content": "x"})), reply("blocked"))
    assert main(args(scripted_model, workspace, tmp_path, "--approval", "read-only", "write notes")) == 0
    assert not (workspace / "notes.md").exists()
    assert "read-only mode" in tool_messages(scripted_model.requests[1])[-1]


def _read_until(fd: int, text: str, seen: list[str], count: int = 1, timeout: float = 60.0) -> None:
    """Read the terminal into `seen` until `text` has shown `count` times."""
    deadline = time.monotonic() + timeout
    while "".join(seen).count(text) < count:
        left = deadline - time.monotonic()
        assert left > 0, f"{text!r} never came; the terminal showed: {''.join(seen)[-2000:]!r}"
        ready, _, _ = select.select([fd], [], [], min(left, 1.0))
        if ready:
            try:
                seen.append(os.read(fd, 4096).decode(errors="replace"))
            except OSError:  # the process closed the terminal
                break


def test_on_a_terminal_a_y_n_prompt_decides(scripted_model: ScriptedModel, workspace: Path, tmp_path: Path) -> None:
    scripted_model.add(
        reply("", call("write_file", {"path": "yes.md", "content": "y"})),
        reply("", call("write_file", {"path": "no.md", "content": "n"})),
        reply("done"),
    )
    master, slave = pty.openpty()
    command = [
        sys.executable,
        "-m",
        "workbench.cli.main",
        *args(scripted_model, workspace, tmp_path, "--approval", "ask"),
    ]
    proc = subprocess.Popen([*command, "write two notes"], stdin=slave, stderr=slave, stdout=subprocess.PIPE, text=True)
    os.close(slave)
    seen: list[str] = []
    try:
        _read_until(master, "approve?", seen)
        assert "yes.md" in "".join(seen) and "ask mode" in "".join(seen)
        os.write(master, b"y\n")
        _read_until(master, "approve?", seen, count=2)
        assert "no.md" in "".join(seen)
        os.write(master, b"n: notes go in docs/\n")
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    assert proc.returncode == 0, "".join(seen)[-2000:]
    assert out.strip() == "done"
    assert (workspace / "yes.md").read_text() == "y\n" and not (workspace / "no.md").exists()
    assert "The person denied this call: notes go in docs/" in tool_messages(scripted_model.requests[2])[-1]
