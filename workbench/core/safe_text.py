"""Text from a model or a tool, made safe to show a person: no escape sequence reaches a terminal.

Control characters other than newline and tab are shown escaped (ESC as `\\x1b`), so an OSC
title change or a cursor move in a model's reply is printed, never performed. So are Unicode's
format characters that reorder or hide text (bidi overrides and isolates such as U+202E,
zero-width spaces, the BOM, tag characters): `read\\u202efile` cannot pass for another name.
The joiners U+200C and U+200D stay (emoji sequences and several scripts need them). The headless
printer and the TUI both use `printable`.
"""

from __future__ import annotations

import re

# C0 and C1 but newline and tab; Unicode's format characters (category Cf) but the joiners
_CONTROL = re.compile(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f"
    r"\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u180e\u200b\u200e-\u200f\u202a-\u202e"
    r"\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f"
    r"\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f"
    r"\ud800-\udfff]"  # surrogates: a file name's byte that is not UTF-8 (os.fsdecode's) is shown as that byte
)


def printable(text: str) -> str:
    """`text` with every control and format character but newline, tab and the joiners escaped
    (`\\x1b`, `\\x0d`, `\\u202e`, ...)."""
    return _CONTROL.sub(_escape, text)


def path_text(path: str) -> str:
    """A file name as UTF-8 text, for the event log or a message: each byte of the name that is
    not UTF-8 (held by Python as a surrogate, `os.fsdecode`) shown as `\\xe9`; nothing else changes."""
    try:
        path.encode()
    except UnicodeEncodeError:
        try:
            return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        except UnicodeEncodeError:  # a surrogate no name's byte gives (JSON's lone "\\ud800")
            return path.encode("utf-8", "backslashreplace").decode()
    return path


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
