"""Tool calls a model wrote in its reply's text: found, checked against the offered tools.

Small and local models often write a call in their reply's text instead of sending it through
the tool-calling interface, in one of three forms, with or without prose around it:

    ```json
    {"name": "read_file", "arguments": {"path": "auth.go"}}
    ```
    <tool_call>{"name": "read_file", "arguments": {"path": "auth.go"}}</tool_call>
    {"name": "read_file", "arguments": {"path": "auth.go"}}

`find_calls` finds them (a list of several in one block too) and gives the prose without them.
A block that looks like a call but names no offered tool, or does not parse, is returned with
an `error` for the model to read (naming a close tool: `tools.registry.instead_of_unknown`).
A JSON block that is not call-shaped (a package.json, an example) is prose: a call object has a
name and arguments and nothing else but a type or id. The loop runs what it finds; the way the
calls and their results go back to the model is the wire's (`model.text_calls`).
Pure functions: no I/O, no state.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

from workbench.tools.registry import instead_of_unknown

MAX_CALLS = 16  # calls taken from one reply; further blocks stay in the prose
UNREADABLE = "unreadable_tool_call"  # the name of a call whose block names no tool we could read

NAME_KEYS = ("name", "tool", "tool_name")
ARGUMENT_KEYS = ("arguments", "parameters", "args", "input")
OTHER_KEYS = ("type", "id")

_TAG = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.DOTALL)
_FENCE = re.compile(r"^[ \t]*(```|~~~)[ \t]*([\w+-]*)[^\n]*\n(.*?)(?:^[ \t]*\1[ \t]*$|\Z)", re.DOTALL | re.MULTILINE)
_CALL_START = re.compile(r'[\[{]\s*\{?\s*"(?:name|tool|tool_name|function|type)"\s*:')
_EMPTY_WRAPPER = re.compile(  # a tag or fence left empty once what it held was taken
    r"<tool_call>\s*(?:</tool_call>|\Z)|^[ \t]*(```|~~~)[\w+-]*\s*^[ \t]*\1[ \t]*$", re.MULTILINE
)
_NAME = re.compile(r'"(?:name|tool|tool_name)"\s*:\s*"([A-Za-z0-9_.-]{1,64})"')
_PARAGRAPH_END = re.compile(r"\n\s*\n")
_ARGUMENTS = re.compile(r'"(?:arguments|parameters|args|input)"\s*:')


@dataclass(frozen=True)
class TextCall:
    """One call found in text: `arguments` is a JSON object's text; `error` says why it cannot run."""

    name: str
    arguments: str = "{}"
    error: str = ""


def find_calls(text: str, offered: Collection[str]) -> tuple[list[TextCall], str]:
    """The tool calls written in `text` (in order) and the text with their blocks removed.

    No calls: ([], text) unchanged. `offered` is the names of the tools the model was given.
    """
    spans: list[tuple[int, int, list[TextCall]]] = []

    def free(start: int, end: int) -> bool:
        return all(end <= s or start >= e for s, e, _ in spans)

    fences = []  # every fenced block, a call or not: bare JSON is not looked for inside one
    for match in _FENCE.finditer(text):
        fences.append((match.start(), match.end()))
        if calls := _from_body(match.group(3), offered, tagged=False):
            spans.append((match.start(), match.end(), calls))
    for match in _TAG.finditer(text):
        if free(match.start(), match.end()):
            spans.append((match.start(), match.end(), _from_body(match.group(1), offered, tagged=True)))

    def outside(start: int, end: int) -> bool:
        return free(start, end) and all(end <= s or start >= e for s, e in fences)

    spans += _bare(text, offered, outside)
    spans.sort(key=lambda span: span[0])
    found: list[TextCall] = []
    prose, last = [], 0
    for start, end, calls in spans:
        if len(found) >= MAX_CALLS:
            break
        found += calls[: MAX_CALLS - len(found)]
        prose.append(text[last:start])
        last = end
    if not found:
        return [], text
    prose.append(text[last:])
    rest = _EMPTY_WRAPPER.sub("", "".join(prose))  # a tag or fence that held a fence or tag taken
    return found, re.sub(r"\n{3,}", "\n\n", rest).strip()


def _bare(
    text: str, offered: Collection[str], free: Callable[[int, int], bool]
) -> list[tuple[int, int, list[TextCall]]]:
    """Call objects written as bare JSON (outside tags and fences).

    Bare text that starts like a call but does not parse counts as one only when it names
    arguments too: prose may well mention `{"name": ...}`.
    """
    found: list[tuple[int, int, list[TextCall]]] = []
    decoder = json.JSONDecoder(strict=False)
    position = 0
    while (match := _CALL_START.search(text, position)) is not None and len(found) < MAX_CALLS:
        start = match.start()
        if not free(start, start + 1):
            position = start + 1
            continue
        try:
            value, end = decoder.raw_decode(text, start)
        except (json.JSONDecodeError, RecursionError) as err:
            paragraph = _PARAGRAPH_END.search(text, start)
            end = paragraph.start() if paragraph else len(text)
            if _ARGUMENTS.search(text, start, end):
                found.append((start, end, [_unreadable(text[start:end], err, offered)]))
            position = end
            continue
        if calls := _from_value(value, offered, tagged=False):
            found.append((start, end, calls))
        position = end
    return found


def _from_body(body: str, offered: Collection[str], *, tagged: bool) -> list[TextCall]:
    """The calls in a tag's or a fence's body; [] when an untagged body is not a call."""
    if not tagged and "<tool_call>" in body:
        return [c for m in _TAG.finditer(body) for c in _from_body(m.group(1), offered, tagged=True)]
    stripped = body.strip()
    if not stripped.startswith(("{", "[")):
        if tagged:
            return [_unreadable(stripped, None, offered)]
        return []
    try:
        value = json.loads(stripped, strict=False)
    except (json.JSONDecodeError, RecursionError) as err:
        if tagged or _CALL_START.match(stripped):
            return [_unreadable(stripped, err, offered)]
        return []
    calls = _from_value(value, offered, tagged=tagged)
    if not calls and tagged:
        return [_unreadable(stripped, None, offered)]
    return calls


def _from_value(value: Any, offered: Collection[str], *, tagged: bool) -> list[TextCall]:
    """A decoded object (or list of objects) as calls; [] when it is not call-shaped."""
    items = value if isinstance(value, list) else [value]
    if not items or not all(isinstance(item, dict) for item in items):
        return []
    calls = [_call_of(item, offered, tagged=tagged) for item in items]
    return [c for c in calls if c is not None] if all(c is not None for c in calls) else []


def _call_of(obj: dict[str, Any], offered: Collection[str], *, tagged: bool) -> TextCall | None:
    """One call-shaped object as a TextCall; None when it is not call-shaped."""
    if isinstance(obj.get("function"), dict):  # the OpenAI shape {"type": "function", "function": {...}}
        obj = {**obj["function"], **{k: v for k, v in obj.items() if k != "function"}}
    elif isinstance(obj.get("function"), str):  # {"function": "read_file", "arguments": {...}}
        obj = {"name": obj["function"], **{k: v for k, v in obj.items() if k != "function"}}
    name_key = next((k for k in NAME_KEYS if isinstance(obj.get(k), str)), None)
    args_key = next((k for k in ARGUMENT_KEYS if k in obj), None)
    if name_key is None or set(obj) - {name_key, *ARGUMENT_KEYS, *OTHER_KEYS}:
        return None
    name = obj[name_key]
    if args_key is None and name not in offered and not tagged:
        return None  # {"name": "my-package"}: not a call
    arguments = obj.get(args_key) if args_key else {}
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments, strict=False) if arguments.strip() else {}
        except (json.JSONDecodeError, RecursionError) as err:
            return TextCall(name if name in offered else UNREADABLE, "{}", _not_json(name, err))
    if arguments is None:
        arguments = {}
    if name not in offered:
        return TextCall(UNREADABLE, "{}", _unknown(name, offered))
    if not isinstance(arguments, dict):
        return TextCall(
            name, "{}", f"the arguments of the {name} call written in your reply's text are not a JSON object. {HOW}"
        )
    return TextCall(name, json.dumps(arguments, ensure_ascii=False))


HOW = 'Call one of the offered tools with its arguments as one JSON object: {"name": "<tool>", "arguments": {...}}.'


def _unknown(name: str, offered: Collection[str]) -> str:
    shown = name if len(name) <= 80 else name[:80] + "…"
    instead = instead_of_unknown(name, offered)
    return (
        f"your reply's text holds a call to {shown!r}, which is not one of the offered tools "
        f"({', '.join(offered) or 'none'}). {instead + ' ' if instead else ''}{HOW}"
    )


def _not_json(name: str, err: Exception) -> str:
    return f"the arguments of the {name[:80]} call written in your reply's text are not valid JSON ({err}). {HOW}"


def _unreadable(block: str, err: Exception | None, offered: Collection[str]) -> TextCall:
    """A block that looks like a call but cannot be read as one."""
    quoted = block if len(block) <= 200 else block[:200] + f"… ({len(block):,} characters)"
    why = f"it is not valid JSON ({err})" if err else 'it is not an object with a "name" and "arguments"'
    named = _NAME.search(block)
    return TextCall(
        named.group(1) if named and named.group(1) in offered else UNREADABLE,
        "{}",
        f"your reply's text holds what looks like a tool call, but {why}: {quoted!r}. {HOW}",
    )
