"""Failures that point at the code (issue 38): a failed command's output that holds a traceback or
a compiler or test failure (Python, pytest, node, go, and any `path.ext:LINE`) names the workspace
files and lines in it, each with the line's text and the ready read_file call, in the error above
the output; "No module named X" says what that means (a 1.5B model ran `pip install` of its own
script's name). Files outside the workspace (the standard library, site-packages) are left out.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from workbench.core.regular_files import read_regular

_PY_FRAME = re.compile(r'File "([^"\n]+)", line (\d+)')
_PATH_LINE = re.compile(
    r"(?<![\w/.-])((?:/|\./)?(?:[\w.-]+/)*[\w.-]+\.(?:py|js|mjs|cjs|ts|tsx|go|rs|c|h|cc|cpp|java|rb|php|sh)):(\d+)"
)
_NO_MODULE = re.compile(r"No module named '([\w.]+)'")
SHOWN = 3  # places named, the last ones of the output (a traceback's innermost frames)
LINE_CHARS = 120
READ_LIMIT = 2_000_000  # bytes of a file read for the line's text


def _line_of(path: Path, number: int) -> str | None:
    try:
        lines = read_regular(path, READ_LIMIT).decode("utf-8", errors="replace").splitlines()
    except OSError:
        return None
    return lines[number - 1].strip()[:LINE_CHARS] if 0 < number <= len(lines) else None


def _read(path: str, number: int) -> str:
    arguments = {"path": path, "offset": max(number - 5, 1), "limit": 20}
    return json.dumps({"name": "read_file", "arguments": arguments})


def places(output: str, workspace: Path, cwd: Path | None = None) -> list[tuple[str, int, str]]:
    """The workspace files and lines `output` names, as (path relative to the workspace, line, the
    line's text), each once, the last SHOWN in the order they appear."""
    root = workspace.resolve()
    base = (cwd or workspace).resolve()
    found: list[tuple[int, str, int]] = []
    for pattern in (_PY_FRAME, _PATH_LINE):
        found += [(m.start(), m.group(1), int(m.group(2))) for m in pattern.finditer(output)]
    named: dict[tuple[str, int], str] = {}
    for _, name, number in sorted(found):
        target = (base / name).resolve()
        if not target.is_relative_to(root) or not target.is_file():
            continue
        text = _line_of(target, number)
        if text is not None:
            named.pop((str(target.relative_to(root)), number), None)  # kept at its last place
            named[(str(target.relative_to(root)), number)] = text
    return [(path, number, text) for (path, number), text in list(named.items())[-SHOWN:]]


def pointers(output: str, workspace: Path, cwd: Path | None = None) -> list[str]:
    """The notes for a failed command's output: the places it names, and what a missing module is."""
    notes = []
    shown = places(output, workspace, cwd)
    if shown:
        each = "; ".join(f"{path} line {n}: `{text}` (read it: {_read(path, n)})" for path, n, text in shown)
        notes.append(f"the output points at {each}")
    missing = _NO_MODULE.search(output)
    if missing:
        name = missing.group(1)
        local = sorted(
            str(p.relative_to(workspace))
            for p in workspace.glob(f"**/{name.split('.')[0]}.py")
            if ".venv" not in p.parts and "node_modules" not in p.parts
        )[:2]
        where = (
            f"; {' and '.join(local)} is in the workspace: run the command from that file's folder or fix the import"
            if local
            else "; install the package that provides it only if it is a published package"
        )
        notes.append(f"No module named '{name}': Python cannot find a module the code imports{where}")
    return notes


__all__ = ["places", "pointers"]
