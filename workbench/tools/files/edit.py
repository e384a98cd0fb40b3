"""edit_file: replace exact text in a file, and when old_text is not there, say why.

A failed edit names the closest region of the current file (above a similarity floor) and
what differs there: whitespace only, tabs against spaces, lines that are not in the file.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from workbench.core.feedback import Feedback
from workbench.pb import workbench_pb2 as pb
from workbench.tools.files.bounded import may_take_long, path_lock, run_bounded
from workbench.tools.files.edit_match import Span, find_occurrences
from workbench.tools.files.paths import resolve_and, shown
from workbench.tools.files.read_write import (
    check_fresh,
    check_readable,
    check_writable,
    decode_text,
    diff_metadata,
    encode_text,
    has_seen,
    numbered,
    read_whole,
    remember,
    unified_diff,
    write_checked,
)
from workbench.tools.registry import ToolContext, check_of, tool


def _squash(line: str) -> str:
    return " ".join(line.split())


@dataclass(frozen=True)
class Region:
    first: int  # 1-based
    last: int
    similarity: float


def closest_region(text: str, needle: str) -> Region | None:
    """The lines of `text` most similar to `needle`, ignoring differences of whitespace.

    Windows of the needle's line count (and up to two lines more or fewer, for a line added or
    dropped) slide over the file; difflib scores each, cheap upper bounds first.
    """
    lines = text.splitlines()
    want = [_squash(x) for x in needle.splitlines()] or [_squash(needle)]
    while len(want) > 1 and not want[-1]:
        want.pop()
    if not lines:
        return None
    flat = [_squash(x) for x in lines]
    target = "\n".join(want)
    matcher = difflib.SequenceMatcher(None, autojunk=False)
    matcher.set_seq2(target)
    n = len(want)
    starts: range | list[int] = range(len(lines))
    if len(lines) > 4000:  # big file: only windows near a line the needle shares
        wanted = {w for w in want if w}
        anchors = [i for i, x in enumerate(flat) if x in wanted]
        if anchors:
            starts = sorted({s for a in anchors for s in range(max(a - n - 2, 0), a + 1)})
    best: Region | None = None
    best_ratio = 0.0
    for size in range(max(n - 2, 1), n + 3):
        if size > len(lines):
            break
        for i in starts:
            if i + size > len(lines):
                continue
            matcher.set_seq1("\n".join(flat[i : i + size]))
            if matcher.real_quick_ratio() <= best_ratio or matcher.quick_ratio() <= best_ratio:
                continue
            ratio = matcher.ratio()
            if ratio > best_ratio:
                best_ratio, best = ratio, Region(i + 1, i + size, ratio)
    return best


_LINE_PREFIX = re.compile(r"^\s*\d+\t")
REGION_FLOOR = 0.6  # a closest region less similar than this is not shown: it would mislead
SMALL_REGION = 3  # a closest region of at most this many lines is quoted exactly, whatever differs
EXACT_CHARS = 2000  # a region that differs only in whitespace is quoted JSON-escaped up to this length
WHOLE_FILE_LINES = 80  # a file the agent has not read, up to this long, is shown whole when old_text is not in it
AROUND_LINES = 10  # else the lines this far around the one nearest old_text's first line


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _indentation_difference(found: list[str], old_lines: list[str]) -> str:
    """Tabs against spaces, said only when that is how the lines both hold differ: each line
    of old_text whose text is in the region is paired with that line, and their indents compared."""
    unused = list(found)
    differ: list[tuple[str, str]] = []
    for line in old_lines:
        match = next((f for f in unused if line.strip() and f.strip() == line.strip()), None)
        if match is None:
            continue
        unused.remove(match)
        if _indent(match) != _indent(line):
            differ.append((_indent(match), _indent(line)))
    if not differ:
        return ""
    if all("\t" in file and "\t" not in old and " " in old for file, old in differ):
        return "the file indents with tabs where old_text uses spaces"
    if all("\t" in old and "\t" not in file and " " in file for file, old in differ):
        return "the file indents with spaces where old_text uses tabs"
    return f"the indentation differs on {len(differ)} of the lines old_text shares with the file"


def _stray_quote(line: str, present: dict[str, str]) -> tuple[str, str] | None:
    """("end" or "start", the line without it) when `line` is in the region but for one
    backtick or quote at its end or start (copied from around a quoted hint); else None."""
    text = line.strip()
    if _squash(text) in present or len(text) < 2:
        return None
    for where, cleaned in (("end", text[:-1]), ("start", text[1:])):
        char = text[-1] if where == "end" else text[0]
        if char in "`'\"" and _squash(cleaned) in present:
            return where, cleaned
    return None


def _not_found(ctx: ToolContext, target: Path, data: bytes, text: str, old_text: str) -> Feedback:
    """Why old_text is not in the file. The agent has not read the file in this session (it
    wrote old_text from memory, and told only to re-read resends it: docs/DECISIONS.md):
    a small file is shown whole, so the next call can be right; a larger one, the lines
    nearest old_text's first line and the read_file call for them."""
    may_take_long()  # the closest region: difflib over windows of the whole file
    name = shown(ctx, target)
    if has_seen(ctx, target) or not ctx.settings.recovery_hints:
        reread = (
            f"Re-read the file with read_file(path={name!r}) and copy old_text exactly from it "
            "(without the line-number prefix) before editing again."
        )
        return _diagnosis(ctx, target, text, old_text, reread, closest_region(text, old_text))
    lines = text.splitlines()
    region = closest_region(text, old_text)
    if len(lines) <= WHOLE_FILE_LINES:
        remember(ctx, target, data)  # it is shown whole: an edit based on it is based on what is there
        reread = (
            f"You have not read {name} in this session: its whole current text ({len(lines)} lines) is shown "
            "above with line numbers. Copy old_text exactly from it (without the line-number prefix) and send "
            "the edit again."
        )
        diagnosis = _diagnosis(ctx, target, text, old_text, reread, region)
        feedback = _said(diagnosis, reread, name, "its whole current text is shown above")
        feedback.output = f"{name} as it is now (all {len(lines)} lines):\n" + numbered(lines, 1)
        return feedback
    if region is not None and region.similarity >= REGION_FLOOR:
        first, last = max(region.first - AROUND_LINES, 1), min(region.last + AROUND_LINES, len(lines))
    else:
        first, last = _around_first_line(lines, old_text)
    call = f"read_file(path={json.dumps(name)}, offset={first}, limit={last - first + 1})"
    reread = (
        f"You have not read {name} in this session ({len(lines):,} lines). Read the part you mean to change "
        f"with {call} and copy old_text exactly from it (without the line-number prefix)."
    )
    feedback = _said(_diagnosis(ctx, target, text, old_text, reread, region), reread, name, f"read it with {call}")
    if not feedback.output:  # no region resembles old_text: show the lines nearest its first line
        feedback.output = f"{name}, lines {first}-{last} (nearest old_text's first line):\n" + numbered(
            lines[first - 1 : last], first
        )
    return feedback


def _said(feedback: Feedback, sentence: str, name: str, short: str) -> Feedback:
    """`feedback` ending with `sentence`; when the diagnosis ends with the exact lines to send
    instead (they stay last: a small model copies what follows them), `short` goes in its first clause."""
    if sentence not in feedback.message:
        head = f"old_text not found in {name}"
        feedback.message = feedback.message.replace(head, f"{head} (you have not read it in this session: {short})", 1)
    return feedback


def _around_first_line(lines: list[str], old_text: str) -> tuple[int, int]:
    """Lines (first, last; 1-based) around the file line most like old_text's first non-blank one."""
    old_lines = old_text.splitlines()
    head = next((x for x in old_lines if x.strip()), old_text)
    region = closest_region("\n".join(lines), head)
    at = region.first if region is not None else 1
    return max(at - AROUND_LINES, 1), min(at + len(old_lines) + AROUND_LINES, len(lines))


def _diagnosis(
    ctx: ToolContext, target: Path, text: str, old_text: str, reread: str, region: Region | None
) -> Feedback:
    """old_text not found: the closest region and what differs there, ending with `reread`
    (what to do next) unless the region's exact lines are given to send instead."""
    name = shown(ctx, target)
    old_lines = old_text.splitlines()
    if old_lines and all(_LINE_PREFIX.match(x) for x in old_lines if x.strip()):
        return Feedback(
            f"old_text not found in {name}: it starts its lines with read_file's line numbers "
            f"(like {old_lines[0][:12]!r}); those are not part of the file. {reread}"
        )
    if region is None or region.similarity < REGION_FLOOR:
        return Feedback(
            f"old_text not found in {name}, and no part of the file resembles it; check that this "
            f"is the file you mean and that old_text is text from it, not a summary or a placeholder. {reread}"
        )
    lines = text.splitlines()
    found = lines[region.first - 1 : region.last]
    present = {_squash(x): x.strip() for x in found}
    strays = {x: stray for x in old_lines if (stray := _stray_quote(x, present))}
    differences = []
    if [_squash(x) for x in found] == [_squash(x) for x in old_lines]:
        differences.append("it differs from old_text only in whitespace")
    if [_squash(x) for x in found] == [_squash(strays[x][1] if x in strays else x) for x in old_lines]:
        escaped = json.dumps("\n".join(found), ensure_ascii=False)[1:-1]  # without the quotes: they got copied
        if len(escaped) <= EXACT_CHARS:  # what to send, ready to copy: a small model cannot count tabs
            reread = (  # on a line of its own: a quoting character around it got copied too
                "Those lines are exactly (escaped as inside a JSON string, on the next line):\n"
                f"{escaped}\nSend that as old_text, and indent new_text the same way."
            )
    elif region.last - region.first < SMALL_REGION:  # a line or few: give them, ready to copy
        escaped = json.dumps("\n".join(found), ensure_ascii=False)[1:-1]
        if len(escaped) <= EXACT_CHARS:  # told only to re-read, a model gives up (docs/DECISIONS.md)
            reread = (
                "The file's lines there are exactly (escaped as inside a JSON string, on the next line):\n"
                f"{escaped}\nIf they are the text you mean to change, send them as old_text; else re-read "
                f"the file with read_file(path={name!r})."
            )
    indentation = _indentation_difference(found, old_lines)
    if indentation:
        differences.append(indentation)
    for line, (where, cleaned) in strays.items():
        char = line.strip()[-1 if where == "end" else 0]
        differences.append(
            f"old_text line {line.strip()!r} has a stray {char!r} at its {where}; "
            f"the file's line is {present[_squash(cleaned)]!r}"
        )
    missing = [x.strip() for x in old_lines if _squash(x) and _squash(x) not in present and x not in strays]
    if missing:
        quoted = "; ".join(repr(x[:80]) for x in missing[:3])
        more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
        differences.append(f"these lines of old_text are not there: {quoted}{more}")
    detail = f": {'; '.join(differences)}" if differences else ""
    return Feedback(
        f"old_text not found in {name}. The closest region is lines {region.first}-{region.last} "
        f"({region.similarity:.0%} similar), shown above{detail}. {reread}",
        output=f"{name}, lines {region.first}-{region.last} as they are now:\n" + numbered(found, region.first),
        metadata={"closest_first_line": region.first, "closest_last_line": region.last},
    )


def _line_breaks_kept(text: str, spans: list[Span]) -> tuple[list[Span], str]:
    """The spans with the line break at a replaced line's end kept as the file has it, and what
    was done ('' nothing): old_text that stops before a line's break with new_text ending in one
    would add a blank line (seen: `timeout = 5` to `timeout = 30\n`, a 1.5B model's edit), and
    old_text ending in a line's break with new_text not would join the next line onto it. Not
    for a new_text that is only line breaks (a line removed), nor one that ends in a blank line."""
    kept, done = [], ""
    for start, end, replacement in spans:
        matched, after = text[start:end], text[end : end + 1]  # what old_text matched (maybe forgivingly)
        if replacement.strip() and not matched.endswith("\n") and replacement.endswith("\n"):
            if after == "\n" or text[end : end + 2] == "\r\n":
                ending = "\r\n" if replacement.endswith("\r\n") else "\n"
                if not replacement[: -len(ending)].endswith("\n") and replacement[: -len(ending)] != matched:
                    replacement, done = replacement[: -len(ending)], LINE_BREAK_NOT_ADDED
        elif replacement.strip() and matched.endswith("\n") and not replacement.endswith("\n"):
            if after and after not in "\r\n":
                ending = "\r\n" if matched.endswith("\r\n") else "\n"
                replacement, done = replacement + ending, LINE_BREAK_NOT_DROPPED
        kept.append((start, end, replacement))
    return kept, done


LINE_BREAK_NOT_ADDED = (
    "new_text's final line break was taken as the line's own, which old_text left out: no blank line added"
)
LINE_BREAK_NOT_DROPPED = (
    "old_text's final line break was kept, which new_text left out: the next line was not joined on"
)


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


@tool
async def edit_file(
    path: str, old_text: str, new_text: str, ctx: ToolContext, replace_all: bool = False
) -> pb.ToolResult:
    """Replace exact text in a file; the result shows the unified diff.

    old_text must match the file exactly, whitespace and indentation included, and occur once
    (or set replace_all). Copy it from read_file's output without the line-number prefix.

    Args:
        path: file path relative to the workspace root
        old_text: the exact text to replace, with enough surrounding lines to be unique
        new_text: the replacement text
        replace_all: replace every occurrence instead of exactly one
    """
    return await run_bounded(
        lambda: resolve_and(ctx, path, lambda target: _edit(ctx, target, path, old_text, new_text, replace_all))
    )


@check_of(edit_file)
async def edit_file_fails(path: str, old_text: str, new_text: str, ctx: ToolContext, replace_all: bool = False) -> None:
    """edit_file's own checks, nothing written: raises the Feedback the edit would end with (a
    path that is not there, old_text not found or not unique, a file changed since read)."""
    await run_bounded(
        lambda: resolve_and(ctx, path, lambda target: _planned(ctx, target, path, old_text, new_text, replace_all))
    )


@dataclass
class _Plan:
    text: str  # the file's text now
    new: str  # its text after the edit
    at_lines: list[int]  # where old_text starts, each occurrence replaced
    note: str  # how old_text was matched when not exactly


def _planned(ctx: ToolContext, target: Path, path: str, old_text: str, new_text: str, replace_all: bool) -> _Plan:
    """The edit worked out, or the Feedback it fails with; nothing written (the caller holds the
    path's lock when it writes)."""
    check_readable(ctx, target, path)  # a missing path first, with its did-you-mean
    check_writable(ctx, target, path)
    name = shown(ctx, target)
    if not old_text:
        raise Feedback(
            "old_text is empty; to create or overwrite a whole file use write_file, to insert text "
            "include a neighbouring line in old_text and in new_text"
        )
    if old_text == new_text:
        raise Feedback("old_text and new_text are the same, so there is nothing to change")
    encode_text(new_text, "new_text")
    data = read_whole(ctx, target, path, read=False)
    text = decode_text(ctx, target, data)
    check_fresh(ctx, target, data)
    spans, note = find_occurrences(text, old_text, new_text, by_indentation=not replace_all)
    if not spans:
        raise _not_found(ctx, target, data, text, old_text)
    spans, kept = _line_breaks_kept(text, spans)
    note = f"{note} ({kept})" if kept else note
    count = len(spans)
    at_lines = [_line_of(text, start) for start, _, _ in spans]
    if count > 1 and not replace_all:
        raise Feedback(
            f"old_text occurs {count} times in {name}, at lines {', '.join(map(str, at_lines))}; "
            "include more surrounding lines in old_text so it matches exactly once, or set "
            f"replace_all=true to replace all {count}"
        )
    pieces, done = [], 0
    for start, end, replacement in spans if replace_all else spans[:1]:
        pieces += [text[done:start], replacement]
        done = end
    return _Plan(text, "".join([*pieces, text[done:]]), at_lines, note)


def _edit(ctx: ToolContext, target: Path, path: str, old_text: str, new_text: str, replace_all: bool) -> pb.ToolResult:
    with path_lock(str(target)):
        plan = _planned(ctx, target, path, old_text, new_text, replace_all)
        encoded = plan.new.encode("utf-8")
        write_checked(ctx, target, path, encoded)
        remember(ctx, target, encoded)
    name = shown(ctx, target)
    diff = unified_diff(plan.text, plan.new, name)
    at_lines = plan.at_lines
    where = f"line {at_lines[0]}" if len(at_lines) == 1 else f"lines {', '.join(map(str, at_lines))}"
    occurrences = "1 occurrence" if len(at_lines) == 1 else f"{len(at_lines)} occurrences"
    result = pb.ToolResult(output=f"edited {name}: replaced {occurrences} at {where}{plan.note}\n{diff}")
    result.metadata.update({"path": name, **diff_metadata(diff)})
    return result


__all__ = ["Region", "closest_region", "edit_file"]
