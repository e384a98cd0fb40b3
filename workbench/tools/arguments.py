"""A model's arguments to a tool call: read as one JSON object (`parse_arguments`), checked
with the pydantic model of the tool's declaration (`validate`), quoted back in errors at a bounded length (`shorten`,
`preview`), and what to call instead of a tool that is not offered (`instead_of_unknown`, `program_command`).
"""

from __future__ import annotations

import difflib
import json
import re
import reprlib
import shlex
import shutil
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from workbench.core.feedback import Feedback

ECHO_CHARS = 200  # a value the model sent is quoted back in an error at most this long
PROBLEMS_SHOWN = 10  # argument problems listed in one error; the rest are counted
PATTERN_CHARS = 10_000  # a longer regular expression or glob is refused at once: compiling 3 MB took 4-20 s


def shorten(value: str, limit: int = ECHO_CHARS) -> str:
    """`value` quoted for an error message, cut with a note when it is longer than `limit` characters."""
    if len(value) <= limit:
        return repr(value)
    return f"{value[:limit]!r}… (shortened: {len(value):,} characters)"


def bounded_pattern(pattern: str, kind: str) -> None:
    """Refuse a `kind` pattern (regular expression, glob) longer than PATTERN_CHARS, before any work."""
    if len(pattern) > PATTERN_CHARS:
        raise Feedback(
            f"the {kind} {shorten(pattern)} is too long: a pattern has at most {PATTERN_CHARS:,} characters; "
            "search for a shorter, distinctive part of it"
        )


def instead_of_unknown(name: str, offered: Iterable[str], arguments: object = None) -> str:
    """What to call instead of the tool `name` that is not offered: a close name; read_file when the
    call names a file (`path`, `file`, ...) and `name` is no program on PATH (a made-up tool such as
    get_log_level(path=...)); bash for a name that may be a program's (models call a program as a
    tool: docs/DECISIONS.md), never for an MCP tool's name (`server__tool`); '' if none of these.
    A call it gives is complete and runnable as written: no placeholder a model could copy."""
    offered = list(offered)
    close = difflib.get_close_matches(name, offered, n=1, cutoff=0.6)
    if close:
        return f"Did you mean {close[0]}?"
    path = _named_path(arguments)
    if path and "read_file" in offered and shutil.which(name) is None:
        call = json.dumps({"name": "read_file", "arguments": {"path": path}}, ensure_ascii=False)
        return f"To read {shorten(path, 120)}, call read_file: {call}."
    if "bash" in offered and "__" not in name and _PROGRAM.fullmatch(name):
        line = _command_line(name, arguments)
        if not line:
            return f"To run the program {name}, call bash with its whole command line ({name} and its arguments)."
        call = json.dumps({"name": "bash", "arguments": {"command": line}}, ensure_ascii=False)
        return f"To run the program {name}, call bash: {call}."
    return ""


def program_command(name: str, arguments: object) -> str:
    """The bash command line a call of the program `name` as a tool meant (`mkdir(path=build)`:
    `mkdir build`), when `name` is a program on PATH and the line can be told from its arguments
    (`_command_line`); '' otherwise (a made-up tool, an MCP tool's `server__tool` name)."""
    if "__" in name or not _PROGRAM.fullmatch(name) or shutil.which(name) is None:
        return ""
    return _command_line(name, arguments)


_ARGUMENT_KEYS = ("args", "arguments", "argv", "command", "cmd", "options", "flags")
# a program's operands named as a tool's arguments (mkdir(path=build), cp(source=a, destination=b)):
# their values, in the order written, are its command line
_OPERAND_KEYS = ("path", "source", "src", "from", "destination", "dest", "dst", "to", "target", "dir", "directory")


def _command_line(name: str, arguments: object) -> str:
    """The command line a call of the program `name` as a tool meant: `name` alone for no
    arguments, `name` and the words of its one `args`-like value, `name` and its operands (up to
    three of path, source, destination, ..., in the order written); '' when it cannot be told."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments or "{}")
        except ValueError:
            return ""
    if not isinstance(arguments, dict):
        return ""
    if not arguments:
        return name
    if 0 < len(arguments) <= 3 and all(k in _OPERAND_KEYS for k in arguments):  # cp(source=a, destination=b)
        values = [v for v in arguments.values() if isinstance(v, str) and v and "\n" not in v and len(v) <= 200]
        return shlex.join([name, *values]) if len(values) == len(arguments) else ""
    if len(arguments) > 1:
        return ""
    ((key, value),) = arguments.items()
    if key not in _ARGUMENT_KEYS:
        return ""
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        value = shlex.join(value)
    if not isinstance(value, str) or "\n" in value or len(value) > 500:
        return ""
    value = value.strip()
    if value == name or value.startswith(name + " "):  # the whole line given as its command
        return value
    return f"{name} {value}".strip()


_PATH_KEYS = ("path", "file", "file_path", "filepath", "filename", "file_name")


def _named_path(arguments: object) -> str:
    """The file a call's arguments name (a dict, or its JSON text), '' if none."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return ""
    if not isinstance(arguments, dict):
        return ""
    for key in _PATH_KEYS:
        value = arguments.get(key)
        if isinstance(value, str) and value.strip() and len(value) <= 4096 and "\n" not in value:
            return value.strip()
    return ""


_PROGRAM = re.compile(r"[A-Za-z0-9][\w.+-]{0,40}")
_PREVIEW = reprlib.Repr()
_PREVIEW.maxlevel, _PREVIEW.maxstring, _PREVIEW.maxother, _PREVIEW.maxlist, _PREVIEW.maxdict = 3, 60, 60, 6, 6


def preview(value: Any) -> str:
    """A short, bounded rendering of any argument value (deep nesting and huge values included)."""
    return shorten(value, 60) if isinstance(value, str) else _PREVIEW.repr(value)


def _problem(error: ErrorDetails, schema: dict[str, Any]) -> str:
    """One of pydantic's errors in the words the models have always been told."""
    name, *index = error["loc"]
    if error["type"] == "missing":
        return f"missing required argument {name!r}"
    if error["type"] == "extra_forbidden":
        return f"unknown argument {shorten(str(name), 80)}"
    spec = schema["properties"].get(name, {})
    for _ in index:
        spec = spec.get("items", {})
    where = f"argument {name!r}" + "".join(f"[{i}]" for i in index)
    value, kind = error["input"], spec.get("type", "string")
    if isinstance(value, bool) and kind in ("integer", "number"):
        return f"{where} must be {kind}, got boolean"
    enum = spec.get("enum", [])
    if error["type"] == "literal_error" and any(type(value) is type(v) for v in enum):
        return f"{where} must be one of {', '.join(map(str, enum))}, got {preview(value)}"
    if error["type"] == "literal_error" or error["type"].endswith("_type"):  # int_type, string_type, ...
        return f"{where} must be {kind}, got {type(value).__name__} {preview(value)}"
    return f"{where}: {error['msg']}, got {preview(value)}"


def validate(args: dict[str, Any], model: type[BaseModel], schema: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Check a call's arguments with the pydantic model of its tool's declaration (`tool_schema.declare`);
    return them as given (null for an optional argument left out, a whole float for an integer an int)
    and the problems: the missing arguments, then the unknown ones, then each wrong value, in the
    order the call gave them."""
    required = schema["required"]
    args = {k: v for k, v in args.items() if v is not None or k in required or k not in model.model_fields}
    try:
        checked = model.model_validate(args)
    except ValidationError as err:
        given = {name: i for i, name in enumerate(args)}
        order = {"missing": 0, "extra_forbidden": 1}

        def place(error: ErrorDetails) -> tuple[int, int]:
            return order.get(error["type"], 2), given.get(str(error["loc"][0]), -1)

        return args, [_problem(e, schema) for e in sorted(err.errors(include_url=False), key=place)]
    values = checked.__dict__  # getattr would miss an argument named like a BaseModel method
    return {k: values[k] for k in args}, []


class BadArguments(ValueError):
    """A call's arguments that are not one JSON object; the message says why, for the model."""


def parse_arguments(text: str) -> dict[str, Any]:
    """A call's JSON arguments as a dict ({} for none), or BadArguments: not JSON, nested too
    deeply to read (json.loads raises RecursionError there, not a ValueError), not an object.
    Everything that reads a model's arguments uses this, so no hostile text can raise past it."""
    try:
        args = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as err:
        raise BadArguments(f"arguments are not valid JSON ({err})") from err
    except RecursionError as err:
        raise BadArguments(
            "argument nesting too deep: the arguments hold arrays or objects nested inside each other "
            "beyond what can be read"
        ) from err
    if not isinstance(args, dict):
        raise BadArguments(f"arguments must be a JSON object, not {type(args).__name__}")
    return args
