"""Walking a folder tree the way the file tools see it: `.git` and .gitignore'd entries left out
(and counted), symlinked folders not followed; and globs as regexes over '/'-separated paths.

Nothing here knows about the workspace or the model: `paths` confines, `files` decides what to show.
"""

from __future__ import annotations

import os
import re
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

from workbench.core.regular_files import READ_FLAGS, NotRegularFile, check_regular, read_opened, read_regular

IGNORE_FILE_BYTES = 1024 * 1024  # a .gitignore is read up to this size


def read_at(folder_fd: int, name: str, limit: int | None = None) -> bytes:
    """A regular file in an open folder, not following a symlink (see `read_regular`)."""
    return read_opened(os.open(name, READ_FLAGS | os.O_NOFOLLOW, dir_fd=folder_fd), name, limit)


@dataclass
class WalkStats:
    """What a walk found and passed over, for the note under a listing or a search."""

    files: int = 0
    ignored: int = 0
    ignored_names: list[str] = field(default_factory=list)
    outside: int = 0  # symlinks leading outside the allowed roots, skipped
    unreadable: int = 0
    binary: int = 0
    large: int = 0  # files too large to search

    def note_ignored(self, rel: str) -> None:
        self.ignored += 1
        if len(self.ignored_names) < 5:
            self.ignored_names.append(rel)


class Ignore:
    """The .gitignore rules in force in one folder, outermost first; the deepest match wins."""

    def __init__(self, layers: tuple[tuple[str, pathspec.GitIgnoreSpec], ...] = ()):
        self.layers = layers

    def child(self, folder: Path, rel: str) -> Ignore:
        """The rules inside `folder` (at `rel`), adding its own .gitignore if it has one."""
        try:
            data = read_regular(folder / ".gitignore", IGNORE_FILE_BYTES)
        except OSError:
            return self
        lines = data.decode("utf-8", errors="replace").splitlines()
        spec = pathspec.GitIgnoreSpec.from_lines(lines, backend="simple")
        _make_linear(spec)
        return Ignore((*self.layers, (rel, spec)))

    def ignored(self, rel: str, is_dir: bool) -> bool:
        for base, spec in reversed(self.layers):
            sub = rel[len(base) + 1 :] if base else rel
            decision = spec.check_file(f"{sub}/" if is_dir else sub).include
            if decision is not None:
                return decision
        return False


def _make_linear(spec: pathspec.GitIgnoreSpec) -> None:
    """Rewrite each pattern's regex so it matches in linear time (see `_atomic_stars`): a cloned
    repo's .gitignore line `*a*a*a*a*a*a*b` beside a long file name of a's would otherwise make
    every ls, glob and grep backtrack for ages, holding the GIL. The backend shares the patterns."""
    for pattern in spec.patterns:
        compiled = getattr(pattern, "regex", None)
        if isinstance(compiled, re.Pattern) and isinstance(compiled.pattern, str):
            try:
                pattern.regex = re.compile(_atomic_stars(compiled.pattern), compiled.flags)  # type: ignore[attr-defined]
            except re.error:
                pass


def _regex_tokens(text: str) -> list[str]:
    """A regex as pathspec writes it, in tokens: `[^/]*`, fixed ones (a literal, an escape, a
    [class]) and single characters that are neither (kept as they are)."""
    out: list[str] = []
    i = 0
    while i < len(text):
        if text.startswith(_STAR, i):
            out.append(_STAR)
            i += len(_STAR)
        elif text[i] == "\\" and i + 1 < len(text):
            out.append(text[i : i + 2])
            i += 2
        elif text[i] == "[":
            j = i + 1 + (text[i + 1 : i + 2] == "^")
            j += text[j : j + 1] == "]"
            while j < len(text) and text[j] != "]":
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
        else:
            out.append(text[i])
            i += 1
    return out


def _atomic_stars(text: str) -> str:
    """`[^/]*` + fixed tokens + `[^/]*` becomes `(?>[^/]*?fixed)[^/]*`, as in `_glob_part`."""
    tokens = _regex_tokens(text)
    out: list[str] = []
    i = 0
    while i < len(tokens):
        if tokens[i] == _STAR:
            j = i + 1
            while j < len(tokens) and _fixed_regex(tokens[j]):
                j += 1
            if j > i + 1 and j < len(tokens) and tokens[j] == _STAR:
                out.append(f"(?>{_STAR}?{''.join(tokens[i + 1 : j])})")
                i = j
                continue
        out.append(tokens[i])
        i += 1
    return "".join(out)


def _fixed_regex(token: str) -> bool:
    """A token that matches one character, never a '/' unless it is the literal '/': a literal,
    an escape, a [class]. (A class that may match '/', like [^a], is not: the earliest place the
    text fits is then not always as good as a later one.)"""
    if token in (_STAR, _GLOBSTAR, _SEGMENTS) or token.startswith("(?"):
        return False
    if token.startswith("["):
        negated = token.startswith("[^")
        return len(token) > 2 and token.endswith("]") and (("/" in token) == negated)
    if token.startswith("\\"):
        return len(token) == 2 and token[1] not in "AbBZzdDsSwW"
    return len(token) == 1 and token not in ".^$|?+*(){}[]"


def ignore_for(base: Path, rel_dir: str) -> Ignore:
    """The rules in force for the folder `rel_dir` below `base`, not counting its own .gitignore."""
    ignore = Ignore()
    try:
        exclude = read_regular(base / ".git" / "info" / "exclude", IGNORE_FILE_BYTES).decode("utf-8", "replace")
        spec = pathspec.GitIgnoreSpec.from_lines(exclude.splitlines(), backend="simple")
        _make_linear(spec)
        ignore = Ignore((("", spec),))
    except OSError:
        pass
    if not rel_dir:
        return ignore
    parts = rel_dir.split("/")
    ignore = ignore.child(base, "")
    for i in range(1, len(parts)):
        ignore = ignore.child(base / "/".join(parts[:i]), "/".join(parts[:i]))
    return ignore


def opened_path(fd: int) -> str | None:
    """Where an open file or folder really is; None where the system cannot say."""
    if sys.platform.startswith("linux"):
        try:
            return os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            return None
    if sys.platform == "darwin":
        import fcntl

        try:
            raw = fcntl.fcntl(fd, _F_GETPATH, b"\0" * 1024)
        except OSError:
            return None
        return os.fsdecode(raw.split(b"\0", 1)[0])
    return None


_F_GETPATH = 50  # fcntl.F_GETPATH on macOS
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC


@dataclass(frozen=True)
class Found:
    """An entry a walk gives, with its folder held open (valid until the walk moves on): read it
    relative to `folder_fd` and it is the file the walk listed, whatever the path names by then."""

    entry: os.DirEntry[str]
    folder: Path
    folder_fd: int

    @property
    def path(self) -> str:
        return os.path.join(self.folder, self.entry.name)


def walk(
    base: Path,
    rel_dir: str,
    ignore: Ignore | None,
    stats: WalkStats,
    *,
    dirs: bool = False,
    include_links: bool = False,
    allowed: Callable[[Path], bool] | None = None,
    stop: threading.Event | None = None,
) -> Iterator[tuple[str, Found]]:
    """Files (and folders with `dirs`) below `base/rel_dir` (base resolved), as (path relative
    to base, Found).

    `.git` and ignored entries are skipped (counted in `stats`); symlinked folders are not
    followed; a symlinked file is given only when `allowed` accepts where it leads. Each folder
    is opened and checked to be where the walk expects it before it is listed, so a folder
    swapped for a symlink during the walk is skipped (counted as leading outside), not entered.
    """
    stack: list[tuple[str, Ignore | None]] = [(rel_dir, ignore)]
    while stack:
        if stop is not None and stop.is_set():
            return
        rel, rules = stack.pop()
        folder = base / rel if rel else base
        try:
            fd = os.open(folder, _DIR_FLAGS)
        except OSError:
            stats.unreadable += 1
            continue
        try:
            real = opened_path(fd)
            if real is not None and real != str(folder):  # replaced by a symlink since it was listed
                stats.outside += 1
                continue
            if rules is not None:
                rules = rules.child(folder, rel)
            try:
                with os.scandir(fd) as it:
                    entries = sorted(it, key=lambda e: e.name, reverse=True)
            except OSError:
                stats.unreadable += 1
                continue
            yield from _entries(folder, fd, rel, entries, rules, stats, stack, dirs, include_links, allowed)
        finally:
            os.close(fd)


def _entries(
    folder: Path,
    fd: int,
    rel: str,
    entries: list[os.DirEntry[str]],
    rules: Ignore | None,
    stats: WalkStats,
    stack: list[tuple[str, Ignore | None]],
    dirs: bool,
    include_links: bool,
    allowed: Callable[[Path], bool] | None,
) -> Iterator[tuple[str, Found]]:
    """One folder's entries for `walk`; sub-folders go on the stack."""
    for entry in entries:
        sub = f"{rel}/{entry.name}" if rel else entry.name
        if entry.name == ".git":
            stats.note_ignored(sub)
            continue
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
            is_link = entry.is_symlink()
        except OSError:
            stats.unreadable += 1
            continue
        if rules is not None and rules.ignored(sub, is_dir):
            stats.note_ignored(sub + ("/" if is_dir else ""))
            continue
        found = Found(entry, folder, fd)
        if is_dir:
            if dirs:
                yield sub, found
            stack.append((sub, rules))
        elif is_link:
            if include_links:
                yield sub, found
                continue
            try:
                real = Path(os.path.realpath(found.path))  # not Path.resolve: it raises on a symlink loop
            except OSError:  # the link changed while it was followed
                stats.unreadable += 1
                continue
            if allowed is not None and not allowed(real):
                stats.outside += 1
            elif real.is_file():
                yield sub, found
        else:
            yield sub, found


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A glob as a regex over '/'-separated paths: `*` and `?` stay in one folder, `**` spans
    folders, `[abc]` and `{a,b}` as in shells.

    Matching takes linear time, like fnmatch's: a run of stars cannot backtrack into each other
    (`*a*a*a*a*b` against a long name of a's would otherwise take ages, holding the GIL).
    """
    return re.compile(_glob_part(pattern) + r"\Z", re.DOTALL)


_STAR, _GLOBSTAR, _SEGMENTS = "[^/]*", ".*", "(?:[^/]*/)*"


def _glob_tokens(pattern: str) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            if not out or out[-1] != _SEGMENTS:  # **/**/ means what **/ means, and backtracks less
                out.append(_SEGMENTS)
            i += 3
            continue
        if pattern.startswith("**", i):
            if not out or out[-1] != _GLOBSTAR:
                out.append(_GLOBSTAR)
            i += 2
            continue
        if c == "*":
            if not out or out[-1] not in (_STAR, _GLOBSTAR):
                out.append(_STAR)
        elif c == "?":
            out.append("[^/]")
        elif c == "[" and (end := pattern.find("]", i + 2)) != -1:
            inner = pattern[i + 1 : end]
            inner = "^" + inner[1:] if inner.startswith("!") else inner
            out.append(f"[{inner.replace(chr(92), chr(92) * 2)}]")
            i = end + 1
            continue
        elif c == "{" and (end := _closing_brace(pattern, i)) != -1:
            alternatives = _split_top(pattern[i + 1 : end])
            out.append("(?:" + "|".join(_glob_part(a) for a in alternatives) + ")")
            i = end + 1
            continue
        else:
            out.append(re.escape(c))
        i += 1
    return out


def _glob_part(pattern: str) -> str:
    """The tokens joined; a star, the fixed text after it and another star become
    `(?>[^/]*?fixed)`: the earliest place the fixed text fits is always as good as any later one
    when another star follows, so the group need not backtrack (fnmatch does the same)."""
    tokens = _glob_tokens(pattern)
    out: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token in (_STAR, _GLOBSTAR):
            j = i + 1
            while j < len(tokens) and _fixed_regex(tokens[j]):
                j += 1
            follows = tokens[j] if j < len(tokens) else None
            if j > i + 1 and (follows == _GLOBSTAR or (follows == _STAR and token == _STAR)):
                out.append(f"(?>{token}?{''.join(tokens[i + 1 : j])})")
                i = j
                continue
        out.append(token)
        i += 1
    return "".join(out)


def _closing_brace(pattern: str, start: int) -> int:
    depth = 0
    for j in range(start, len(pattern)):
        depth += {"{": 1, "}": -1}.get(pattern[j], 0)
        if depth == 0:
            return j
    return -1


def _split_top(inner: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for c in inner:
        if c == "," and depth == 0:
            parts.append(current)
            current = ""
            continue
        depth += {"{": 1, "}": -1}.get(c, 0)
        current += c
    return [*parts, current]


@dataclass
class Search:
    """Where a glob or grep looks: a start inside one root, how to show paths, what matches."""

    base: Path  # the root the rel paths are relative to (the workspace or another read root)
    rel_dir: str  # the start folder below base ("" for base itself)
    prefix: str  # prepended to rel paths to show them ("" in the workspace, "base/" elsewhere)
    ignore: Ignore | None
    name_only: bool = True  # the glob has no "/": match file names at any depth
    matcher: re.Pattern[str] | None = None

    def matches(self, rel: str) -> bool:
        if self.matcher is None:
            return True
        if self.name_only:
            return self.matcher.match(rel.rsplit("/", 1)[-1]) is not None
        sub = rel[len(self.rel_dir) + 1 :] if self.rel_dir else rel
        return self.matcher.match(sub) is not None


__all__ = [
    "READ_FLAGS",
    "Found",
    "Ignore",
    "NotRegularFile",
    "Search",
    "WalkStats",
    "check_regular",
    "glob_regex",
    "ignore_for",
    "opened_path",
    "read_at",
    "read_opened",
    "read_regular",
    "walk",
]
