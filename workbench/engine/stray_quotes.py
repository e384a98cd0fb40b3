"""Quotes a model left unescaped inside a JSON string, escaped (lenient reading of text calls).

A 1.5B model writing code into a call's string wrote the code's quotes as they are (a
docstring's three quotes, `host = "example.org"` in a TOML file) (issue 38): strict JSON and
JSON5 both stop at the first inner quote, the call cannot run, and the model sent the same block
again to the loop stop. Here a quote inside a string ends it only where JSON could go on after
it: a key's before a colon, an object value's before `}` or before `, "key":`, an array item's
before `,` or `]`; any other quote is taken as part of the text and escaped. The result is only
tried when strict JSON and JSON5 failed, and only kept when JSON5 then reads it.
"""

from __future__ import annotations

import re

_AFTER_KEY = re.compile(r"\s*:")
_AFTER_VALUE = re.compile(r'\s*(?:}|,\s*"[^"\\\n]{1,80}"\s*:)')
_AFTER_ITEM = re.compile(r"\s*[,\]]")


def escape_stray_quotes(block: str) -> str:
    """`block` with each quote that cannot end its string escaped ('' when nothing was escaped)."""
    out: list[str] = []
    stack: list[str] = []  # '{' or '['
    in_string = is_key = False
    expect_key = False  # in an object, before a key (after '{' or ',')
    escaped = 0
    i = 0
    while i < len(block):
        ch = block[i]
        if in_string:
            if ch == "\\" and i + 1 < len(block):
                out.append(block[i : i + 2])
                i += 2
                continue
            if ch == '"':
                ends = _AFTER_KEY if is_key else _AFTER_ITEM if stack and stack[-1] == "[" else _AFTER_VALUE
                if ends.match(block, i + 1) or not stack:
                    in_string = False
                    out.append(ch)
                else:
                    out.append('\\"')
                    escaped += 1
                i += 1
                continue
            out.append(ch)
            i += 1
            continue
        if ch == '"':
            in_string, is_key = True, bool(stack) and stack[-1] == "{" and expect_key
            expect_key = False
        elif ch in "{[":
            stack.append(ch)
            expect_key = ch == "{"
        elif ch in "}]":
            if stack:
                stack.pop()
            expect_key = False
        elif ch == ",":
            expect_key = bool(stack) and stack[-1] == "{"
        out.append(ch)
        i += 1
    return "".join(out) if escaped else ""
