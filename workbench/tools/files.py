"""File tools: read_file, write_file, edit_file (first version; issue 3 completes the family)."""

from __future__ import annotations

import difflib
import os
import tempfile
from pathlib import Path

from workbench.feedback import Feedback
from workbench.tools import ToolContext, tool


def resolve(ctx: ToolContext, path: str) -> Path:
    """Resolve a path the model gave inside the workspace, or refuse it."""
    root = ctx.workspace.resolve()
    target = (root / path).resolve()
    if target != root and root not in target.parents:
        raise Feedback(f"{path} is outside the workspace {root}; use a path inside it")
    return target


@tool(read_only=True)
async def read_file(path: str, ctx: ToolContext, offset: int = 1, limit: int = 2000) -> str:
    """Read a text file as numbered lines.

    Args:
        path: file path relative to the workspace root
        offset: first line to read, 1-based
        limit: number of lines to read
    """
    target = resolve(ctx, path)
    text = target.read_text(encoding="utf-8")
    ctx.state.setdefault("read_mtimes", {})[str(target)] = target.stat().st_mtime_ns
    lines = text.splitlines()
    start = max(offset, 1)
    chunk = lines[start - 1 : start - 1 + limit]
    numbered = "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(chunk, start))
    rest = len(lines) - (start - 1 + len(chunk))
    if rest > 0:
        numbered += f"\n[{rest} more lines; read on with offset={start + len(chunk)}]"
    return numbered or "(empty file)"


def atomic_write(target: Path, content: str) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(content)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@tool
async def write_file(path: str, content: str, ctx: ToolContext) -> str:
    """Write a whole file, creating parent folders.

    Args:
        path: file path relative to the workspace root
        content: the complete new content
    """
    target = resolve(ctx, path)
    atomic_write(target, content)
    ctx.state.setdefault("read_mtimes", {})[str(target)] = target.stat().st_mtime_ns
    return f"wrote {len(content.encode())} bytes, {content.count(chr(10)) + (not content.endswith(chr(10)) and bool(content))} lines to {path}"


def _closest_region(text: str, needle: str) -> str:
    lines, want = text.splitlines(), needle.splitlines() or [needle]
    best, best_at = 0.0, 0
    for i in range(max(len(lines) - len(want) + 1, 1)):
        ratio = difflib.SequenceMatcher(None, "\n".join(lines[i : i + len(want)]), needle).ratio()
        if ratio > best:
            best, best_at = ratio, i
    return f"lines {best_at + 1}-{best_at + len(want)} (similarity {best:.0%})"


@tool
async def edit_file(
    path: str, old_text: str, new_text: str, ctx: ToolContext, replace_all: bool = False
) -> str:
    """Replace exact text in a file.

    Args:
        path: file path relative to the workspace root
        old_text: the exact text to replace, including whitespace
        new_text: the replacement
        replace_all: replace every occurrence instead of exactly one
    """
    target = resolve(ctx, path)
    text = target.read_text(encoding="utf-8")
    count = text.count(old_text) if old_text else 0
    if count == 0:
        raise Feedback(
            f"old_text not found in {path}; closest: {_closest_region(text, old_text)}. "
            f"Re-read the file with read_file before editing again."
        )
    if count > 1 and not replace_all:
        raise Feedback(f"old_text occurs {count} times in {path}; add surrounding context or set replace_all")
    new = text.replace(old_text, new_text) if replace_all else text.replace(old_text, new_text, 1)
    atomic_write(target, new)
    diff = "".join(
        difflib.unified_diff(text.splitlines(True), new.splitlines(True), f"a/{path}", f"b/{path}")
    )
    return f"edited {path}\n{diff}"
