"""Paths the model gives: confined to the workspace (and, for reading, the read roots), shown
workspace-relative, and OS errors on them explained with "did you mean" candidates from the real tree.
"""

from __future__ import annotations

import difflib
import errno
import functools
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from workbench.core.feedback import Feedback
from workbench.core.regular_files import read_regular
from workbench.core.safe_text import path_text
from workbench.tools.arguments import shorten
from workbench.tools.files.bounded import LONG_PATH_PARTS, may_take_long
from workbench.tools.files.confined import PathChanged
from workbench.tools.files.walk import NotRegularFile, WalkStats, ignore_for, walk
from workbench.tools.registry import ToolContext
from workbench.tools.skills import readable_skill_folders

SUGGEST_SCAN = 20_000  # entries walked to find "did you mean" candidates
NAME_MAX = 255  # bytes in one file name, on Linux and macOS file systems
PATH_MAX = 4096  # bytes in a whole path, on Linux
CHANGED_RETRIES = 3  # a path that changes under us this many times in a row is given up on
TWIN_BYTES = 200_000  # an existing file larger than this is not compared with a new one
TWIN_SIMILARITY = 0.5  # a new file with this share of its lines in an existing one at its path's tail: meant for it

T = TypeVar("T")


# --- paths and confinement ------------------------------------------------------------------


@functools.lru_cache(maxsize=64)
def _real(folder: Path) -> Path:
    return folder.resolve()


def workspace_root(ctx: ToolContext) -> Path:
    """The workspace with its symlinks resolved (cached: it does not move during a session)."""
    return _real(ctx.workspace)


def shown(ctx: ToolContext, path: Path) -> str:
    """How to name a path to the model: workspace-relative when inside, else absolute; a name's
    byte that is not UTF-8 shown as `\\xe9` (core/safe_text.path_text: a result's text is UTF-8)."""
    root, text = str(workspace_root(ctx)), str(path)
    if text == root:
        return "."
    if text.startswith(root + os.sep):
        return path_text(text[len(root) + 1 :])
    return path_text(text)


def inside(path: Path, root: Path) -> bool:
    """Whether `path` is `root` or lies below it (both already resolved)."""
    text, base = str(path), str(root)
    return text == base or text.startswith(base.rstrip(os.sep) + os.sep)


def read_roots(ctx: ToolContext) -> list[Path]:
    """Folders outside the workspace that may be read: saved outputs, skills, `read_roots`."""
    roots = [ctx.outputs_dir.resolve()]
    roots += [Path(p).expanduser().resolve() for p in ctx.settings.read_roots]
    roots += readable_skill_folders(ctx.settings)
    return roots


def allowed(ctx: ToolContext) -> Callable[[Path], bool]:
    """A test of whether a resolved path lies in the workspace or a read root (for symlinks met on a walk)."""
    roots = [workspace_root(ctx), *read_roots(ctx)]
    return lambda p: any(inside(p, r) for r in roots)


def allows(ctx: ToolContext, *, read: bool) -> Callable[[Path], bool]:
    """Whether a real path may be used: in the workspace, or with `read` also in a read root
    (looked up only for a path outside the workspace: listing the skills reads every SKILL.md)."""
    root = workspace_root(ctx)
    return lambda p: inside(p, root) or (read and any(inside(p, r) for r in read_roots(ctx)))


def _symlink_on_the_way(start: Path, raw: Path) -> Path | None:
    """The first symlink met when walking `raw` (relative to `start`) component by component."""
    current = Path(raw.anchor) if raw.is_absolute() else start
    for part in raw.parts[1:] if raw.is_absolute() else raw.parts:
        current = current / part
        if os.path.islink(current):
            return current
    return None


def _link_text(link: Path) -> str:
    try:
        return os.readlink(link)
    except OSError:  # it changed again since it was seen
        return "?"


def _kept_changing(path: str) -> Feedback:
    return Feedback(
        f"{shorten(path)} kept changing while it was being opened (a folder on the way was replaced, "
        "for example by a symlink); nothing was read or written. Check the path and try again"
    )


def _real_path(joined: str, given: str) -> Path:
    """`os.path.realpath`, which raises when a symlink on the way vanishes while it is being read."""
    for _ in range(CHANGED_RETRIES):
        try:
            return Path(os.path.realpath(joined))
        except OSError:
            continue
    raise _kept_changing(given)


def resolve_and(ctx: ToolContext, path: str, use: Callable[[Path], T], *, read: bool = False) -> T:
    """Resolve `path` (see `resolve`) and `use` the target; when the path changed between the two
    (confined.PathChanged: a folder swapped for a symlink), resolve it again, which refuses it if
    it now leads outside. A path that keeps changing is given up on with Feedback."""
    for _ in range(CHANGED_RETRIES):
        target = resolve(ctx, path, read=read)
        try:
            return use(target)
        except PathChanged:
            continue
    raise _kept_changing(path)


def resolve(ctx: ToolContext, path: str, *, read: bool = False) -> Path:
    """Resolve a path the model gave (symlinks followed), or refuse it with Feedback.

    Without `read`, the path must lead inside the workspace (for writing); with `read`, also
    inside the saved-output folder, the skill folders or the user's `read_roots`.
    """
    root = workspace_root(ctx)
    text = path.strip()
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > PATH_MAX:
        raise Feedback(
            f"the path is {size:,} bytes long ({shorten(text, 80)}); a path has at most {PATH_MAX:,} bytes. "
            "Check the path; relative paths start in the workspace"
        )
    if "\x00" in text:
        raise Feedback(
            f"the path {shorten(path)} contains a NUL character, which no file name can hold; check the path"
        )
    try:
        parts = [os.fsencode(part) for part in Path(text).parts]
    except UnicodeEncodeError as err:
        raise Feedback(
            f"the path {shorten(path)} holds a character that is not valid Unicode text ({text[err.start]!r}, "
            "a lone surrogate), which no file name can hold; check the path"
        ) from err
    too_long = next((part for part in parts if len(part) > NAME_MAX), None)
    if too_long is not None:
        raise Feedback(
            f"a name in the path is {len(too_long):,} bytes long ({os.fsdecode(too_long)[:40]!r}…); file names "
            f"have at most {NAME_MAX} bytes. Use a shorter name"
        )
    if len(parts) > LONG_PATH_PARTS:  # resolving takes time that grows with the square of the depth
        may_take_long()
    raw = Path(os.path.expanduser(text)) if text else Path(".")
    target = _real_path(os.path.join(root, raw), path)
    if inside(target, root):
        return target
    extra = read_roots(ctx) if read else []
    if any(inside(target, r) for r in extra):
        return target
    link = _symlink_on_the_way(root, raw)
    if link is not None:
        why = (
            f"{shorten(path)} goes through the symlink {shown(ctx, link)} -> {_link_text(link)}, "
            f"which leads to {target}, outside the workspace {root}"
        )
    else:
        why = f"{shorten(path)} resolves to {target}, outside the workspace {root}"
    if read:
        also = f"saved tool outputs ({ctx.outputs_dir}), skill folders"
        if ctx.settings.read_roots:
            also += ", " + ", ".join(str(p) for p in ctx.settings.read_roots)
        hint = f"Use a path inside the workspace (relative paths start there); reading is also allowed in {also}."
    else:
        writable_elsewhere = any(inside(target, r) for r in read_roots(ctx))
        hint = (
            "That folder may be read but not written; only the workspace is writable."
            if writable_elsewhere
            else "Use a path inside the workspace (relative paths start there)."
        )
    raise Feedback(f"Refused: {why}. {hint}")


# --- explaining failures --------------------------------------------------------------------


def mode_text(path: Path) -> str:
    """The mode and owner of `path` for a permission message; empty when it cannot be looked at."""
    try:
        st = path.stat()
    except OSError:
        return ""
    mode = stat.filemode(st.st_mode)
    return f" (mode {mode}, owner uid {st.st_uid}; the workbench runs as uid {os.geteuid()})"


def first_file_component(target: Path) -> Path | None:
    """For a not-a-directory failure: the ancestor of `target` that is a file."""
    for parent in reversed(target.parents):
        if parent.exists() and not parent.is_dir():
            return parent
    return None


def explain(ctx: ToolContext, err: OSError, target: Path, given: str, doing: str) -> Feedback:
    """Turn an OS error on `target` into Feedback that says what to do next."""
    name = shown(ctx, target)
    if isinstance(err, FileNotFoundError):
        message = missing_message(ctx, target, given)
    elif isinstance(err, NotRegularFile):
        message = (
            f"{name} is {err.kind}, not a regular file; the file tools only read and change regular "
            "files (reading a pipe or a device could block or never end)"
        )
    elif isinstance(err, IsADirectoryError):
        message = f"{name} is a directory, not a file; list it with ls(path={name!r})"
    elif isinstance(err, NotADirectoryError) or err.errno == errno.ENOTDIR:
        blocker = first_file_component(target)
        message = (
            f"{shown(ctx, blocker)} is a file, not a directory, so {name} cannot exist inside it; "
            f"check the path (read_file({shown(ctx, blocker)!r}) reads that file)"
            if blocker
            else f"a part of {name} is not a directory; check the path"
        )
    elif isinstance(err, PermissionError):
        where = target if target.exists() else target.parent
        message = (
            f"permission denied {doing} {name}{mode_text(where)}; the workbench may not do that. "
            f"Choose another path, or ask the person to change the permissions"
        )
    else:
        message = f"{doing} {name} failed: {err.strerror or err}"
    return Feedback(message)


def missing_message(ctx: ToolContext, target: Path, given: str) -> str:
    """Why `target` is not there: the nearest existing folder and "did you mean" candidates."""
    name = shown(ctx, target)
    message = f"{name} does not exist"
    parent = target.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if parent != target.parent:
        message += (
            f" (nor does its folder {shown(ctx, target.parent)}; the nearest existing folder is {shown(ctx, parent)})"
        )
    candidates = suggest(ctx, target)
    if len(candidates) == 1:
        # the call itself, not "use glob or ls": told to search, a model answers unread (docs/DECISIONS.md)
        ready = _with_path(ctx, given, candidates[0])
        return message + f"; did you mean {candidates[0]}?" + (f" Send {ready}" if ready else "")
    if candidates:
        return message + f"; did you mean one of: {', '.join(candidates)}? Send the call again with the one you mean"
    return message + NO_SIMILAR


NO_SIMILAR = "; nothing with a similar name exists. Use glob or ls to find the right path."


def _with_path(ctx: ToolContext, given: str, path: str) -> str:
    """The current call with the argument that held `given` set to `path`; '' when unknown."""
    key = next((k for k, v in ctx.call_args.items() if v == given), None)
    return ctx.call_with(**{key: path}) if ctx.call_name and key else ""


def resembled_twin(ctx: ToolContext, target: Path, data: bytes) -> tuple[str, bytes]:
    """For a new file written into folders the write created: an existing file at the same path
    without some of its leading folders (`src/slug.py` when `slug.py` is there) whose text the new
    one resembles (at least TWIN_SIMILARITY of its non-blank lines are lines of it, stripped): a
    small model wrote its fix of slug.py, or a guessed net.toml with its [net] line,
    to an invented src/ (issue 38). (shown workspace-relative, its bytes); ('', b'') when there is
    none. A new file that does not resemble it (a second README.md elsewhere) is no twin."""
    root = workspace_root(ctx)
    if len(data) > TWIN_BYTES or not inside(target, root):
        return "", b""
    new_lines = [line.strip() for line in data.decode("utf-8", errors="replace").splitlines() if line.strip()]
    if not new_lines:
        return "", b""
    for folder in target.parents:
        if not inside(folder, root):
            break
        if not folder.is_dir():
            continue
        below = target.relative_to(folder).parts
        for drop in range(1, len(below)):  # the file's name always stays
            twin = folder.joinpath(*below[drop:])
            try:
                old = read_regular(twin, TWIN_BYTES + 1)
            except OSError:
                continue
            if len(old) > TWIN_BYTES:
                continue
            present = {line.strip() for line in old.decode("utf-8", errors="replace").splitlines()}
            if sum(line in present for line in new_lines) >= TWIN_SIMILARITY * len(new_lines):
                return shown(ctx, twin), old
    return "", b""


def suggest(ctx: ToolContext, target: Path, limit: int = 5) -> list[str]:
    """Paths of the real tree close to a missing one: same name elsewhere, then similar paths."""
    may_take_long()  # a walk of up to SUGGEST_SCAN entries
    root = workspace_root(ctx)
    base = root if inside(target, root) else next((r for r in read_roots(ctx) if inside(target, r)), None)
    if base is None:
        return []
    rel = target.relative_to(base).as_posix()
    entries: list[str] = []
    stats = WalkStats()
    for entry_rel, _entry in walk(base, "", ignore_for(base, ""), stats, dirs=True, include_links=True):
        entries.append(entry_rel)
        if len(entries) >= SUGGEST_SCAN:
            break
    name = target.name.lower()
    by_name = [e for e in entries if e.rsplit("/", 1)[-1].lower() == name and e != rel]
    close = difflib.get_close_matches(rel, entries, n=limit, cutoff=0.6)
    names: dict[str, list[str]] = {}
    for e in entries:
        names.setdefault(e.rsplit("/", 1)[-1], []).append(e)
    close_names = difflib.get_close_matches(target.name, list(names), n=3, cutoff=0.75)
    by_close_name = [e for n in close_names for e in names[n]]
    found: list[str] = []
    for e in [*by_name, *close, *by_close_name]:
        if e not in found:
            found.append(e)
    prefix = "" if base == root else f"{base}/"
    return [prefix + e for e in found[:limit]]


__all__ = [
    "NO_SIMILAR",
    "allowed",
    "allows",
    "explain",
    "first_file_component",
    "inside",
    "missing_message",
    "mode_text",
    "read_roots",
    "resembled_twin",
    "resolve",
    "resolve_and",
    "shown",
    "suggest",
    "workspace_root",
]
