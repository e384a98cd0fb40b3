"""File tools that read and write: read_file, write_file (edit_file is in `edit`, ls and glob in
`listing`, grep in `grep`).

Every path the model gives is confined: it must resolve (symlinks followed) inside the
workspace. Reading is also allowed in the session's saved-output folder, the skill folders and
the extra roots of the person's user config (`read_roots`); writing only in the workspace.

Each tool explains its own failures: a missing path gets "did you mean" candidates from the
real tree, a file that changed since the agent read it is refused with a hint to re-read.
Confinement and the explaining of path failures live in `paths`, tree walking in `walk`.
"""

from __future__ import annotations

import difflib
import hashlib
import os
from pathlib import Path

from workbench.core.feedback import Feedback
from workbench.pb import workbench_pb2 as pb
from workbench.tools.files.bounded import LONG_BYTES, may_take_long, path_lock, run_bounded
from workbench.tools.files.confined import existing_mode, open_folder, read_checked, write_in_folder
from workbench.tools.files.paths import (
    allows,
    explain,
    first_file_component,
    inside,
    missing_message,
    mode_text,
    resembled_twin,
    resolve_and,
    shown,
    workspace_root,
)
from workbench.tools.registry import ToolContext, tool

PAGE_LINES = 2000  # default read_file page
FILE_MAX_BYTES = 64 * 1024 * 1024  # larger files are not read whole (read_file, edit_file, grep)
PAGE_BYTES = 256 * 1024  # a page never holds more (and never more than the output limit)
LINE_CHARS = 2000  # longer lines are cut in read_file
BINARY_SNIFF = 8192  # bytes looked at for NUL to call a file binary
DIFF_METADATA_CHARS = 64 * 1024  # the diff in a result's metadata (for the TUI) is cut here
BLIND_LINES = 40  # lines an unread file lost to a whole write, shown at most
STATE_KEY = "files.seen"  # ctx.state: resolved path -> digest of the content the agent last saw


# --- what the agent has seen ----------------------------------------------------------------


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def remember(ctx: ToolContext, target: Path, data: bytes) -> None:
    """Note the content the agent has seen (read or written) of a file."""
    ctx.state.setdefault(STATE_KEY, {})[str(target)] = _digest(data)


def has_seen(ctx: ToolContext, target: Path) -> bool:
    """Whether the agent has read or written this file in this session."""
    return str(target) in ctx.state.get(STATE_KEY, {})


def check_fresh(ctx: ToolContext, target: Path, data: bytes) -> None:
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


def decode_text(ctx: ToolContext, target: Path, data: bytes) -> str:
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


def read_whole(ctx: ToolContext, target: Path, given: str, doing: str = "reading", *, read: bool = True) -> bytes:
    """The whole file, or Feedback: the tools hold a file in memory, so a huge one is refused
    (a multi-GB log would exhaust memory and end the session) with a pointer to bash.

    The file read is the one opened, checked to lie where reading is allowed (`read`) or, for a
    file about to be changed, in the workspace; a swap on the way raises confined.PathChanged."""
    try:
        data = read_checked(target, allows(ctx, read=read), FILE_MAX_BYTES + 1)
    except OSError as err:
        raise explain(ctx, err, target, given, doing) from err
    if len(data) > FILE_MAX_BYTES:
        name = shown(ctx, target)
        try:
            size = f"{human_size(target.stat().st_size)}, "
        except OSError:
            size = ""
        raise Feedback(
            f"{name} is too large ({size}over {human_size(FILE_MAX_BYTES)}) for the file tools, which hold a file "
            f"in memory. Look at parts of it with a command instead (for example `sed -n '1,200p' {name}`, "
            f"`tail -n 100 {name}`, `grep -n PATTERN {name}`), if you have bash"
        )
    return data


def numbered(lines: list[str], first: int) -> str:
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
    return await run_bounded(
        lambda: resolve_and(ctx, path, lambda target: _read_page(ctx, target, path, offset, limit), read=True)
    )


def _read_page(ctx: ToolContext, target: Path, path: str, offset: int, limit: int) -> str:
    data = read_whole(ctx, target, path)
    if limit < 1:
        raise Feedback(f"limit must be at least 1 (a number of lines), got {limit}")
    text = decode_text(ctx, target, data)
    remember(ctx, target, data)
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
    body = numbered(page, start)
    end = start + len(page) - 1
    if end < total:
        why = "" if len(page) == limit else f"; the page stopped at about {budget:,} characters"
        body += (
            f"\n[lines {start}-{end} of {total:,} shown{why}; read on with read_file(path={name!r}, offset={end + 1})]"
        )
    return body


# --- writing --------------------------------------------------------------------------------


def atomic_write(ctx: ToolContext, target: Path, data: bytes) -> None:
    """Write `target` (resolved, in the workspace) via a temporary file in its folder and a
    rename: never a half-written file. Missing folders are created; every step is taken
    relative to the checked folder (see `confined`). An existing file keeps its permission
    bits; a new one gets the usual umask-based mode."""
    folder = open_folder(workspace_root(ctx), target.parent, create=True)
    try:
        write_in_folder(folder, target.name, data, existing_mode(folder, target.name))
    finally:
        os.close(folder)


def check_readable(ctx: ToolContext, target: Path, given: str) -> None:
    if not target.exists():
        raise Feedback(missing_message(ctx, target, given))


def check_writable(ctx: ToolContext, target: Path, given: str) -> None:
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


def write_checked(ctx: ToolContext, target: Path, given: str, data: bytes) -> None:
    try:
        atomic_write(ctx, target, data)
    except OSError as err:
        raise explain(ctx, err, target, given, "writing") from err


def unified_diff(before: str, after: str, name: str) -> str:
    return "".join(
        difflib.unified_diff(before.splitlines(True), after.splitlines(True), f"a/{name}", f"b/{name}", n=3)
    ).replace("\\ No newline", "\n\\ No newline")


def diff_metadata(diff: str) -> dict[str, object]:
    """The change as the TUI shows it: the unified diff, cut at DIFF_METADATA_CHARS with a note."""
    if len(diff) <= DIFF_METADATA_CHARS:
        return {"diff": diff}
    cut = diff.rfind("\n", 0, DIFF_METADATA_CHARS) + 1 or DIFF_METADATA_CHARS
    note = f"[... diff cut: {len(diff) - cut:,} more characters of {len(diff):,} not shown]\n"
    return {"diff": diff[:cut] + note, "diff_cut": True, "diff_chars": len(diff)}


def encode_text(text: str, what: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as err:
        raise Feedback(
            f"{what} holds a character that is not valid Unicode text at position {err.start} "
            f"({text[err.start]!r}, a lone surrogate); nothing was written. Send valid text"
        ) from err


def _size_text(data: bytes) -> str:
    """'30 bytes, 1 line': the size of a file's content, as the write results say it."""
    lines = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    return f"{len(data):,} byte{'' if len(data) == 1 else 's'}, {lines:,} line{'' if lines == 1 else 's'}"


@tool
async def write_file(path: str, content: str, ctx: ToolContext) -> pb.ToolResult:
    """Write a whole file (create or overwrite), creating parent folders as needed.

    Prefer edit_file for changing part of an existing file. A file ends with a newline: one is
    added when content lacks it, unless the file being replaced ends without one.

    Args:
        path: file path relative to the workspace root
        content: the complete new content of the file
    """
    data = encode_text(content, "content")
    return await run_bounded(lambda: resolve_and(ctx, path, lambda target: _write_whole(ctx, target, path, data)))


def blind_note(ctx: ToolContext, target: Path, before: str | None, after: str) -> str:
    """For a whole write over a file the agent had not read or written in this session, the lines
    of it the write removed, numbered as they stood ('' when it removed none, was seen, or was not
    text): a model wrote a guessed config over the real one and lost its other settings unseen."""
    if before is None or has_seen(ctx, target):
        return ""
    kept = set(after.splitlines())
    lines = before.splitlines()
    removed = [(n, line) for n, line in enumerate(lines, 1) if line.strip() and line not in kept]
    if not removed:
        return ""
    listed = "\n".join(numbered([line], n) for n, line in removed[:BLIND_LINES])
    more = f"\n[{len(removed) - BLIND_LINES:,} more]" if len(removed) > BLIND_LINES else ""
    return (
        f"\nNote: you had not read {shown(ctx, target)}; this write removed {len(removed):,} of its "
        f"{len(lines):,} lines, which were:\n{listed}{more}\nIf any of them should stay, put them back."
    )


def with_final_newline(data: bytes, old: bytes | None) -> bytes:
    """`data` ending with a line break, as text files do, when it lacks one and the file it replaces
    (`old`, None: a new file or one too large to hold) is empty or ends with one: read_file shows
    numbered lines and never whether a final newline follows, so a model's whole copy of a file
    dropped it (a copy the eval checked byte for byte)."""
    if not data or data.endswith(b"\n") or (old and not old.endswith(b"\n")):
        return data
    return data + (b"\r\n" if b"\r\n" in (old or data) else b"\n")


def _write_whole(ctx: ToolContext, target: Path, path: str, data: bytes) -> pb.ToolResult:
    if len(data) > LONG_BYTES:
        may_take_long()
    check_writable(ctx, target, path)
    name = shown(ctx, target)
    before: str | None = None
    created, note = False, ""
    with path_lock(str(target)):
        try:
            size = target.stat().st_size
        except FileNotFoundError:
            size = -1
        except OSError as err:
            raise explain(ctx, err, target, path, "writing") from err
        if size > FILE_MAX_BYTES:  # too large to hold for a diff; it cannot have been read either
            what = f"replaced {size:,} bytes"
            data = with_final_newline(data, None)
        elif size >= 0:
            old = read_whole(ctx, target, path, "reading", read=False)
            check_fresh(ctx, target, old)
            data = with_final_newline(data, old)
            if old == data:  # no write: a rename would only change the file's time and inode
                remember(ctx, target, data)
                result = pb.ToolResult(
                    output=f"{name} unchanged: it already holds exactly this content ({_size_text(data)})"
                )
                result.metadata.update({"path": name, "unchanged": True})
                return result
            try:
                before = old.decode("utf-8")
            except UnicodeDecodeError:
                before = None
            what = f"replaced {len(old):,} bytes"
            note = blind_note(ctx, target, before, data.decode("utf-8"))
        else:
            created = True
            data = with_final_newline(data, None)
            new_folders = [p for p in target.parents if not p.exists() and inside(p, workspace_root(ctx))]
            what = "new file" + (f", created folder {shown(ctx, new_folders[0])}" if new_folders else "")
            twin, twin_data = resembled_twin(ctx, target, data) if new_folders else ("", b"")
            if twin and twin_data != data:  # the write goes on (a copy is no mistake): a note, no refusal
                note = (
                    f"\nNote: {twin} already exists and this new file is much like it; if you meant to change "
                    f"{twin}, write there instead: {ctx.call_with(path=twin)}"
                )
        write_checked(ctx, target, path, data)
        remember(ctx, target, data)
    text = data.decode("utf-8")  # encode_text made it from text
    result = pb.ToolResult(output=f"wrote {_size_text(data)} to {name} ({what}){note}")
    result.metadata.update({"path": name})
    if created:
        result.metadata.update({"created": True, **diff_metadata(unified_diff("", text, name))})
    elif before is not None:
        result.metadata.update(diff_metadata(unified_diff(before, text, name)))
    return result


def human_size(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{int(size)} B" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


__all__ = [
    "FILE_MAX_BYTES",
    "atomic_write",
    "check_fresh",
    "check_readable",
    "check_writable",
    "decode_text",
    "diff_metadata",
    "encode_text",
    "has_seen",
    "human_size",
    "numbered",
    "read_file",
    "read_whole",
    "remember",
    "unified_diff",
    "write_checked",
    "write_file",
]
