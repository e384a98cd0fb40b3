"""Tool calls a model wrote in its reply's text: found, checked against the offered tools.

Small and local models often write a call in their reply's text instead of sending it through
the tool-calling interface, in one of three forms, with or without prose around it:

    ```json
    {"name": "read_file", "arguments": {"path": "auth.go"}}
    ```
    <tool_call>{"name": "read_file", "arguments": {"path": "auth.go"}}</tool_call>
    {"name": "read_file", "arguments": {"path": "auth.go"}}

`find_calls` finds them (a list of several in one block too, or one a line) and gives the prose
without them.
A block that looks like a call but names no offered tool, or does not parse, is returned with
an `error` for the model to read: the exact spot and the call written right (`call_help`).
A JSON block that is not call-shaped (a package.json, an example) is prose: a call object has a
name and arguments and nothing else but a type or id. The loop runs what it finds; the way the
calls and their results go back to the model is the wire's (`model.text_calls`).

`lenient` (for models litellm does not know, decided by the loop): a block that is not strict
JSON is read as JSON5 (comments, trailing commas, single quotes; Python's triple-quoted strings
and doubled braces too, and quotes left unescaped inside a string: `stray_quotes`), and
XML-style calls are read (`calls_as_xml`); such calls are
`repaired`; a call written twice in one reply (in a step, then again at its end) is one call.
A program called as a tool (`{"name": "mkdir", "arguments": {"path": "build"}}`,
with bash offered) is read as the bash call it means (`arguments.program_command`), marked with
its `program`. A call followed by a result the model wrote itself (`<result>...`) is
`wrote_result`. Pure functions: no I/O, no state.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import json5

from workbench.engine.call_help import Schema, error_text, json_error_spot, unreadable_help
from workbench.engine.calls_as_xml import RESULT_TAGS, xml_calls
from workbench.engine.stray_quotes import escape_stray_quotes
from workbench.tools.arguments import instead_of_unknown, program_command

MAX_CALLS = 16  # calls taken from one reply; further blocks stay in the prose
UNREADABLE = "unreadable_tool_call"  # the name of a call whose block names no tool we could read

NAME_KEYS = ("name", "tool", "tool_name")
ARGUMENT_KEYS = ("arguments", "parameters", "args", "input")
OTHER_KEYS = ("type", "id")

_TAG = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.DOTALL)
_FENCE = re.compile(r"^[ \t]*(```|~~~)[ \t]*([\w+-]*)[^\n]*\n(.*?)(?:^[ \t]*\1[ \t]*$|\Z)", re.DOTALL | re.MULTILINE)
_CALL_START = re.compile(r'[\[{]\s*\{?\s*"(?:name|tool|tool_name|function|type)"\s*:')
_LENIENT_START = re.compile(r"""[\[{]\s*\{?\s*["']?(?:name|tool|tool_name|function|type)["']?\s*:""")
_TRIPLE = re.compile(r'("""|\'\'\')(.*?)\1', re.DOTALL)
LENIENT_CHARS = 64 * 1024  # a longer block is not tried as JSON5: its pure-Python parser is slow
_EMPTY_WRAPPER = re.compile(  # a tag or fence left empty once what it held was taken
    r"<(tool_call|tools|tool_calls|function_calls)>\s*(?:</\1>|\Z)|^[ \t]*(```|~~~)[\w+-]*\s*^[ \t]*\2[ \t]*$",
    re.MULTILINE,
)
_NAME = re.compile(r"""["']?(?:name|tool|tool_name)["']?\s*[:=]\s*["']([A-Za-z0-9_.-]{1,64})["']""")
_PARAGRAPH_END = re.compile(r"\n\s*\n")
# a backslash (after an even run of them) before a character no JSON or JSON5 escape starts with
_BAD_ESCAPE = re.compile(r"(?<!\\)((?:\\\\)*)\\([^\"\\/bfnrtu'\n])")
_WRAPPED = re.compile(r"<(\w+)[^>]*>\s*([\[{].*?)\s*(?:</\1>\s*)?\Z", re.DOTALL)  # one tag around the whole body
_ARGUMENTS = re.compile(r"""["']?(?:arguments|parameters|args|input)["']?\s*:""")


@dataclass(frozen=True)
class TextCall:
    """One call found in text: `arguments` is a JSON object's text; `error` says why it cannot run."""

    name: str
    arguments: str = "{}"
    error: str = ""
    repaired: bool = False  # read leniently: JSON5 after strict JSON failed, or an XML-style call
    wrote_result: bool = False  # the reply went on to write this call's result itself
    unknown: str = ""  # the name called that is not offered (the loop asks the MCP servers about it)
    program: str = ""  # leniently: the program called as a tool (mkdir(path=build)), read as this bash call


@dataclass
class _Reading:
    """What one reply is read against: the offered tools, their schemas, whether leniently."""

    offered: Collection[str]
    schemas: Mapping[str, Schema] = field(default_factory=dict)
    lenient: bool = False

    def loads(self, block: str) -> tuple[Any, bool]:
        """The block as strict JSON, else (lenient) as JSON5, with Python's triple-quoted strings read
        as strings and an object's braces written doubled (`{{...}}`) read once: (value, repaired).
        Raises the strict error when none reads it (the JSON5 one when that was tried: its spot is
        the later)."""
        try:
            return json.loads(block, strict=False), False
        except (json.JSONDecodeError, RecursionError) as err:
            if not self.lenient or len(block) > LENIENT_CHARS:
                raise
            # a backslash before a character JSON does not escape (`\;` of find -exec, `\.` of a
            # regex) is the text's own: kept, where JSON5 would drop it
            kept = _BAD_ESCAPE.sub(lambda m: m.group(1) + "\\\\" + m.group(2), block)
            if kept != block:
                try:
                    return json.loads(kept, strict=False), True
                except (json.JSONDecodeError, RecursionError):
                    block = kept
            try:
                return json5.loads(block), True
            except (ValueError, RecursionError) as lenient_err:
                for mended in _mended(block):
                    try:
                        return json5.loads(mended), True
                    except (ValueError, RecursionError):
                        continue
                raise lenient_err from err


def _mended(block: str) -> list[str]:
    """The block's mended spellings to try after JSON5 failed, each different from it: Python's
    triple-quoted strings and an object's doubled braces read, then quotes left unescaped inside
    strings escaped (stray_quotes)."""
    mended = _TRIPLE.sub(lambda m: json.dumps(m.group(2)), block)  # "new_text": """\n...\n"""
    stripped = mended.strip()
    if stripped.startswith("{{") and stripped.endswith("}}"):  # braces doubled as in a format string
        mended = stripped[1:-1]
    tries = [mended] if mended != block else []
    if escaped := escape_stray_quotes(block):
        tries.append(escaped)
    return tries


def find_calls(
    text: str, offered: Collection[str], *, schemas: Mapping[str, Schema] | None = None, lenient: bool = False
) -> tuple[list[TextCall], str]:
    """The tool calls written in `text` (in order) and the text with their blocks removed.

    No calls: ([], text) unchanged. `offered` is the names of the tools the model was given,
    `schemas` their JSON schemas (for typing XML values and for the example in an error).
    """
    reading = _Reading(offered, schemas or {}, lenient)
    spans: list[tuple[int, int, list[TextCall]]] = []

    def free(start: int, end: int) -> bool:
        return all(end <= s or start >= e for s, e, _ in spans)

    fences = []  # every fenced block, a call or not: bare JSON is not looked for inside one
    for match in _FENCE.finditer(text):
        fences.append((match.start(), match.end()))
        if calls := _from_body(match.group(3), reading, tagged=False):
            spans.append((match.start(), match.end(), calls))
    for match in _TAG.finditer(text):
        if free(match.start(), match.end()):
            spans.append((match.start(), match.end(), _from_body(match.group(1), reading, tagged=True)))

    def outside(start: int, end: int) -> bool:
        return free(start, end) and all(end <= s or start >= e for s, e in fences)

    spans += _bare(text, reading, outside)
    if lenient:
        spans += [(c.start, c.end, [c.call]) for c in _xml(text, reading) if free(c.start, c.end)]
    spans.sort(key=lambda span: span[0])
    found: list[TextCall] = []
    prose, last = [], 0
    for n, (start, end, calls) in enumerate(spans):
        if len(found) >= MAX_CALLS:
            break
        after = text[end : spans[n + 1][0] if n + 1 < len(spans) else len(text)]
        if RESULT_TAGS.search(after):  # the reply wrote the call's result itself
            calls = [replace(c, wrote_result=True) for c in calls]
        found += calls[: MAX_CALLS - len(found)]
        prose.append(text[last:start])
        last = end
    if not found:
        stray = _stray_tag(text, reading) if lenient else None
        return ([stray], text) if stray else ([], text)
    if lenient:
        found = _first_of_each(found)
    prose.append(text[last:])
    rest = _EMPTY_WRAPPER.sub("", "".join(prose))  # a tag or fence that held a fence or tag taken
    return found, re.sub(r"\n{3,}", "\n\n", rest).strip()


def _first_of_each(calls: list[TextCall]) -> list[TextCall]:
    """The calls with a call written again in the same reply (in a step, then "in full" at its end)
    left out: the first of each name and arguments; unreadable ones all stay (each says its error)."""
    seen: set[tuple[str, str]] = set()
    kept = []
    for call in calls:
        key = (call.name, call.arguments)
        if call.error or key not in seen:
            kept.append(call)
            seen.add(key)
    return kept


@dataclass(frozen=True)
class _Span:
    start: int
    end: int
    call: TextCall


def _xml(text: str, reading: _Reading) -> list[_Span]:
    """XML-style calls (calls_as_xml), checked against the offered tools like the JSON ones."""
    spans = []
    for found in xml_calls(text, reading.offered, reading.schemas):
        block = text[found.start : found.end]
        if found.name not in reading.offered:
            call = TextCall(
                UNREADABLE, "{}", _unknown(found.name, reading.offered, found.arguments), unknown=found.name
            )
        elif found.arguments is None:
            call = _unreadable(block, None, reading, why="its arguments cannot be read")
        else:
            call = TextCall(found.name, json.dumps(found.arguments, ensure_ascii=False), repaired=True)
        spans.append(_Span(found.start, found.end, call))
    return spans


def _stray_tag(text: str, reading: _Reading) -> TextCall | None:
    """A tag naming an offered tool that no form could read (`<read_file path=src/a.py>`): an
    unreadable call, so a reply that holds a call is never taken as the answer."""
    names = "|".join(re.escape(name) for name in sorted(reading.offered, key=len, reverse=True))
    found = re.search(rf"<({names})(?=[\s/>])[^\n]*", text) if names else None
    if found is None:
        return None
    return _unreadable(found.group(0), None, reading, why="it is not written in a form that can be read")


def _bare(text: str, reading: _Reading, free: Callable[[int, int], bool]) -> list[tuple[int, int, list[TextCall]]]:
    """Call objects written as bare JSON (outside tags and fences); leniently, JSON5 ones too.

    Bare text that starts like a call but does not parse counts as one only when it names
    arguments too: prose may well mention `{"name": ...}`.
    """
    found: list[tuple[int, int, list[TextCall]]] = []
    decoder = json.JSONDecoder(strict=False)
    starts = _LENIENT_START if reading.lenient else _CALL_START
    position = 0
    while (match := starts.search(text, position)) is not None and len(found) < MAX_CALLS:
        start = match.start()
        if not free(start, start + 1):
            position = start + 1
            continue
        repaired = False
        try:
            value, end = decoder.raw_decode(text, start)
        except (json.JSONDecodeError, RecursionError) as err:
            closing = _closing(text, start) if reading.lenient else None
            try:
                if closing is None:
                    raise err
                value, _ = reading.loads(text[start:closing])
                end, repaired = closing, True
            except (ValueError, RecursionError) as last_err:
                paragraph = _PARAGRAPH_END.search(text, start)
                end = closing or (paragraph.start() if paragraph else len(text))
                if _ARGUMENTS.search(text, start, end):
                    found.append((start, end, [_unreadable(text[start:end], last_err, reading)]))
                position = end
                continue
        if calls := _from_value(value, reading, tagged=False):
            found.append(
                (start, end, [replace(c, repaired=c.repaired or repaired) if not c.error else c for c in calls])
            )
        position = end
    return found


def _closing(text: str, start: int) -> int | None:
    """Where the bracketed value opening at `start` closes, reading strings in either quote and
    // and /* */ comments (JSON5); None when it does not close."""
    depth, at, quote = 0, start, ""
    while at < len(text):
        char = text[at]
        if quote:
            if char == "\\":
                at += 1
            elif char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        elif text.startswith("//", at):
            newline = text.find("\n", at)
            at = len(text) if newline < 0 else newline
        elif text.startswith("/*", at):
            close = text.find("*/", at + 2)
            at = len(text) if close < 0 else close + 1
        elif char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
            if depth == 0:
                return at + 1
        at += 1
    return None


def _from_body(body: str, reading: _Reading, *, tagged: bool) -> list[TextCall]:
    """The calls in a tag's or a fence's body; [] when an untagged body is not a call."""
    if not tagged and "<tool_call>" in body:
        return [c for m in _TAG.finditer(body) for c in _from_body(m.group(1), reading, tagged=True)]
    stripped = body.strip()
    if reading.lenient and stripped.startswith("<"):  # <tool_call><function=read_file>...
        if spans := _xml(stripped, reading):
            return [span.call for span in spans]
        # a call wrapped in a result's tag (```python\n<tool_response>\n{"name": ...}): the call
        if RESULT_TAGS.match(stripped) and (wrapped := _WRAPPED.match(stripped)):
            return [replace(c, repaired=True) for c in _from_body(wrapped.group(2), reading, tagged=False)]
    if not stripped.startswith(("{", "[")):
        if tagged:
            return [_unreadable(stripped, None, reading)]
        return []
    try:
        value, repaired = reading.loads(stripped)
    except (ValueError, RecursionError) as err:
        if lines := _json_lines(stripped, reading):
            return lines
        starts = _LENIENT_START if reading.lenient else _CALL_START
        if tagged or starts.match(stripped):
            return [_unreadable(stripped, err, reading)]
        return []
    calls = _from_value(value, reading, tagged=tagged)
    if not calls and tagged:
        return [_unreadable(stripped, None, reading)]
    return [replace(c, repaired=c.repaired or repaired) if not c.error else c for c in calls]


def _json_lines(body: str, reading: _Reading) -> list[TextCall]:
    """The calls of a body that is one call object a line (JSON Lines); [] when any line is not
    (seen: two write_file calls on consecutive lines of one block, refused as one unreadable call
    until the loop stop)."""
    lines = [line.strip() for line in body.splitlines() if line.strip()]
    if len(lines) < 2 or not all(line.startswith("{") for line in lines):
        return []
    calls: list[TextCall] = []
    for line in lines:
        try:
            value, repaired = reading.loads(line)
        except (ValueError, RecursionError):
            return []
        if len(found := _from_value(value, reading, tagged=False)) != 1:
            return []
        calls.append(replace(found[0], repaired=found[0].repaired or repaired) if not found[0].error else found[0])
    return calls


def _from_value(value: Any, reading: _Reading, *, tagged: bool) -> list[TextCall]:
    """A decoded object (or list of objects) as calls; [] when it is not call-shaped."""
    items = value if isinstance(value, list) else [value]
    if not items or not all(isinstance(item, dict) for item in items):
        return []
    calls = [_call_of(item, reading, tagged=tagged) for item in items]
    return [c for c in calls if c is not None] if all(c is not None for c in calls) else []


def _call_of(obj: dict[str, Any], reading: _Reading, *, tagged: bool) -> TextCall | None:
    """One call-shaped object as a TextCall; None when it is not call-shaped."""
    offered = reading.offered
    if isinstance(obj.get("function"), dict):  # the OpenAI shape {"type": "function", "function": {...}}
        obj = {**obj["function"], **{k: v for k, v in obj.items() if k != "function"}}
    elif isinstance(obj.get("function"), str):  # {"function": "read_file", "arguments": {...}}
        obj = {"name": obj["function"], **{k: v for k, v in obj.items() if k != "function"}}
    name_key = next((k for k in NAME_KEYS if isinstance(obj.get(k), str)), None)
    if name_key is None and reading.lenient and isinstance(obj.get("type"), str) and obj["type"] in offered:
        obj, name_key = {"name": obj["type"], **{k: v for k, v in obj.items() if k != "type"}}, "name"
    args_key = next((k for k in ARGUMENT_KEYS if k in obj), None)
    if name_key is None:
        return None
    if flat := set(obj) - {name_key, *ARGUMENT_KEYS, *OTHER_KEYS}:
        # leniently, {"name": "bash", "command": "ls"} or {"type": "bash", "command": "ls"}: the other keys
        # are the arguments of an offered tool (a 1.5B model wrote its calls so, unread: issue 38)
        if not (reading.lenient and args_key is None and obj[name_key] in offered):
            return None
        obj, args_key = {name_key: obj[name_key], "arguments": {k: v for k, v in obj.items() if k in flat}}, "arguments"
    name = obj[name_key]
    if args_key is None and name not in offered and not tagged:
        return None  # {"name": "my-package"}: not a call
    arguments = obj.get(args_key) if args_key else {}
    repaired = False
    if isinstance(arguments, str):
        try:
            arguments, repaired = reading.loads(arguments) if arguments.strip() else ({}, False)
        except (ValueError, RecursionError) as err:
            return TextCall(name if name in offered else UNREADABLE, "{}", _not_json(name, err, reading))
    if arguments is None:
        arguments = {}
    if name not in offered:
        if reading.lenient and "bash" in offered and (line := program_command(name, arguments)):
            return TextCall("bash", json.dumps({"command": line}, ensure_ascii=False), repaired=True, program=name)
        return TextCall(UNREADABLE, "{}", _unknown(name, offered, arguments), unknown=name)
    if not isinstance(arguments, dict):
        return TextCall(
            name, "{}", f"the arguments of the {name} call written in your reply's text are not a JSON object. {HOW}"
        )
    return TextCall(name, json.dumps(arguments, ensure_ascii=False), repaired=repaired)


# After the real result of a call whose reply also wrote a result for it (docs/DECISIONS.md).
WROTE_RESULT = (
    "Your reply also wrote a result for this {name} call itself; that text was made up, not the call's result. "
    "The real result is the one above: answer only from it."
)
# No call in it: a 1.5B model copied a JSON call from this note into its next reply, which ran again.
RAN_AS_BASH = (
    "{program} is a program, not one of the offered tools: your {program} call ran with bash as the command "
    "line `{command}`. To run a program, call bash with its command line."
)


def result_notes(call: TextCall) -> list[str]:
    """The notes the result of a call read from text gets: its reply wrote a result itself; it was
    a program written as a tool and ran as its bash call."""
    notes = [WROTE_RESULT.format(name=call.name)] if call.wrote_result else []
    if call.program:
        notes.append(RAN_AS_BASH.format(program=call.program, command=json.loads(call.arguments)["command"]))
    return notes


HOW = 'Call one of the offered tools with its arguments as one JSON object: {"name": "<tool>", "arguments": {...}}.'


def _unknown(name: str, offered: Collection[str], arguments: object = None) -> str:
    shown = name if len(name) <= 80 else name[:80] + "…"
    instead = instead_of_unknown(name, offered, arguments)
    return (
        f"your reply's text holds a call to {shown!r}, which is not one of the offered tools "
        f"({', '.join(offered) or 'none'}). {instead + ' ' if instead else ''}{HOW}"
    )


def _not_json(name: str, err: Exception, reading: _Reading) -> str:
    how = unreadable_help(name, reading.schemas.get(name), "") if name in reading.offered else HOW
    said = error_text(err)
    return f"the arguments of the {name[:80]} call written in your reply's text are not valid JSON ({said}). {how}"


def _unreadable(block: str, err: Exception | None, reading: _Reading, *, why: str = "") -> TextCall:
    """A block that looks like a call but cannot be read as one: the spot, and the call written right."""
    quoted = block if len(block) <= 200 else block[:200] + f"… ({len(block):,} characters)"
    why = why or (
        f"it is not valid JSON ({error_text(err)})" if err else 'it is not an object with a "name" and "arguments"'
    )
    named = _NAME.search(block) or re.match(r"\s*<([\w.-]+)", block)
    name = named.group(1) if named and named.group(1) in reading.offered else UNREADABLE
    where = json_error_spot(block, err) if err is not None else ""
    how = unreadable_help(name, reading.schemas.get(name), block) if name != UNREADABLE else HOW
    return TextCall(
        name,
        "{}",
        f"your reply's text holds what looks like a tool call, but {why}: {quoted!r}."
        + (f"\nIt stops being readable {where}\n" if where else " ")
        + how,
    )
