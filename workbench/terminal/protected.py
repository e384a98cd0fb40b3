"""What the host reads, runs or listens on later, kept out of sandboxed commands' reach.

Computed at every start of the sandbox (`sandbox.mount_args`), never trusted from an earlier one:
- the repository's git control files: `.git` is bound onto itself (a mount point cannot be
  renamed or replaced: `mv .git .git2; cp -r .git2 .git` fails), and every file in it that git
  reads as configuration or as a pointer to another git folder is read-only whether or not it
  existed: `config`, `config.worktree`, `commondir`, `gitdir`, `hooks/`, `info/`, `modules/`,
  `worktrees/`, `remotes/`, `branches/`, `objects/info/alternates`. What is missing is made
  first, empty (a `commondir` naming the folder itself, `./`: an empty one stops git), so that
  none can be planted for the person's next `git status` (a hook, `core.fsmonitor`, a
  `commondir` naming a folder with such a config, a submodule's config). `objects` and
  `objects/info` are pinned too (a folder holding a read-only file could be renamed away).
  Objects, refs and the index stay writable (add, commit, checkout, branch work). A worktree's
  `.git` file and the folders it names get the same. The workspace's `.workbench/` (the
  project's own Workbench config) is read-only, made empty when it is missing. What is left
  open (a nested repository, a `.git` file made in the work tree) is reported at the end of
  the session (`git_report.py`).
- the host's Unix sockets: `/run` (and a real `/var/run`) are an empty read-only folder, with
  only what programs need bound back (the target of /etc/resolv.conf with the network on, the
  setting `sandbox_run_visible`); every socket the host listens on by path (/proc/net/unix),
  `SSH_AUTH_SOCK`, gpg-agent's folder (`gpgconf --list-dirs`) and the sockets named by editors'
  and terminals' variables are masked (an empty file on top: connect is refused). A read-only
  bind does not stop a connect.
"""

from __future__ import annotations

import contextlib
import functools
import os
import stat
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from workbench.core.regular_files import read_regular

RUN_DIRS = (Path("/run"), Path("/var/run"))
# what systems need from /run, shown read-only where it exists (NixOS keeps its system there)
RUN_NEEDED = ("/run/current-system", "/run/opengl-driver")
# what git reads in a git folder as configuration, or as the way to another git folder; each is
# read-only whether or not it existed: what is missing is made first (empty; commondir `./`)
GIT_FOLDERS = ("hooks", "info", "modules", "worktrees", "remotes", "branches")  # in the common folder
GIT_FILES = ("config.worktree", "objects/info/alternates")  # made empty in the common folder
GIT_SELF_COMMONDIR = "./\n"  # git and libgit2 read it as no other common folder; an empty file stops git
GIT_POINTERS = ("commondir", "gitdir")  # where a git folder's common folder or work tree is
GIT_READ_ONLY = ("config", *GIT_FOLDERS, *GIT_FILES, *GIT_POINTERS)
POINTER_BYTES = 4096  # of a `.git` file or a `commondir` read (only a regular file is read: a FIFO could block)
GIT_PINNED_INSIDE = ("objects", "objects/info")  # a folder holding a read-only file could be renamed
PROJECT_CONFIG = ".workbench"
# variables that name a socket of the person's: an editor, a terminal, a desktop
SOCKET_VARIABLES = (
    "SSH_AUTH_SOCK",
    "GPG_AGENT_INFO",
    "VSCODE_IPC_HOOK",
    "VSCODE_IPC_HOOK_CLI",
    "VSCODE_GIT_IPC_HANDLE",
    "NVIM",
    "NVIM_LISTEN_ADDRESS",
    "EMACS_SOCKET_NAME",
    "KITTY_LISTEN_ON",
    "WEZTERM_UNIX_SOCKET",
    "ALACRITTY_SOCKET",
    "DBUS_SESSION_BUS_ADDRESS",
    "SWAYSOCK",
    "I3SOCK",
)


@dataclass(frozen=True)
class Protected:
    """Mounts on top of the sandbox's filesystem, all inside what it could otherwise reach."""

    pinned: tuple[Path, ...]  # folders bound onto themselves: they stay, whatever is done inside
    read_only: tuple[Path, ...]  # bound read-only onto themselves
    run_visible: tuple[Path, ...]  # shown read-only inside the hidden /run
    sockets: tuple[Path, ...]  # masked by an empty file
    socket_dirs: tuple[Path, ...]  # hidden under an empty folder


def _under(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def git_control(workspace: Path, writable: Callable[[Path], bool], make: bool = True) -> tuple[list[Path], list[Path]]:
    """(folders to pin, paths to make read-only) for the repository the workspace is in.

    Git finds its folder by walking up from the working directory: so does this. Only what the
    sandbox could write is touched (a `.git` outside the workspace is read-only already).
    """
    dot = dot_git(workspace)
    if dot is None:
        return [], []
    pinned: list[Path] = []
    read_only: list[Path] = []
    if dot.is_file() and not dot.is_symlink():  # a worktree or a submodule: `gitdir: PATH`
        if writable(dot):
            read_only.append(dot)
        gitdir = _gitdir_of(dot)
        if gitdir is None:
            return pinned, read_only
    else:
        gitdir = dot.resolve()
    common = common_dir(gitdir)
    for folder in dict.fromkeys((gitdir, common)):
        if not folder.is_dir() or not writable(folder):
            continue
        pinned.append(folder)
        if make:
            _make_missing(folder, folder == common)
        pinned += [folder / name for name in GIT_PINNED_INSIDE if _is_folder(folder / name)]
        read_only += [folder / name for name in GIT_READ_ONLY if os.path.lexists(folder / name)]
    return pinned, read_only


def common_dir(gitdir: Path) -> Path:
    """The folder a git folder shares objects, refs and config with: its `commondir`, or itself."""
    try:
        named = read_regular(gitdir / "commondir", POINTER_BYTES).decode().strip()
    except (OSError, UnicodeDecodeError):  # a FIFO or a device there is never read (it could block)
        return gitdir
    return (gitdir / named).resolve() if named else gitdir


def _is_folder(path: Path) -> bool:
    return path.is_dir() and not path.is_symlink()


def _make_missing(folder: Path, is_common: bool) -> None:
    """The stand-ins for what git would read in `folder` and is not there: so that the sandbox
    finds each read-only and cannot plant one. Each reads as nothing to git."""
    with contextlib.suppress(OSError):
        if not os.path.lexists(folder / "commondir"):
            (folder / "commondir").write_text(GIT_SELF_COMMONDIR)
    if not is_common:
        return
    for name in GIT_FOLDERS:
        with contextlib.suppress(OSError):
            (folder / name).mkdir(exist_ok=True)
    for name in GIT_FILES:
        path = folder / name
        if path.parent != folder and not _is_folder(folder / name.split("/")[0]):
            continue  # no objects folder: nothing git could use
        with contextlib.suppress(OSError):
            path.parent.mkdir(exist_ok=True)
            if _is_folder(path.parent) and not os.path.lexists(path):
                path.touch()


def dot_git(workspace: Path) -> Path | None:
    """The `.git` git uses in `workspace`: its own, or an enclosing folder's."""
    return next((d / ".git" for d in (workspace, *workspace.parents) if os.path.lexists(d / ".git")), None)


def _gitdir_of(dot_git_file: Path) -> Path | None:
    try:
        text = read_regular(dot_git_file, POINTER_BYTES).decode(errors="replace")
    except OSError:
        return None
    first = text.splitlines()[0] if text else ""
    if not first.startswith("gitdir:"):
        return None
    return (dot_git_file.parent / first.removeprefix("gitdir:").strip()).resolve()


def project_config(workspace: Path, writable: Callable[[Path], bool], make: bool = True) -> list[Path]:
    """The workspace's `.workbench/`, made (empty) when missing, so that none can be planted."""
    folder = workspace / PROJECT_CONFIG
    if not writable(folder):
        return []
    with contextlib.suppress(OSError):
        if make:
            folder.mkdir(exist_ok=True)
    return [folder] if folder.is_dir() and not folder.is_symlink() else []


def in_run(path: Path) -> bool:
    """Is `path` (resolved) inside the hidden /run?"""
    return any(_under(path, Path(os.path.realpath(run))) for run in RUN_DIRS)


def run_visible(network: bool, extra: list[str]) -> list[Path]:
    """What is shown inside the hidden /run (each a path there, maybe a symbolic link): what the
    system needs, the setting `sandbox_run_visible`, and DNS's file with the network on."""
    wanted = [Path(os.path.expanduser(p)) for p in (*RUN_NEEDED, *extra)]
    if network:
        wanted.append(Path(os.path.realpath("/etc/resolv.conf")))
    found = []
    for path in wanted:
        # a link's own place (`/run/current-system` -> /nix/store/...) is shown as a link
        place = Path(os.path.realpath(path.parent)) / path.name
        if in_run(place) and os.path.lexists(place):
            found.append(place)
    return list(dict.fromkeys(found))


def is_socket(path: Path) -> bool:
    try:
        return stat.S_ISSOCK(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def _listening_paths() -> Iterator[Path]:
    """Every Unix socket bound to a path in this network namespace (the host's, for a sandbox)."""
    try:
        with open("/proc/net/unix", "rb") as fh:
            next(fh, None)
            for line in fh:
                fields = line.split(maxsplit=7)
                if len(fields) == 8 and fields[7].startswith(b"/"):
                    yield Path(os.fsdecode(fields[7].rstrip(b"\n")))
    except OSError:
        return


def _variable_paths(environ: dict[str, str]) -> Iterator[Path]:
    for name in SOCKET_VARIABLES:
        value = environ.get(name, "")
        for part in value.replace(";", ",").split(","):
            part = part.strip().removeprefix("unix:").removeprefix("path=").split(":")[0]
            if part.startswith("/"):
                yield Path(part)


@functools.cache
def gpg_socket_dirs() -> tuple[Path, ...]:
    """gpg-agent's socket folders, as `gpgconf --list-dirs` reports them (none without gpgconf)."""
    try:
        out = subprocess.run(
            ["gpgconf", "--list-dirs"], capture_output=True, text=True, timeout=5, stdin=subprocess.DEVNULL
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return ()
    dirs = []
    for line in out.splitlines():
        key, _, value = line.partition(":")
        if key == "socketdir" and value.startswith("/"):
            dirs.append(Path(value.replace("%3a", ":")))
    return tuple(dirs)


def host_sockets(environ: dict[str, str], shown: Callable[[Path], bool]) -> tuple[list[Path], list[Path]]:
    """(sockets to mask, socket folders to hide) that a sandboxed command would otherwise see."""
    sockets = []
    for path in (*_listening_paths(), *_variable_paths(environ)):
        real = Path(os.path.realpath(path))
        if shown(real) and is_socket(real):
            sockets.append(real)
    folders = [d.resolve() for d in gpg_socket_dirs() if d.is_dir() and shown(d.resolve())]
    return list(dict.fromkeys(sockets)), folders


def protected_paths(
    workspace: Path,
    network: bool,
    run_extra: list[str],
    writable: Callable[[Path], bool],
    shown: Callable[[Path], bool],
    make: bool = True,
) -> Protected:
    """Everything above for one start of the sandbox. `writable`: may the sandbox write there as
    mounted so far; `shown`: would it see the path (not hidden, not in its private /tmp or /run);
    `make`: make the empty folders that stand for missing ones (not for a report: `doctor`)."""
    pinned, read_only = git_control(workspace, writable, make)
    read_only += project_config(workspace, writable, make)
    sockets, socket_dirs = host_sockets(dict(os.environ), shown)
    return Protected(
        pinned=tuple(pinned),
        read_only=tuple(read_only),
        run_visible=tuple(run_visible(network, run_extra)),
        sockets=tuple(s for s in sockets if not any(_under(s, d) for d in socket_dirs)),
        socket_dirs=tuple(socket_dirs),
    )
