"""What a call written as text that cannot be read gets back: the exact spot, and the call written
right, built from the tool's schema (told only the parser's error, a model resends the same block:
docs/DECISIONS.md).

Pure functions: no I/O, no state.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

Schema = Mapping[str, Any]  # a tool's JSON schema (tools.registry.Tool.schema)

SPOT_LINE_CHARS = 100  # characters of the faulty line shown around the spot
_KEY = re.compile(r"""(?<![\w"'])["']?([A-Za-z_]\w{0,63})["']?\s*[:=]""")
KEYS_SCANNED = 4000  # characters of a block looked at for the argument names it writes
_PLACEHOLDER = {"integer": 0, "number": 0, "boolean": False, "array": [], "object": {}}


def spot(block: str, line: int, column: int) -> str:
    """The block's `line` (1-based) with a caret under `column` (1-based), cut around it."""
    lines = block.splitlines() or [""]
    text = lines[min(max(line, 1), len(lines)) - 1]
    at = max(column - 1, 0)
    start = max(at - SPOT_LINE_CHARS // 2, 0)
    shown = text[start : start + SPOT_LINE_CHARS]
    pointer = " " * (at - start) + "^"
    return f"at line {line}, column {column}:\n{shown}\n{pointer}"


def json_error_spot(block: str, err: Exception) -> str:
    """Where strict JSON (json.JSONDecodeError) or JSON5 (its ValueError: '<string>:3 Unexpected
    ... at column 7') stopped reading `block`; '' when the error does not say."""
    if isinstance(err, json.JSONDecodeError):  # its doc may be the whole reply the block is in
        pos = err.pos - max(err.doc.find(block), 0) if err.doc != block else err.pos
        if not 0 <= pos <= len(block):
            return ""
        return spot(block, block.count("\n", 0, pos) + 1, pos - (block.rfind("\n", 0, pos) + 1) + 1)
    found = re.search(r"<string>:(\d+) .*?at column (\d+)", str(err))
    return spot(block, int(found.group(1)), int(found.group(2))) if found else ""


def error_text(err: Exception) -> str:
    """A JSON or JSON5 error in words: JSON5's '<string>:3 Unexpected "x" at column 7' as
    'Unexpected "x" at line 3, column 7'."""
    found = re.fullmatch(r"<string>:(\d+) (.*?) at column (\d+)", str(err))
    return f"{found.group(2)} at line {found.group(1)}, column {found.group(3)}" if found else str(err)


def example_call(name: str, schema: Schema | None, block: str = "") -> str:
    """`{"name": "grep", "arguments": {"pattern": "...", "glob": "..."}}`: the call as strict JSON,
    with the tool's required arguments and those the block names, each a placeholder of its type."""
    properties: Mapping[str, Any] = (schema or {}).get("properties", {})
    required = list((schema or {}).get("required", []))
    named = [k for k in dict.fromkeys(_KEY.findall(block[:KEYS_SCANNED])) if k in properties and k not in required]
    arguments = {k: _PLACEHOLDER.get(properties[k].get("type", ""), "...") for k in [*required, *named]}
    return json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)


def unreadable_help(name: str, schema: Schema | None, block: str) -> str:
    """The sentence after a block that cannot be read: how to write it, with the example."""
    optional = [k for k in (schema or {}).get("properties", {}) if k not in (schema or {}).get("required", [])]
    also = f" (optional arguments: {', '.join(optional)})" if optional else ""
    return (
        "Write the call as strict JSON: double quotes, no comments, no trailing commas, for example "
        f"{example_call(name, schema, block)}{also}."
    )


__all__ = ["Schema", "error_text", "example_call", "json_error_spot", "spot", "unreadable_help"]
