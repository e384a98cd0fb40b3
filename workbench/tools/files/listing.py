"""ls and glob, and what they share with grep: planning a walk from a path, running it in a
thread, fitting a listing to the output limit, the note on what a walk passed over.

`.git` and what `.gitignore` ignores are left out of listings and searches unless the path names them.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from workbench.core.feedback import Feedback
from workbench.pb import workbench_pb2 as pb
from workbench.tools.arguments import bounded_pattern, shorten
from workbench.tools.files.bounded import run_bounded
from workbench.tools.files.confined import PathChanged
from workbench.tools.files.found_nothing import (
    ANY_FILE,
    count_of,
    filter_missed,
    missing_place,
    nothing_found,
    paths_found,
    place,
    whereabouts,
    workspace_files,
)
from workbench.tools.files.paths import (
    allowed,
    explain,
    inside,
    read_roots,
    resolve,
    resolve_and,
    shown,
    suggest,
    workspace_root,
)
from workbench.tools.files.read_write import FILE_MAX_BYTES, human_size
from workbench.tools.files.walk import Ignore, Search, WalkStats, glob_regex, ignore_for, opened_path, walk
from workbench.tools.registry import ToolContext, tool

LS_CAP = 500
GLOB_CAP = 200

WILDCARDS = re.compile(r"[*?\[{]")
T = TypeVar("T")


# --- what ls, glob and grep share -----------------------------------------------------------


def search_plan(ctx: ToolContext, path: str, pattern: str | None) -> tuple[Search, Path]:
    """Plan a walk from `path` with an optional file-name glob; the start folder is the second value."""
    pattern = (pattern or "").strip()
    if pattern.startswith("./"):
        pattern = pattern[2:]
    if pattern.startswith("/") or pattern.startswith("~"):  # absolute pattern: split off its folder
        literal = []
        for part in pattern.split("/"):
            if any(ch in part for ch in "*?[{"):
                break
            literal.append(part)
        path = "/".join(literal) or "/"
        pattern = pattern[len(path) :].lstrip("/")
    start = resolve(ctx, path or ".", read=True)
    if not start.exists():
        raise missing_place(ctx, start, path, pattern)
    if not start.is_dir():
        name = shown(ctx, start)
        raise Feedback(f"{name} is a file, not a folder; use read_file(path={name!r}) or give its folder")
    root = workspace_root(ctx)
    base = root if inside(start, root) else next(r for r in read_roots(ctx) if inside(start, r))
    rel_dir = "" if start == base else start.relative_to(base).as_posix()
    ignore: Ignore | None = ignore_for(base, rel_dir)
    if rel_dir and ignore is not None and ignore.ignored(rel_dir, True):
        ignore = None  # the person or the model named an ignored folder: search it all
    search = Search(base, rel_dir, "" if base == root else f"{base}/", ignore)
    if pattern:
        bounded_pattern(pattern, "glob")
        search.name_only = "/" not in pattern
        try:
            search.matcher = glob_regex(pattern)
        except re.error as err:
            raise Feedback(f"invalid glob {shorten(pattern)}: {err}") from err
    return search, start


async def in_thread(fn: Callable[[threading.Event], T]) -> T:
    """Run blocking work in a thread; a cancelled call tells it to stop at the next file."""
    stop = threading.Event()
    try:
        return await asyncio.to_thread(fn, stop)
    except asyncio.CancelledError:
        stop.set()
        raise


def fit(lines: list[str], cap: int, ctx: ToolContext) -> list[str]:
    """The first lines that stay within `cap` lines and the output limit (leaving room for a note)."""
    budget = max(ctx.settings.output_limit - 400, 1000)
    used = 0
    for i, line in enumerate(lines[:cap]):
        used += len(line) + 1
        if used > budget and i > 0:
            return lines[:i]
    return lines[:cap]


def skipped_note(stats: WalkStats) -> str:
    notes = []
    if stats.ignored:
        names = ", ".join(stats.ignored_names)
        more = ", …" if stats.ignored > len(stats.ignored_names) else ""
        notes.append(
            f"{count_of(stats.ignored, 'entry', 'entries')} ignored (.git or .gitignore: {names}{more}); "
            "name one in path to search it"
        )
    if stats.outside:
        notes.append(f"{count_of(stats.outside, 'symlink')} leading outside the workspace skipped")
    if stats.large:
        notes.append(
            f"{count_of(stats.large, 'file')} over {human_size(FILE_MAX_BYTES)} not searched (use grep in bash)"
        )
    if stats.binary:
        notes.append(f"{count_of(stats.binary, 'binary file')} not searched")
    if stats.unreadable:
        notes.append(f"{count_of(stats.unreadable, 'unreadable entry', 'unreadable entries')} skipped")
    return "[" + "; ".join(notes) + "]" if notes else ""


@tool(read_only=True)
async def ls(ctx: ToolContext, path: str = ".") -> pb.ToolResult:
    """List one folder: sub-folders first (ending in /), then files with their sizes.

    `.git` and entries that .gitignore ignores are left out (a note says how many).

    Args:
        path: folder relative to the workspace root
    """
    listing = await in_thread(
        lambda stop: resolve_and(ctx, path, lambda target: _list_folder(ctx, target, path), read=True)
    )
    return paths_found(listing)


def _list_folder(ctx: ToolContext, target: Path, path: str) -> str:
    name = shown(ctx, target)
    if not target.exists():
        raise missing_place(ctx, target, path)
    if not target.is_dir():
        try:
            size = human_size(target.stat().st_size)
        except OSError as err:  # gone since it was looked at
            raise explain(ctx, err, target, path, "listing") from err
        return f"{name} is a file ({size}); read it with read_file(path={name!r})"
    root = workspace_root(ctx)
    base = root if inside(target, root) else next(r for r in read_roots(ctx) if inside(target, r))
    rel = "" if target == base else target.relative_to(base).as_posix()
    ignore = ignore_for(base, rel)
    if rel and ignore.ignored(rel, True):
        ignore = Ignore()
    ignore = ignore.child(target, rel)
    try:
        fd = os.open(target, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as err:
        raise explain(ctx, err, target, path, "listing") from err
    try:
        real = opened_path(fd)
        if real is not None and real != str(target):  # replaced by a symlink since it was resolved
            raise PathChanged(real)
        with os.scandir(fd) as it:
            entries = list(it)
        return _listing(ctx, target, base, rel, entries, ignore, fd)
    except OSError as err:
        raise explain(ctx, err, target, path, "listing") from err
    finally:
        os.close(fd)


def _listing(
    ctx: ToolContext, target: Path, base: Path, rel: str, entries: list[os.DirEntry[str]], ignore: Ignore, fd: int
) -> str:
    """The lines of `ls` for the entries of the open folder `fd` (at `target`)."""
    name = shown(ctx, target)
    stats = WalkStats()
    folders, files = [], []
    is_allowed = allowed(ctx)  # once: it lists the skills, which reads every SKILL.md
    for entry in entries:
        sub = f"{rel}/{entry.name}" if rel else entry.name
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
        except OSError:
            is_dir = False
        if entry.name == ".git" or ignore.ignored(sub, is_dir):
            stats.note_ignored(entry.name + ("/" if is_dir else ""))
            continue
        if entry.is_symlink():
            try:
                dest = os.readlink(entry.name, dir_fd=fd)
            except OSError:
                dest = "?"
            try:
                real: Path | None = Path(os.path.realpath(target / entry.name))  # not Path.resolve: it raises on a loop
            except OSError:  # the link changed while it was followed
                real = None
            where = "" if real is None or is_allowed(real) else " (outside the workspace)"
            broken = "" if real is not None and real.exists() else " (broken)"
            files.append(f"{entry.name} -> {dest}{where}{broken}")
        elif is_dir:
            folders.append(entry.name + "/")
        else:
            try:
                files.append(f"{entry.name}  ({human_size(entry.stat(follow_symlinks=False).st_size)})")
            except OSError:
                files.append(entry.name)
    listing = sorted(folders, key=str.lower) + sorted(files, key=str.lower)
    if not listing and not stats.ignored:  # an error, not an answer: see found_nothing
        about, _ = whereabouts(workspace_files(ctx, base), ANY_FILE, "" if base == workspace_root(ctx) else f"{base}/")
        raise nothing_found(f"{name} is an empty folder: there is nothing in it to list; {about}", f"{name} is empty")
    out = fit(listing, LS_CAP, ctx)
    if len(listing) > len(out):
        out.append(f"[{len(listing) - len(out):,} more entries not shown; use glob to narrow down]")
    if stats.ignored:
        shown_names = ", ".join(stats.ignored_names) + (", …" if stats.ignored > 5 else "")
        out.append(
            f"[{count_of(stats.ignored, 'ignored entry', 'ignored entries')} not shown "
            f"(.git or .gitignore): {shown_names}; "
            "give their path to look inside]"
        )
    return "\n".join(out)


@tool(read_only=True)
async def glob(pattern: str, ctx: ToolContext, path: str = ".") -> pb.ToolResult:
    """Find files by name pattern; sorted paths, at most 200.

    A pattern without "/" matches file names at any depth ("*.py"); one with "/" matches the
    path below `path` ("src/**/*.go": ** spans folders, * stays in one). `{a,b}` and `[abc]`
    work too. `.git` and .gitignore'd files are left out.

    Args:
        pattern: glob pattern, e.g. "**/*.py", "*.{ts,tsx}", "tests/test_*.py"
        path: folder to search below, relative to the workspace root
    """
    search, start = await run_bounded(lambda: search_plan(ctx, path, pattern))

    def run(stop: threading.Event) -> tuple[list[str], WalkStats]:
        stats = WalkStats()
        found = [
            search.prefix + rel
            for rel, _ in walk(search.base, search.rel_dir, search.ignore, stats, allowed=allowed(ctx), stop=stop)
            if search.matches(rel)
        ]
        return sorted(found), stats

    found, _ = await in_thread(run)
    if not found:
        await in_thread(lambda stop: _matched_nothing(ctx, search, start, pattern, stop))
    out = fit(found, GLOB_CAP, ctx)
    if len(found) > len(out):
        out.append(f"[{len(found) - len(out):,} more files match; narrow the pattern or the path]")
    return paths_found("\n".join(out))


def _matched_nothing(ctx: ToolContext, search: Search, start: Path, pattern: str, stop: threading.Event) -> None:
    """A glob that matched no file: an error saying where the files of its kind are (found_nothing),
    the ignored files it would match, and for a plain path the close ones."""
    lead = f"the glob {shorten(pattern)} matched no file in {place(shown(ctx, start))}"
    everywhere = start == search.base
    message = filter_missed(ctx, search.base, search.prefix, lead, pattern, everywhere=everywhere)
    hidden = _ignored_matches(ctx, search, stop)
    if hidden:
        message += (
            f"; {count_of(len(hidden), 'ignored file')} would match, e.g. {', '.join(hidden[:3])} "
            "(give an ignored folder as path to search it)"
        )
    if not WILDCARDS.search(pattern):  # a plain path: the one the model meant may be close by
        close = suggest(ctx, start / pattern, limit=3)
        if len(close) == 1 and (search.base / close[0].removeprefix(search.prefix)).is_file():
            message += f"; did you mean {close[0]}? Read it with read_file(path={json.dumps(close[0])})"
        elif close:
            message += f"; did you mean {' or '.join(close)}?"
    if "/" in pattern:
        message += "; a pattern without / matches file names at any depth, with / ** spans folders"
    raise nothing_found(message, lead)


def _ignored_matches(ctx: ToolContext, search: Search, stop: threading.Event) -> list[str]:
    """Files the ignore rules hid that would match (for the no-match hint); bounded work."""
    everything = [
        search.prefix + rel
        for i, (rel, _) in enumerate(
            walk(search.base, search.rel_dir, None, WalkStats(), allowed=allowed(ctx), stop=stop)
        )
        if i < 50_000 and search.matches(rel)
    ]
    return sorted(everything)


__all__ = ["GLOB_CAP", "LS_CAP", "fit", "glob", "in_thread", "ls", "search_plan", "skipped_note"]
