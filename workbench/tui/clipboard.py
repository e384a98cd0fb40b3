"""Copying text for the person: the terminal's clipboard (OSC 52) and, inside tmux, its paste buffer.

Textual's `copy_to_clipboard` writes OSC 52. Inside tmux that reaches nothing under tmux's default
`set-clipboard external`: tmux ignores an application's OSC 52 (it keeps it as a paste buffer, and
passes it on to the outer terminal, only with `set-clipboard on`). So inside tmux the text also goes
through `tmux load-buffer -w -`: a paste buffer (prefix ] pastes it), and `-w` (tmux 3.2 and later)
has tmux itself send OSC 52 to the terminal it runs in, when that terminal's terminfo (or tmux's
`terminal-features`, `clipboard` for xterm* by default) says it takes one. Both paths are tested in
a real tmux (tests/tui/test_clipboard.py); docs/DECISIONS.md has what was seen.
"""

from __future__ import annotations

import os
import subprocess
from typing import Protocol


class Clipboard(Protocol):
    def copy_to_clipboard(self, text: str) -> None: ...


def tmux_buffer(text: str) -> bool:
    """The text into the tmux paste buffer of the tmux this process runs in, and on to the outer
    terminal's clipboard (`-w`; a tmux before 3.2 refuses the flag: then the buffer alone)."""
    for command in (["tmux", "load-buffer", "-w", "-"], ["tmux", "load-buffer", "-"]):
        try:
            done = subprocess.run(command, input=text, text=True, capture_output=True, timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            return False
        if done.returncode == 0:
            return True
    return False


def copy_text(app: Clipboard, text: str) -> str:
    """Copy `text` every way this terminal allows; say where it went ("the clipboard, and the tmux buffer")."""
    app.copy_to_clipboard(text)  # OSC 52: the terminal's clipboard
    where = "the clipboard"
    if os.environ.get("TMUX") and tmux_buffer(text):
        where += ", and the tmux buffer"
    return where
