"""File tools: read_file, write_file, edit_file, ls, glob, grep.

Every path the model gives is confined: it must resolve (symlinks followed) inside the
workspace. Reading is also allowed in the session's saved-output folder, the skill folders and
the extra roots of the person's user config (`read_roots`); writing only in the workspace.

Each tool explains its own failures: a missing path gets "did you mean" candidates from the
real tree, a failed edit names the closest region of the current file, a file that changed
since the agent read it is refused with a hint to re-read. `.git` and what `.gitignore`
ignores are left out of listings and searches unless the path names them.

Confinement and the explaining of path failures live in `paths`, tree walking and globs in `walk`.
"""

from __future__ import annotations

import asyncio
import difflib
import hashlib
import os
import re
import stat
import tempfile
import threading
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import regex

from workbench.feedback import Feedback
from workbench.pb import workbench_pb2 as pb
from workbench.tools import ToolContext, tool
from workbench.tools.paths import (
    allowed,
    explain,
    first_file_component,
    inside,
    missing_message,
    mode_text,
    read_roots,
    resolve,
    shown,
    workspace_root,
)
from workbench.tools.walk import Ignore, Search, WalkStats, glob_regex, ignore_for, read_regular, walk

PAGE_LINES = 2000  # default read_file page
FILE_MAX_BYTES = 64 * 1024 * 1024  # larger files are not read whole (read_file, edit_file, grep)
PAGE_BYTES = 256 * 1024  # a page never holds more (and never more than the output limit)
LINE_CHARS = 2000  # longer lines are cut in read_file
BINARY_SNIFF = 8192  # bytes looked at for NUL to call a file binary
LS_CAP = 500
GLOB_CAP = 200
GREP_CAP = 200  # matching lines shown
GREP_LINE_CHARS = 300
GREP_MATCH_SECONDS = 5.0  # one search of the pattern in one file may take this long
STATE_KEY = "files.seen"  # ctx.state: resolved path -> digest of the content the agent last saw

T = TypeVar("T")


# --- what the agent has seen ----------------------------------------------------------------


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _remember(ctx: ToolContext, target: Path, data: bytes) -> None:
    """Note the content the agent has seen (read or written) of a file."""
    ctx.state.setdefault(STATE_KEY, {})[str(target)] = _digest(data)


def _check_fresh(ctx: ToolContext, target: Path, data: bytes) -> None:
    """Refuse to change a file whose content differs from what the agent last read or wrote.

    The content is compared, not the time stamp: a file only touched is still fresh.
    """
    seen: str | None = ctx.state.get(STATE_KEY, {}).get(str(target))
    if seen is None or seen == _digest(data):
        return
    name = shown(ctx, target)
    raise Feedback(
        f"{name} changed on disk since you last read it (by another program, a command you ran, "
        f"or another agent); re-read it with read_file(path={name!r}) and base your change on "
        "its current content"
    )


# --- reading --------------------------------------------------------------------------------

_MAGIC = (
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"%PDF", "a PDF document"),
    (b"PK\x03\x04", "a ZIP archive (or a format built on it: jar, docx, xlsx, wheel)"),
    (b"\x7fELF", "an ELF executable or library"),
    (b"\x1f\x8b", "a gzip archive"),
    (b"SQLite format 3\x00", "an SQLite database"),
)


def _binary_kind(head: bytes) -> str | None:
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            return kind
    return "binary data (it contains NUL bytes)" if b"\x00" in head[:BINARY_SNIFF] else None


def _decode(ctx: ToolContext, target: Path, data: bytes) -> str:
    """The text of a file, or Feedback that says plainly why it is not shown."""
    kind = _binary_kind(data[:BINARY_SNIFF])
    name = shown(ctx, target) if kind else ""
    if kind is not None:
        raise Feedback(
            f"{name} is {kind}, {len(data):,} bytes; read_file shows text only and does not dump binary "
            "files. Inspect it with a command instead (for example `file`, `xxd | head`), if you have bash"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        name = shown(ctx, target)
        line = data.count(b"\n", 0, err.start) + 1
        column = err.start - (data.rfind(b"\n", 0, err.start) + 1) + 1
        raise Feedback(
            f"{name} is not valid UTF-8 text: byte 0x{data[err.start]:02x} at line {line}, column "
            f"{column}. It may use another encoding such as Latin-1; convert it with a command (for "
            f"example `iconv -f latin1 -t utf-8`), if you have bash"
        ) from err


def _read_bytes(ctx: ToolContext, target: Path, given: str, doing: str = "reading") -> bytes:
    """The whole file, or Feedback: the tools hold a file in memory, so a huge one is refused
    (a multi-GB log would exhaust memory and end the session) with a pointer to bash."""
    try:
        data = read_regular(target, FILE_MAX_BYTES + 1)
    except OSError as err:
        raise explain(ctx, err, target, given, doing) from err
    if len(data) > FILE_MAX_BYTES:
        name = shown(ctx, target)
        try:
            size = f"{_human(target.stat().st_size)}, "
        except OSError:
            size = ""
        raise Feedback(
            f"{name} is too large ({size}over {_human(FILE_MAX_BYTES)}) for the file tools, which hold a file "
            f"in memory. Look at parts of it with a command instead (for example `sed -n '1,200p' {name}`, "
            f"`tail -n 100 {name}`, `grep -n PATTERN {name}`), if you have bash"
        )
    return data


def _numbered(lines: list[str], first: int) -> str:
    out = []
    for n, line in enumerate(lines, first):
        if len(line) > LINE_CHARS:
            line = f"{line[:LINE_CHARS]}… [line cut: {len(line) - LINE_CHARS:,} more characters]"
        out.append(f"{n:>6}\t{line}")
    return "\n".join(out)


@tool(read_only=True)
async def read_file(path: str, ctx: ToolContext, offset: int = 1, limit: int = PAGE_LINES) -> str:
    """Read a text file as numbered lines (line number, a tab, then the line).

    A page holds at most `limit` lines and about 256 KB; the note at its end says how to read
    on. Also reads saved tool outputs and skill files.

    Args:
        path: file path relative to the workspace root (or absolute)
        offset: first line to read, 1-based; a negative number counts from the end (-20: the last 20 lines)
        limit: largest number of lines to read
    """
    if limit < 1:
        raise Feedback(f"limit must be at least 1 (a number of lines), got {limit}")
    target = resolve(ctx, path, read=True)
    data = _read_bytes(ctx, target, path)
    text = _decode(ctx, target, data)
    _remember(ctx, target, data)
    name = shown(ctx, target)
    lines = text.splitlines()
    total = len(lines)
    if total == 0:
        return f"({name} is empty: 0 lines)"
    start = offset if offset > 0 else max(total + offset + 1, 1)
    if start > total:
        raise Feedback(
            f"offset {offset} is past the end of {name}, which has {total:,} lines; use an offset from 1 to {total}"
        )
    budget = min(PAGE_BYTES, max(ctx.settings.output_limit - 400, 1000))
    page = lines[start - 1 : start - 1 + limit]
    if len(text) + 8 * len(page) > budget:  # the page may not fit: count line by line
        used, fits = 0, 0
        for line in page:
            used += min(len(line), LINE_CHARS + 40) + 8
            if fits and used > budget:
                break
            fits += 1
        page = page[:fits]
    body = _numbered(page, start)
    end = start + len(page) - 1
    if end < total:
        why = "" if len(page) == limit else f"; the page stopped at about {budget:,} characters"
        body += (
            f"\n[lines {start}-{end} of {total:,} shown{why}; read on with read_file(path={name!r}, offset={end + 1})]"
        )
    return body


# --- writing --------------------------------------------------------------------------------


def atomic_write(target: Path, content: str | bytes) -> None:
    """Write via a temporary file in the same folder, then rename: never a half-written file.

    An existing file keeps its permission bits; a new one gets the usual umask-based mode.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    data = content.encode("utf-8") if isinstance(content, str) else content
    # the temporary name stays short: a 250-byte file name plus a prefix and suffix would not fit
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name[:64]}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _check_readable(ctx: ToolContext, target: Path, given: str) -> None:
    if not target.exists():
        raise Feedback(missing_message(ctx, target, given))


def _check_writable(ctx: ToolContext, target: Path, given: str) -> None:
    name = shown(ctx, target)
    if target.is_dir():
        raise Feedback(
            f"{name} is a directory; give the path of a file (for example {name}/file.txt), or ls(path={name!r})"
        )
    blocker = first_file_component(target)
    if blocker is not None:
        raise Feedback(
            f"{shown(ctx, blocker)} is a file, not a directory, so {name} cannot be created inside it; check the path"
        )
    if target.exists() and not os.access(target, os.W_OK):
        raise Feedback(
            f"permission denied: {name} is read-only{mode_text(target)}; "
            "choose another path, or ask the person to make it writable"
        )


def _write(ctx: ToolContext, target: Path, given: str, content: str | bytes) -> None:
    try:
        atomic_write(target, content)
    except OSError as err:
        raise explain(ctx, err, target, given, "writing") from err


def _unified_diff(before: str, after: str, name: str) -> str:
    return "".join(
        difflib.unified_diff(before.splitlines(True), after.splitlines(True), f"a/{name}", f"b/{name}", n=3)
    ).replace("\\ No newline", "\n\\ No newline")


def _encode(text: str, what: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as err:
        raise Feedback(
            f"{what} holds a character that is not valid Unicode text at position {err.start} "
            f"({text[err.start]!r}, a lone surrogate); nothing was written. Send valid text"
        ) from err


def _line_count(text: str) -> int:
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


@tool
async def write_file(path: str, content: str, ctx: ToolContext) -> pb.ToolResult:
    """Write a whole file (create or overwrite), creating parent folders as needed.

    Prefer edit_file for changing part of an existing file.

    Args:
        path: file path relative to the workspace root
        content: the complete new content of the file
    """
    target = resolve(ctx, path)
    _check_writable(ctx, target, path)
    name = shown(ctx, target)
    before: str | None = None
    size = target.stat().st_size if target.is_file() else 0
    if size > FILE_MAX_BYTES:  # too large to hold for a diff; it cannot have been read either
        what = f"replaced {size:,} bytes"
    elif target.exists():
        old = _read_bytes(ctx, target, path, "reading")
        _check_fresh(ctx, target, old)
        try:
            before = old.decode("utf-8")
        except UnicodeDecodeError:
            before = None
        what = f"replaced {len(old):,} bytes"
    else:
        created = [p for p in target.parents if not p.exists() and inside(p, workspace_root(ctx))]
        what = "new file" + (f", created folder {shown(ctx, created[0])}" if created else "")
    data = _encode(content, "content")
    _write(ctx, target, path, data)
    _remember(ctx, target, data)
    result = pb.ToolResult(output=f"wrote {len(data):,} bytes, {_line_count(content):,} lines to {name} ({what})")
    result.metadata.update({"path": name, "diff": _unified_diff(before or "", content, name)})
    return result


# --- editing --------------------------------------------------------------------------------


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


def _not_found(ctx: ToolContext, target: Path, text: str, old_text: str) -> Feedback:
    name = shown(ctx, target)
    reread = (
        f"Re-read the file with read_file(path={name!r}) and copy old_text exactly from it "
        "(without the line-number prefix) before editing again."
    )
    old_lines = old_text.splitlines()
    if old_lines and all(_LINE_PREFIX.match(x) for x in old_lines if x.strip()):
        return Feedback(
            f"old_text not found in {name}: it starts its lines with read_file's line numbers "
            f"(like {old_lines[0][:12]!r}); those are not part of the file. {reread}"
        )
    region = closest_region(text, old_text)
    if region is None or region.similarity < 0.3:
        return Feedback(
            f"old_text not found in {name}, and no part of the file resembles it; check that this "
            f"is the file you mean. {reread}"
        )
    lines = text.splitlines()
    found = lines[region.first - 1 : region.last]
    differences = []
    if [_squash(x) for x in found] == [_squash(x) for x in old_lines]:
        differences.append("it differs from old_text only in whitespace")
    file_tabs = any(x.startswith("\t") for x in found)
    want_tabs = any(x.startswith("\t") for x in old_lines)
    if file_tabs and not want_tabs:
        differences.append("the file indents with tabs where old_text uses spaces")
    elif want_tabs and not file_tabs and any(x.startswith(" ") for x in found):
        differences.append("the file indents with spaces where old_text uses tabs")
    present = {_squash(x) for x in found}
    missing = [x.strip() for x in old_lines if _squash(x) and _squash(x) not in present]
    if missing:
        quoted = "; ".join(repr(x[:80]) for x in missing[:3])
        more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
        differences.append(f"these lines of old_text are not there: {quoted}{more}")
    detail = f": {'; '.join(differences)}" if differences else ""
    return Feedback(
        f"old_text not found in {name}. The closest region is lines {region.first}-{region.last} "
        f"({region.similarity:.0%} similar), shown above{detail}. {reread}",
        output=f"{name}, lines {region.first}-{region.last} as they are now:\n" + _numbered(found, region.first),
        metadata={"closest_first_line": region.first, "closest_last_line": region.last},
    )


def _occurrences(text: str, old_text: str, new_text: str) -> tuple[list[tuple[int, int, str]], str]:
    """Where old_text occurs in text, as (start, end, replacement), and a note on how it matched.

    Exact first. Else, when the file has CR line endings, ignoring CRLF/LF differences line by
    line (the model sees read_file's lines without their endings, so it cannot copy them; a file
    with mixed endings could not be edited otherwise); new_text then takes the matched
    region's ending. Else old_text in the file's Unicode normalization (é as one character or
    as e and a combining accent look the same to the model but differ as text).
    """
    spans = [(m.start(), m.end(), new_text) for m in re.finditer(re.escape(old_text), text)]
    if spans:
        return spans, ""
    if ("\r" in text or "\r" in old_text) and "\n" in old_text:
        lines = old_text.replace("\r\n", "\n").split("\n")
        pattern = re.compile(r"\r?\n".join(re.escape(line) for line in lines))
        unix_new = new_text.replace("\r\n", "\n")
        for m in pattern.finditer(text):
            eol = "\r\n" if "\r\n" in m.group() else "\n"
            spans.append((m.start(), m.end(), unix_new.replace("\n", eol)))
        if spans:
            mixed = any("\r\n" in m.group() and re.search(r"(?<!\r)\n", m.group()) for m in pattern.finditer(text))
            how = "ignoring its mixed CRLF and LF line endings" if mixed else "with the file's CRLF line endings"
            return spans, f" (matched {how})"
    for form in ("NFC", "NFD"):
        normal = unicodedata.normalize(form, old_text)
        if normal != old_text and normal in text:
            replacement = unicodedata.normalize(form, new_text)
            spans = [(m.start(), m.end(), replacement) for m in re.finditer(re.escape(normal), text)]
            return spans, f" (matched in the file's Unicode normalization form {form})"
    return [], ""


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
    target = resolve(ctx, path)
    name = shown(ctx, target)
    if not old_text:
        raise Feedback(
            "old_text is empty; to create or overwrite a whole file use write_file, to insert text "
            "include a neighbouring line in old_text and in new_text"
        )
    if old_text == new_text:
        raise Feedback("old_text and new_text are the same, so there is nothing to change")
    _check_readable(ctx, target, path)
    _check_writable(ctx, target, path)
    data = _read_bytes(ctx, target, path)
    text = _decode(ctx, target, data)
    _check_fresh(ctx, target, data)
    spans, note = _occurrences(text, old_text, new_text)
    if not spans:
        raise _not_found(ctx, target, text, old_text)
    count = len(spans)
    at_lines = [_line_of(text, start) for start, _, _ in spans]
    if count > 1 and not replace_all:
        raise Feedback(
            f"old_text occurs {count} times in {name}, at lines {', '.join(map(str, at_lines))}; "
            "include more surrounding lines in old_text so it matches exactly once, or set "
            f"replace_all=true to replace all {count}"
        )
    _encode(new_text, "new_text")
    pieces, done = [], 0
    for start, end, replacement in spans if replace_all else spans[:1]:
        pieces += [text[done:start], replacement]
        done = end
    new = "".join([*pieces, text[done:]])
    encoded = new.encode("utf-8")
    _write(ctx, target, path, encoded)
    _remember(ctx, target, encoded)
    diff = _unified_diff(text, new, name)
    where = f"line {at_lines[0]}" if len(at_lines) == 1 else f"lines {', '.join(map(str, at_lines))}"
    occurrences = "1 occurrence" if len(at_lines) == 1 else f"{len(at_lines)} occurrences"
    result = pb.ToolResult(output=f"edited {name}: replaced {occurrences} at {where}{note}\n{diff}")
    result.metadata.update({"path": name, "diff": diff})
    return result


# --- what ls, glob and grep share -----------------------------------------------------------


def _search(ctx: ToolContext, path: str, pattern: str | None) -> tuple[Search, Path]:
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
        raise Feedback(missing_message(ctx, start, path))
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
        search.name_only = "/" not in pattern
        try:
            search.matcher = glob_regex(pattern)
        except re.error as err:
            raise Feedback(f"invalid glob {pattern!r}: {err}") from err
    return search, start


async def _in_thread(fn: Callable[[threading.Event], T]) -> T:
    """Run blocking work in a thread; a cancelled call tells it to stop at the next file."""
    stop = threading.Event()
    try:
        return await asyncio.to_thread(fn, stop)
    except asyncio.CancelledError:
        stop.set()
        raise


def _fit(lines: list[str], cap: int, ctx: ToolContext) -> list[str]:
    """The first lines that stay within `cap` lines and the output limit (leaving room for a note)."""
    budget = max(ctx.settings.output_limit - 400, 1000)
    used = 0
    for i, line in enumerate(lines[:cap]):
        used += len(line) + 1
        if used > budget and i > 0:
            return lines[:i]
    return lines[:cap]


def _count(n: int, one: str, many: str = "") -> str:
    return f"{n:,} {one if n == 1 else many or one + 's'}"


def _place(where: str) -> str:
    return "the workspace" if where == "." else where


def _skipped_note(stats: WalkStats) -> str:
    notes = []
    if stats.ignored:
        names = ", ".join(stats.ignored_names)
        more = ", …" if stats.ignored > len(stats.ignored_names) else ""
        notes.append(
            f"{_count(stats.ignored, 'entry', 'entries')} ignored (.git or .gitignore: {names}{more}); "
            "name one in path to search it"
        )
    if stats.outside:
        notes.append(f"{_count(stats.outside, 'symlink')} leading outside the workspace skipped")
    if stats.large:
        notes.append(f"{_count(stats.large, 'file')} over {_human(FILE_MAX_BYTES)} not searched (use grep in bash)")
    if stats.binary:
        notes.append(f"{_count(stats.binary, 'binary file')} not searched")
    if stats.unreadable:
        notes.append(f"{_count(stats.unreadable, 'unreadable entry', 'unreadable entries')} skipped")
    return "[" + "; ".join(notes) + "]" if notes else ""


# --- ls, glob, grep -------------------------------------------------------------------------


def _human(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{int(size)} B" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


@tool(read_only=True)
async def ls(ctx: ToolContext, path: str = ".") -> str:
    """List one folder: sub-folders first (ending in /), then files with their sizes.

    `.git` and entries that .gitignore ignores are left out (a note says how many).

    Args:
        path: folder relative to the workspace root
    """
    return _list_folder(ctx, resolve(ctx, path, read=True), path)


def _list_folder(ctx: ToolContext, target: Path, path: str) -> str:
    name = shown(ctx, target)
    if not target.exists():
        raise Feedback(missing_message(ctx, target, path))
    if not target.is_dir():
        return f"{name} is a file ({_human(target.stat().st_size)}); read it with read_file(path={name!r})"
    root = workspace_root(ctx)
    base = root if inside(target, root) else next(r for r in read_roots(ctx) if inside(target, r))
    rel = "" if target == base else target.relative_to(base).as_posix()
    ignore = ignore_for(base, rel)
    if rel and ignore.ignored(rel, True):
        ignore = Ignore()
    ignore = ignore.child(target, rel)
    try:
        with os.scandir(target) as it:
            entries = list(it)
    except OSError as err:
        raise explain(ctx, err, target, path, "listing") from err
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
                dest = os.readlink(entry.path)
            except OSError:
                dest = "?"
            real = Path(os.path.realpath(entry.path))  # not Path.resolve: it raises on a symlink loop
            where = "" if is_allowed(real) else " (outside the workspace)"
            broken = "" if real.exists() else " (broken)"
            files.append(f"{entry.name} -> {dest}{where}{broken}")
        elif is_dir:
            folders.append(entry.name + "/")
        else:
            try:
                files.append(f"{entry.name}  ({_human(entry.stat(follow_symlinks=False).st_size)})")
            except OSError:
                files.append(entry.name)
    listing = sorted(folders, key=str.lower) + sorted(files, key=str.lower)
    if not listing and not stats.ignored:
        return f"{name} is an empty folder"
    out = _fit(listing, LS_CAP, ctx)
    if len(listing) > len(out):
        out.append(f"[{len(listing) - len(out):,} more entries not shown; use glob to narrow down]")
    if stats.ignored:
        shown_names = ", ".join(stats.ignored_names) + (", …" if stats.ignored > 5 else "")
        out.append(
            f"[{_count(stats.ignored, 'ignored entry', 'ignored entries')} not shown "
            f"(.git or .gitignore): {shown_names}; "
            "give their path to look inside]"
        )
    return "\n".join(out)


@tool(read_only=True)
async def glob(pattern: str, ctx: ToolContext, path: str = ".") -> str:
    """Find files by name pattern; sorted paths, at most 200.

    A pattern without "/" matches file names at any depth ("*.py"); one with "/" matches the
    path below `path` ("src/**/*.go": ** spans folders, * stays in one). `{a,b}` and `[abc]`
    work too. `.git` and .gitignore'd files are left out.

    Args:
        pattern: glob pattern, e.g. "**/*.py", "*.{ts,tsx}", "tests/test_*.py"
        path: folder to search below, relative to the workspace root
    """
    search, start = _search(ctx, path, pattern)

    def run(stop: threading.Event) -> tuple[list[str], WalkStats]:
        stats = WalkStats()
        found = [
            search.prefix + rel
            for rel, _ in walk(search.base, search.rel_dir, search.ignore, stats, allowed=allowed(ctx), stop=stop)
            if search.matches(rel)
        ]
        return sorted(found), stats

    found, _ = await _in_thread(run)
    where = shown(ctx, start)
    if not found:
        hidden = await _in_thread(lambda stop: _ignored_matches(ctx, search, stop))
        message = f"no files match {pattern!r} in {_place(where)}"
        if hidden:
            message += (
                f"; {_count(len(hidden), 'ignored file')} would match, e.g. {', '.join(hidden[:3])} "
                "(give an ignored folder as path to search it)"
            )
        if "/" in pattern:
            message += "; a pattern without / matches file names at any depth, with / ** spans folders"
        return message
    out = _fit(found, GLOB_CAP, ctx)
    if len(found) > len(out):
        out.append(f"[{len(found) - len(out):,} more files match; narrow the pattern or the path]")
    return "\n".join(out)


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


class _TooLarge(Exception):
    """A file over FILE_MAX_BYTES: grep skips it (and says so) rather than hold it in memory."""


class _SlowPattern(Exception):
    """One search of the pattern ran past GREP_MATCH_SECONDS (catastrophic backtracking)."""

    def __init__(self, path: str):
        super().__init__(path)
        self.path = path


def _grep_file(path: str, matcher: Any) -> list[tuple[int, str]] | None:
    """Matching lines of one file as (line number, line); None for a binary file.

    `matcher` is compiled by the `regex` engine: each search releases the GIL and stops after
    GREP_MATCH_SECONDS, so a pattern that backtracks catastrophically ((a+)+$ on a long line)
    neither freezes the whole process nor runs on forever; it raises _SlowPattern.
    """
    data = read_regular(path, FILE_MAX_BYTES + 1)
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
async def grep(pattern: str, ctx: ToolContext, path: str = ".", glob: str = "") -> str:
    """Search file contents with a regular expression; prints path:line:text, sorted, at most 200 lines.

    Python regex syntax, case-sensitive (start with (?i) to ignore case); ^ and $ match at
    line ends. Binary files, `.git` and .gitignore'd files are skipped.

    Args:
        pattern: regular expression, e.g. "def \\w+_test", "TODO|FIXME"
        path: file or folder to search, relative to the workspace root
        glob: only search files whose name matches this glob, e.g. "*.py" or "src/**/*.go"
    """
    try:
        re.compile(pattern, re.MULTILINE)  # Python's own syntax and error messages; `regex` then runs it
        matcher = regex.compile(pattern, regex.MULTILINE | regex.VERSION0)
    except (re.error, regex.error) as err:
        at = f" at position {err.pos}" if err.pos is not None else ""
        raise Feedback(
            f"invalid regular expression {pattern!r}: {err.msg}{at}. grep takes a Python regex; "
            r"to match ( ) [ ] { } . * + ? | \ literally, put a backslash before them (e.g. 'foo\(')"
        ) from err
    target = resolve(ctx, path or ".", read=True)
    try:
        if target.is_file():
            name = shown(ctx, target)
            try:
                lines = await _in_thread(lambda stop: _grep_file(str(target), matcher))
            except _TooLarge as err:
                raise Feedback(
                    f"{name} is too large (over {_human(FILE_MAX_BYTES)}) for grep, which holds a file in "
                    f"memory; search it with a command instead (`grep -n PATTERN {name}`), if you have bash"
                ) from err
            except OSError as err:
                raise explain(ctx, err, target, path, "reading") from err
            if lines is None:
                raise Feedback(f"{name} is a binary file; grep searches text files only")
            return _grep_report(ctx, {name: lines}, 1, WalkStats(), pattern, name)
        search, start = _search(ctx, path, glob)

        def run(stop: threading.Event) -> tuple[dict[str, list[tuple[int, str]]], int, WalkStats]:
            stats = WalkStats()
            results: dict[str, list[tuple[int, str]]] = {}
            searched = 0
            for rel, entry in walk(search.base, search.rel_dir, search.ignore, stats, allowed=allowed(ctx), stop=stop):
                if not search.matches(rel):
                    continue
                try:
                    lines = _grep_file(entry.path, matcher)
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
            return results, searched, stats

        results, searched, stats = await _in_thread(run)
    except _SlowPattern as err:
        raise Feedback(
            f"grep stopped: one search of {pattern!r} in {shown(ctx, Path(err.path))} took longer than "
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
) -> str:
    total = sum(len(v) for v in results.values())
    if total == 0:
        within = f" (files matching {glob!r})" if glob else ""
        message = f"no matches for {pattern!r} in {_place(where)}{within}; {_count(searched, 'file')} searched"
        if re.search(r"[A-Za-z]", pattern) and not pattern.startswith("(?i)"):
            message += "; the search is case-sensitive (start the pattern with (?i) to ignore case)"
        skipped = _skipped_note(stats)
        return message + (f"\n{skipped}" if skipped else "")
    out: list[str] = []
    for name in sorted(results):
        for line_no, line in results[name]:
            if len(out) >= GREP_CAP:
                break
            if len(line) > GREP_LINE_CHARS:
                line = line[:GREP_LINE_CHARS] + "…"
            out.append(f"{name}:{line_no}:{line}")
    out = _fit(out, GREP_CAP, ctx)
    if total > len(out):
        out.append(
            f"[{total - len(out):,} more matching lines not shown ({total:,} in "
            f"{_count(len(results), 'file')}); narrow the search with path, glob or a more specific pattern]"
        )
    if stats.large:
        out.append(f"[{_count(stats.large, 'file')} over {_human(FILE_MAX_BYTES)} not searched (use grep in bash)]")
    return "\n".join(out)


__all__ = [
    "atomic_write",
    "closest_region",
    "edit_file",
    "glob",
    "grep",
    "ls",
    "read_file",
    "write_file",
]
