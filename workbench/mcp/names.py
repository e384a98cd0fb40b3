"""The names MCP tools get in Workbench: `SERVER__tool`, valid for every provider.

Providers accept tool names of at most 64 characters of `[A-Za-z0-9_-]`. A server's tool name
may hold anything (dots, slashes, Unicode) and be long: other characters become `_`, a long name
is cut and given a short hash of the original, and two tools that end up with one name are told
apart by a hash too (`exposed_names` reports each such change).
"""

from __future__ import annotations

import hashlib
import re

MAX_NAME = 64
SEPARATOR = "__"
_INVALID = re.compile(r"[^A-Za-z0-9_-]")


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:6]


def clean(text: str) -> str:
    """Characters a provider refuses in a tool name become `_`."""
    return _INVALID.sub("_", text) or "_"


def exposed_name(server: str, tool: str) -> str:
    """`server__tool`, cleaned and held to 64 characters (a cut name ends with a hash of the original)."""
    name = f"{clean(server)}{SEPARATOR}{clean(tool)}"
    if len(name) <= MAX_NAME:
        return name
    return f"{name[: MAX_NAME - 7]}_{_digest(f'{server}/{tool}')}"


def exposed_names(server: str, tools: list[str], taken: set[str]) -> tuple[dict[str, str], list[str]]:
    """Each tool's exposed name (tool -> name) unique among `taken` and each other, with notes
    about every name that had to change beyond `server__tool`."""
    names: dict[str, str] = {}
    notes: list[str] = []
    for tool in tools:
        name = exposed_name(server, tool)
        if name in taken or name in names.values():
            base = name[: MAX_NAME - 7]
            name = f"{base}_{_digest(f'{server}/{tool}')}"
            notes.append(f"MCP server {server}: tool {tool!r} is offered as {name} (its name collided with another)")
        elif name != f"{server}{SEPARATOR}{tool}":
            notes.append(
                f"MCP server {server}: tool {tool!r} is offered as {name} (valid tool names: 64 of A-Z a-z 0-9 _ -)"
            )
        names[tool] = name
    return names, notes


def server_prefix(server: str) -> str:
    """The start every exposed tool of `server` has (`github__`): what `github__*` patterns match."""
    return f"{clean(server)}{SEPARATOR}"
