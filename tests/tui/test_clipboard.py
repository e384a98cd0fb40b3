"""Copying the last answer (y in the transcript) verified in real terminals: the installed
`workbench` in a tmux pane, the scripted model server on 127.0.0.1, tmux's paste buffers read back
with list-buffers. tmux keeps an application's OSC 52 as a paste buffer only with
`set-clipboard on`, which makes the terminal's clipboard observable here."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests.scripted_server import ScriptedModel, reply
from tests.tui.test_terminal import screen_until, tmux

pytestmark = [
    pytest.mark.tui,
    pytest.mark.tmux,
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux"),
]

WORKBENCH = Path(sys.executable).with_name("workbench")
ANSWER = "The answer is 42 — and it reached the clipboard."


def app_command(scripted_model: ScriptedModel, tmp_path: Path) -> list[str]:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    model = ["--model", "openai/scripted", "--api-base", scripted_model.url, "--api-key", "sk-test"]
    return [str(WORKBENCH), *model, "--workspace", str(workspace), "--data-dir", str(tmp_path / "d")]


def buffers(socket: str) -> list[str]:
    """Every paste buffer of the tmux server, newest first."""
    names = tmux(socket, "list-buffers", "-F", "#{buffer_name}").split()
    return [tmux(socket, "show-buffer", "-b", name) for name in names]


def answer_then_copy(socket: str) -> None:
    """Ask, wait for the answer, then y in the transcript (Tab goes there from the prompt)."""
    screen_until(socket, "to main")
    tmux(socket, "send-keys", "-t", "tui", "what is it?", "Enter")
    screen_until(socket, "The answer is 42")
    tmux(socket, "send-keys", "-t", "tui", "Tab")
    # a key sent right behind Tab still goes to the prompt: Textual hands each key to the widget
    # focused when it is read, and Tab moves the focus only once the prompt has passed it on
    screen_until(socket, "y copy")  # the transcript's keys in the footer: it has the focus
    tmux(socket, "send-keys", "-t", "tui", "y")
    screen_until(socket, "Copied the last answer")


def test_the_answer_goes_out_as_osc_52(scripted_model: ScriptedModel, tmp_path: Path) -> None:
    """OSC 52 alone: the app runs without TMUX in its environment (so it does not know it is in
    tmux and cannot use the tmux buffer); tmux with set-clipboard on stores the OSC 52 it wrote."""
    scripted_model.add(reply(ANSWER))
    socket = f"wb-clip-{uuid.uuid4().hex[:8]}"
    config = tmp_path / "tmux.conf"
    config.write_text("set -s set-clipboard on\n")
    command = ["sh", "-c", f"unset TMUX; {shlex.join(app_command(scripted_model, tmp_path))}; sleep 60"]
    env = {**os.environ, "TERM": "xterm-256color", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    start = ["tmux", "-L", socket, "-f", str(config), "new-session", "-d", "-s", "tui", "-x", "120", "-y", "40"]
    subprocess.run([*start, *command], env=env, check=True)
    try:
        answer_then_copy(socket)
        screen = screen_until(socket, "Copied the last answer")
        assert "tmux buffer" not in screen  # the tmux path was not taken: the buffer below is OSC 52's
        assert buffers(socket) == [ANSWER]
    finally:
        tmux(socket, "kill-server")


def test_inside_a_default_tmux_the_answer_reaches_the_outer_terminal(
    scripted_model: ScriptedModel, tmp_path: Path
) -> None:
    """A tmux with its default configuration (set-clipboard external) ignores the app's OSC 52, so
    before, the terminal's clipboard got nothing. The app runs in such a tmux ("inner"), whose client
    runs in a pane of an "outer" tmux with set-clipboard on, standing in for the person's terminal
    (its TERM is xterm-256color, which tmux's default terminal-features mark as taking OSC 52): the
    outer one must receive the answer as OSC 52, from the inner tmux (`load-buffer -w`)."""
    scripted_model.add(reply(ANSWER))
    outer, inner = f"wb-clip-o-{uuid.uuid4().hex[:8]}", f"wb-clip-i-{uuid.uuid4().hex[:8]}"
    config = tmp_path / "outer.conf"
    config.write_text("set -s set-clipboard on\nset -g default-terminal xterm-256color\n")
    app = f"{shlex.join(app_command(scripted_model, tmp_path))}; sleep 60"
    inner_tmux = ["tmux", "-L", inner, "-f", "/dev/null", "new-session", "-s", "tui", "sh", "-c", app]
    env = {k: v for k, v in os.environ.items() if k != "TMUX"} | {"LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    size = ["-x", "120", "-y", "40"]
    subprocess.run(
        ["tmux", "-L", outer, "-f", str(config), "new-session", "-d", "-s", "o", *size, shlex.join(inner_tmux)],
        env=env,
        check=True,
    )
    try:
        answer_then_copy(inner)
        assert buffers(inner) == [ANSWER]  # the inner tmux's own paste buffer (prefix ] pastes it)
        screen_until(inner, "Copied")
        assert ANSWER in buffers(outer)  # the terminal around tmux got it as OSC 52
    finally:
        tmux(inner, "kill-server")
        tmux(outer, "kill-server")
