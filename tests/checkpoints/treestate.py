"""A workspace's state as the tests compare it: every path's kind, exact mode and bytes."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path


def tree_state(root: Path, skip: tuple[str, ...] = (".git",)) -> dict[str, tuple[str, int, bytes]]:
    """path -> (kind, permission bits, content or link target), for everything below `root`."""
    out: dict[str, tuple[str, int, bytes]] = {}
    for folder, dirs, files in os.walk(root):
        rel = os.path.relpath(folder, root)
        dirs[:] = [d for d in dirs if d not in skip]
        for name in dirs + files:
            path = os.path.join(folder, name)
            key = name if rel == "." else f"{rel}/{name}"
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                out[key] = ("link", 0, os.fsencode(os.readlink(path)))
            elif stat.S_ISDIR(st.st_mode):
                out[key] = ("dir", stat.S_IMODE(st.st_mode), b"")
            else:
                out[key] = ("file", stat.S_IMODE(st.st_mode), Path(path).read_bytes())
    return out


# what the sandbox makes in a .git where it is missing, so that none can be planted (terminal/protected.py)
SANDBOX_STAND_INS = {".git/commondir": b"./\n", ".git/config.worktree": b"", ".git/objects/info/alternates": b""}


def git_state(repo: Path, stand_ins: bool = True) -> dict[str, bytes]:
    """Every file of a user's .git but its objects, byte for byte (index, refs, config, hooks, stash);
    with `stand_ins` False, without the sandbox's unchanged stand-ins for missing files."""
    out: dict[str, bytes] = {}
    for folder, _dirs, files in os.walk(repo / ".git"):
        for name in files:
            path = Path(folder) / name
            key = str(path.relative_to(repo))
            content = path.read_bytes()
            if stand_ins or SANDBOX_STAND_INS.get(key) != content:
                out[key] = content
    return out


def make_user_repo(ws: Path) -> None:
    """A user's repository with a commit, a stash and a staged change (nothing of it is Workbench's)."""
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], cwd=ws, check=True, env=env)
    subprocess.run([*git, "add", "-A"], cwd=ws, check=True, env=env)
    subprocess.run([*git, "commit", "-qm", "one"], cwd=ws, check=True, env=env)
    (ws / "src" / "main.py").write_text("work in progress\n")
    subprocess.run([*git, "stash", "-q"], cwd=ws, check=True, env=env)
    (ws / "run.sh").write_text("staged\n")
    subprocess.run([*git, "add", "run.sh"], cwd=ws, check=True, env=env)
