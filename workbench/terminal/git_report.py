"""What the sandbox left for the person's git: the report at the end of a session.

The sandbox protects the workspace's own repository as it was at the start (`protected.py`).
What it cannot stop is told to the person when the session ends: a repository made or changed
in the work tree (`git init`, a nested clone, a `.git` file naming another folder), and in it
every file git reads as configuration or as the way to another git folder, with what it holds:
the settings that run a command (`core.fsmonitor = touch x`), the first command of a hook, the
folder a pointer names. Git itself reads the configuration (`git config --file`), so what is
told is what git would do.
"""

from __future__ import annotations

import os
import stat
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from workbench.core.regular_files import kind_of, read_regular
from workbench.core.safe_text import printable
from workbench.terminal.protected import GIT_SELF_COMMONDIR, POINTER_BYTES, common_dir

SCAN_FOLDERS = 20_000  # folders looked at for git control files at the session's end, at most
SCAN_SKIPPED = frozenset({"node_modules", ".venv", "__pycache__"})
NESTED_DEPTH = 4  # modules/ and worktrees/ followed this deep
SHOWN = 10  # changes named in the notice, at most
HELD_CHARS = 200  # of what one file holds
# settings whose value git runs (or reads another config file from)
COMMAND_KEYS = (
    "core.fsmonitor",
    "core.hookspath",
    "core.sshcommand",
    "core.pager",
    "core.editor",
    "core.askpass",
    "core.gitproxy",
    "core.worktree",
    "sequence.editor",
    "credential.helper",
    "gpg.program",
    "include.path",
)
COMMAND_SUFFIXES = (".clean", ".smudge", ".process", ".textconv", ".command", ".driver", ".program")
COMMAND_PREFIXES = ("alias.", "pager.", "includeif.", "credential.", "remote.", "submodule.", "filter.", "diff.")
COMMAND_REMOTE_KEYS = (".uploadpack", ".receivepack", ".proxy", ".update", ".helper", ".path")


@dataclass(frozen=True)
class GitChange:
    """A git control file made or changed during the session, and what git would take from it."""

    path: Path
    holds: str  # "core.fsmonitor = touch x", "runs: curl …", "names ../evil"; "" when nothing of note


def git_changes(workspace: Path, since: float, protected: Path | None, folders: int = SCAN_FOLDERS) -> list[GitChange]:
    """Git control files in the workspace made or changed since `since` (a time.time()).

    Every `.git` in the work tree is looked at (bounded by `folders`), and through it every git
    folder git would read: a `.git` file's folder, its `commondir`, its `modules/` and
    `worktrees/`. `protected` (the `.git` the sandbox protected, `dot_git`) is left out unless it
    is a link, which could have been swapped; so is what Workbench itself made there.
    """
    found: dict[Path, GitChange] = {}
    for dot in _dot_gits(workspace, folders):
        if dot == protected and not dot.is_symlink():
            continue
        for path in _control_files(dot):
            if path in found:
                continue
            try:
                changed = os.lstat(path).st_ctime >= since
            except OSError:
                continue
            if changed and not _stand_in(path):
                found[path] = GitChange(path, _holds(path))
    return list(found.values())


def describe(changes: list[GitChange], workspace: Path) -> str:
    """The notice's list: each path (relative to the workspace where it is inside) and what it holds."""
    parts = []
    for change in changes[:SHOWN]:
        try:
            shown = str(change.path.relative_to(workspace))
        except ValueError:
            shown = str(change.path)
        parts.append(printable(f"{shown} ({change.holds})" if change.holds else shown))
    more = f" and {len(changes) - SHOWN} more" if len(changes) > SHOWN else ""
    return ", ".join(parts) + more


def _dot_gits(workspace: Path, folders: int) -> Iterator[Path]:
    seen = 0
    for top, dirs, _files in os.walk(workspace):
        seen += 1
        if seen > folders:
            return
        dirs[:] = sorted(d for d in dirs if d not in SCAN_SKIPPED and d != ".git")
        dot = Path(top) / ".git"
        if os.path.lexists(dot):
            yield dot


def _control_files(dot: Path) -> Iterator[Path]:
    """`dot` (a `.git` folder or file) and what git reads through it, following pointers."""
    if not dot.is_dir() or dot.is_symlink():
        yield dot  # a `.git` file or link names another folder
    start = _folder_named(dot)
    if start is None:
        return
    pending = [(start, 0)]
    done: set[Path] = set()
    while pending:
        gitdir, depth = pending.pop()
        if gitdir in done or not gitdir.is_dir():
            continue
        done.add(gitdir)
        for name in ("config", "config.worktree", "commondir", "gitdir", "info/attributes", "objects/info/alternates"):
            yield gitdir / name
        yield from _entries(gitdir / "hooks")
        common = common_dir(gitdir)
        if common != gitdir:
            pending.append((common, depth))
        if depth < NESTED_DEPTH:
            pending += [(nested, depth + 1) for nested in _git_folders_under(gitdir / "modules", NESTED_DEPTH)]
            pending += [(nested, depth + 1) for nested in _subfolders(gitdir / "worktrees")]


def _folder_named(dot: Path) -> Path | None:
    if dot.is_dir():
        return dot.resolve()
    try:
        first = read_regular(dot, POINTER_BYTES).decode(errors="replace").splitlines()[0]
    except (OSError, IndexError):
        return None
    if not first.startswith("gitdir:"):
        return None
    return (dot.parent / first.removeprefix("gitdir:").strip()).resolve()


def _git_folders_under(folder: Path, depth: int) -> list[Path]:
    """Submodules' git folders (each holds a HEAD), nested as their paths are (`modules/a/b`)."""
    found, pending = [], [(folder, 0)]
    while pending:
        here, level = pending.pop()
        for sub in _subfolders(here):
            if (sub / "HEAD").exists() or (sub / "config").exists():
                found.append(sub)
            if level < depth:
                pending.append((sub / "modules" if (sub / "modules").is_dir() else sub, level + 1))
    return found


def _subfolders(folder: Path) -> list[Path]:
    try:
        return [folder / e.name for e in os.scandir(folder) if e.is_dir(follow_symlinks=False)]
    except OSError:
        return []


def _entries(folder: Path) -> list[Path]:
    try:
        return [folder / name for name in os.listdir(folder) if not name.endswith(".sample")]
    except OSError:
        return []


def _stand_in(path: Path) -> bool:
    """What Workbench made to stand for a missing file (`protected._make_missing`), unchanged."""
    name = path.name
    try:
        if name == "commondir":
            return read_regular(path, POINTER_BYTES).decode() == GIT_SELF_COMMONDIR
        if name in ("config.worktree", "alternates", "gitdir"):
            return path.stat().st_size == 0
    except (OSError, UnicodeDecodeError):
        return False
    return False


def _holds(path: Path) -> str:
    """What git would take from `path`: the commands it would run, or the folder it would read."""
    name, parent = path.name, path.parent.name
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return ""
    if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):  # a FIFO could block the read, a device not end
        return f"{kind_of(mode)}, not read"
    if parent == "hooks":
        return _hook(path)
    text = _head(path)
    if name in ("commondir", "gitdir", "alternates", ".git"):
        first = next((line.strip() for line in text.splitlines() if line.strip()), "")
        return f"names {first.removeprefix('gitdir:').strip()}"[:HELD_CHARS] if first else ""
    if name == "attributes":
        lines = [line.strip() for line in text.splitlines() if "filter=" in line or "diff=" in line]
        return "; ".join(lines)[:HELD_CHARS]
    return "; ".join(f"{k} = {v}" for k, v in _command_settings(path))[:HELD_CHARS]


def _hook(path: Path) -> str:
    lines = [line.strip() for line in _head(path).splitlines()]
    first = next((line for line in lines if line and not line.startswith("#")), "")
    return f"runs: {first}"[:HELD_CHARS] if first else "a hook"


def _head(path: Path) -> str:
    try:
        return read_regular(path, 65536).decode(errors="replace")
    except OSError:
        return ""


def _command_settings(config: Path) -> list[tuple[str, str]]:
    """The settings in a config file whose value git runs, as git reads them (no includes)."""
    try:
        out = subprocess.run(
            ["git", "config", "--file", str(config), "--no-includes", "--null", "--list"],
            capture_output=True,
            timeout=10,
            stdin=subprocess.DEVNULL,
            env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull},
        ).stdout.decode(errors="replace")
    except (OSError, subprocess.SubprocessError):
        out = ""
    settings = []
    for item in out.split("\0"):
        key, _, value = item.partition("\n")
        if key and _runs(key.lower()):
            settings.append((key, value))
    if not out:  # git is missing or refused the file: the lines as written
        for line in _head(config).splitlines():
            key, sep, value = line.strip().partition("=")
            if sep and any(word in key.lower() for word in ("fsmonitor", "hookspath", "command", "program")):
                settings.append((key.strip(), value.strip()))
    return settings


def _runs(key: str) -> bool:
    if key in COMMAND_KEYS or key.endswith(COMMAND_SUFFIXES):
        return True
    if not key.startswith(COMMAND_PREFIXES):
        return False
    if key.startswith(("alias.", "pager.")):
        return True
    return key.endswith(COMMAND_REMOTE_KEYS)
