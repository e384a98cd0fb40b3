"""Text from a model or a tool, made safe to show a person: no escape sequence reaches a terminal.

Control characters other than newline and tab are shown escaped (ESC as `\\x1b`), so an OSC
title change or a cursor move in a model's reply is printed, never performed. The headless
printer and the TUI both use `printable`.
"""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """`text` with every control character but newline and tab escaped (`\\x1b`, `\\x0d`, ...)."""
    return _CONTROL.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    return f"\\x{ord(match.group()):02x}"
