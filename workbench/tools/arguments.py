"""A model's arguments to a tool call: read as one JSON object (`parse_arguments`), checked
against the tool's schema (`validate`), quoted back in errors at a bounded length (`shorten`,
`preview`), and what to call instead of a tool that is not offered (`instead_of_unknown`).
"""

from __future__ import annotations

import difflib
import json
import re
import reprlib
import shlex
import shutil
import typing
from collections.abc import Iterable
from typing import Any

_PY_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
}


ECHO_CHARS = 200  # a value the model sent is quoted back in an error at most this long
PROBLEMS_SHOWN = 10  # argument problems listed in one error; the rest are counted


def shorten(value: str, limit: int = ECHO_CHARS) -> str:
    """`value` quoted for an error message, cut with a note when it is longer than `limit` characters."""
    if len(value) <= limit:
        return repr(value)
    return f"{value[:limit]!r}… (shortened: {len(value):,} characters)"


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


def _check(value: Any, spec: dict[str, Any], where: str) -> tuple[Any, list[str]]:
    kind = spec.get("type", "string")
    if kind == "integer" and isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) and kind in ("integer", "number"):
        return value, [f"{where} must be {kind}, got boolean"]
    if not isinstance(value, _PY_TYPES[kind]):
        return value, [f"{where} must be {kind}, got {type(value).__name__} {preview(value)}"]
    if "enum" in spec and value not in spec["enum"]:
        return value, [f"{where} must be one of {', '.join(map(str, spec['enum']))}, got {preview(value)}"]
    if kind == "array":
        checked: list[Any] = []
        problems: list[str] = []
        for i, item in enumerate(typing.cast(list[Any], value)):
            item, errs = _check(item, spec.get("items", {}), f"{where}[{i}]")
            checked.append(item)
            problems += errs
        return checked, problems
    return value, []


def validate(args: dict[str, Any], schema: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Check arguments against a tool's schema; return them (ints coerced) and the problems."""
    props = schema["properties"]
    problems = [f"missing required argument {name!r}" for name in schema["required"] if name not in args]
    problems += [f"unknown argument {shorten(name, 80)}" for name in args if name not in props]
    clean = {}
    for name, value in args.items():
        if name in props:
            if value is None and name not in schema["required"]:
                continue
            clean[name], errs = _check(value, props[name], f"argument {name!r}")
            problems += errs
    return clean, problems


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
