"""grep: search file contents with a regular expression, off the event loop, each search bounded in time."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import regex

from workbench.core.feedback import Feedback
from workbench.pb import workbench_pb2 as pb
from workbench.tools.arguments import bounded_pattern, shorten
from workbench.tools.files.bounded import run_bounded
from workbench.tools.files.confined import PathChanged, read_checked
from workbench.tools.files.found_nothing import count_of, filter_missed, missing_place, nothing_found, place
from workbench.tools.files.listing import fit, in_thread, search_plan, skipped_note
from workbench.tools.files.paths import allowed, allows, explain, resolve, resolve_and, shown
from workbench.tools.files.read_write import BINARY_SNIFF, FILE_MAX_BYTES, human_size
from workbench.tools.files.walk import Found, WalkStats, read_at, walk
from workbench.tools.registry import ToolContext, tool

GREP_CAP = 200  # matching lines shown
GREP_LINE_CHARS = 300
GREP_MATCH_SECONDS = 5.0  # one search of the pattern in one file may take this long


class _TooLarge(Exception):
    """A file over FILE_MAX_BYTES: grep skips it (and says so) rather than hold it in memory."""


class _SlowPattern(Exception):
    """One search of the pattern ran past GREP_MATCH_SECONDS (catastrophic backtracking)."""

    def __init__(self, path: str):
        super().__init__(path)
        self.path = path


def _existing(ctx: ToolContext, path: str) -> Path:
    target = resolve(ctx, path, read=True)
    if not target.exists():
        raise missing_place(ctx, target, path, str(ctx.call_args.get("glob") or ""))
    return target


def _compile(pattern: str) -> Any:
    """The pattern compiled by `regex`, checked first by Python's `re` for its familiar error messages."""
    bounded_pattern(pattern, "regular expression")
    try:
        re.compile(pattern, re.MULTILINE)
        return regex.compile(pattern, regex.MULTILINE | regex.VERSION0)
    except (re.error, regex.error) as err:
        at = f" at position {err.pos}" if err.pos is not None else ""
        raise Feedback(
            f"invalid regular expression {shorten(pattern)}: {err.msg}{at}. grep takes a Python regex; "
            r"to match ( ) [ ] { } . * + ? | \ literally, put a backslash before them (e.g. 'foo\(')"
        ) from err


def _grep_found(found: Found, matcher: Any, is_allowed: Callable[[Path], bool]) -> list[tuple[int, str]] | None:
    """`_grep_file` for a file a walk found: read in its open folder (a symlink: checked where it leads)."""
    if found.entry.is_symlink():
        return _grep_file(found.path, matcher, is_allowed)
    data = read_at(found.folder_fd, found.entry.name, FILE_MAX_BYTES + 1)
    return _grep_data(data, found.path, matcher)


def _grep_file(path: str, matcher: Any, is_allowed: Callable[[Path], bool]) -> list[tuple[int, str]] | None:
    """`_grep_data` of the file at `path`, read only if the file opened is where `is_allowed` accepts."""
    return _grep_data(read_checked(Path(path), is_allowed, FILE_MAX_BYTES + 1), path, matcher)


def _grep_data(data: bytes, path: str, matcher: Any) -> list[tuple[int, str]] | None:
    """Matching lines of a file's bytes as (line number, line); None for a binary file.

    `matcher` is compiled by the `regex` engine: each search releases the GIL and stops after
    GREP_MATCH_SECONDS, so a pattern that backtracks catastrophically ((a+)+$ on a long line)
    neither freezes the whole process nor runs on forever; it raises _SlowPattern.
    """
    if len(data) > FILE_MAX_BYTES:
        raise _TooLarge(path)
    if b"\x00" in data[:BINARY_SNIFF]:
        return None
    text = data.decode("utf-8", errors="replace")
    found: list[tuple[int, str]] = []

    def search(at: int) -> Any:
        try:
            return matcher.search(text, at, concurrent=True, timeout=GREP_MATCH_SECONDS)
        except TimeoutError as err:
            raise _SlowPattern(path) from err

    m = search(0)
    line_no, counted = 1, 0
    while m is not None:
        line_no += text.count("\n", counted, m.start())
        counted = m.start()
        begin = text.rfind("\n", 0, m.start()) + 1
        end = text.find("\n", m.start())
        end = len(text) if end == -1 else end
        found.append((line_no, text[begin:end].rstrip("\r")))
        if end >= len(text):
            break
        m = search(end + 1)
    return found


@tool(read_only=True)
async def grep(pattern: str, ctx: ToolContext, path: str = ".", glob: str = "") -> str | pb.ToolResult:
    """Search file contents with a regular expression; prints path:line:text, sorted, at most 200 lines.

    Python regex syntax, case-sensitive (start with (?i) to ignore case); ^ and $ match at
    line ends. Binary files, `.git` and .gitignore'd files are skipped.

    Args:
        pattern: regular expression, e.g. "def \\w+_test", "TODO|FIXME"
        path: file or folder to search, relative to the workspace root
        glob: only search files whose name matches this glob, e.g. "*.py" or "src/**/*.go"
    """
    target = await run_bounded(lambda: _existing(ctx, path or "."))  # a missing path first
    matcher = await in_thread(lambda stop: _compile(pattern))  # a huge pattern compiles slowly
    try:
        if target.is_file():
            name = shown(ctx, target)
            is_allowed = allows(ctx, read=True)
            try:
                lines = await in_thread(
                    lambda stop: resolve_and(ctx, path, lambda t: _grep_file(str(t), matcher, is_allowed), read=True)
                )
            except _TooLarge as err:
                raise Feedback(
                    f"{name} is too large (over {human_size(FILE_MAX_BYTES)}) for grep, which holds a file in "
                    f"memory; search it with a command instead (`grep -n PATTERN {name}`), if you have bash"
                ) from err
            except OSError as err:
                raise explain(ctx, err, target, path, "reading") from err
            if lines is None:
                raise Feedback(f"{name} is a binary file; grep searches text files only")
            return _grep_report(ctx, {name: lines}, 1, WalkStats(), pattern, name)
        search, start = await run_bounded(lambda: search_plan(ctx, path, glob))

        def run(stop: threading.Event) -> tuple[dict[str, list[tuple[int, str]]], int, WalkStats]:
            stats = WalkStats()
            results: dict[str, list[tuple[int, str]]] = {}
            searched = matched = 0
            is_allowed = allowed(ctx)
            for rel, found in walk(search.base, search.rel_dir, search.ignore, stats, allowed=is_allowed, stop=stop):
                if not search.matches(rel):
                    continue
                matched += 1
                try:
                    lines = _grep_found(found, matcher, is_allowed)
                except PathChanged:
                    stats.outside += 1
                    continue
                except _TooLarge:
                    stats.large += 1
                    continue
                except OSError:
                    stats.unreadable += 1
                    continue
                searched += 1
                if lines is None:
                    stats.binary += 1
                elif lines:
                    results[search.prefix + rel] = lines
            # the filter matched nothing (and nothing was skipped): a failed call, not "no matches"
            if not matched and not (stats.outside or stats.unreadable or stop.is_set()):
                where = place(shown(ctx, start))
                if glob:
                    lead = f"the glob {shorten(glob)} matched no file in {where}, so nothing was searched"
                else:
                    lead = f"{where} holds no file to search (ignored ones left out), so nothing was searched"
                missed = filter_missed(ctx, search.base, search.prefix, lead, glob, everywhere=start == search.base)
                raise nothing_found(missed, lead)
            return results, searched, stats

        results, searched, stats = await in_thread(run)
    except _SlowPattern as err:
        raise Feedback(
            f"grep stopped: one search of {shorten(pattern)} in {shown(ctx, Path(err.path))} took longer than "
            f"{GREP_MATCH_SECONDS:g} s. The pattern backtracks catastrophically (nested repetition such as "
            "(a+)+ or (x|xy)*, or many .* in a row); write it without repetition inside repetition, or "
            "narrow path or glob"
        ) from err
    return _grep_report(ctx, results, searched, stats, pattern, shown(ctx, start), glob)


def _grep_report(
    ctx: ToolContext,
    results: dict[str, list[tuple[int, str]]],
    searched: int,
    stats: WalkStats,
    pattern: str,
    where: str,
    glob: str = "",
) -> str | pb.ToolResult:
    total = sum(len(v) for v in results.values())
    if total == 0:
        within = f" (files matching {shorten(glob)})" if glob else ""
        message = f"no matches for {shorten(pattern)} in {place(where)}{within}; {count_of(searched, 'file')} searched"
        why = f"no line of the {count_of(searched, 'file')} searched matches {shorten(pattern)}"
        if re.search(r"[A-Za-z]", pattern) and not pattern.startswith("(?i)"):
            message += "; the search is case-sensitive (start the pattern with (?i) to ignore case)"
            why += " (case-sensitive)"
        skipped = skipped_note(stats)
        result = pb.ToolResult(output=message + (f"\n{skipped}" if skipped else ""))
        result.metadata.update({"empty": True, "why_empty": why})
        return result
    out: list[str] = []
    for name in sorted(results):
        for line_no, line in results[name]:
            if len(out) >= GREP_CAP:
                break
            if len(line) > GREP_LINE_CHARS:
                line = line[:GREP_LINE_CHARS] + "…"
            out.append(f"{name}:{line_no}:{line}")
    out = fit(out, GREP_CAP, ctx)
    if total > len(out):
        out.append(
            f"[{total - len(out):,} more matching lines not shown ({total:,} in "
            f"{count_of(len(results), 'file')}); narrow the search with path, glob or a more specific pattern]"
        )
    if stats.large:
        out.append(
            f"[{count_of(stats.large, 'file')} over {human_size(FILE_MAX_BYTES)} not searched (use grep in bash)]"
        )
    return "\n".join(out)


__all__ = ["GREP_CAP", "grep"]
