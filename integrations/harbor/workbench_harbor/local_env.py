"""A Harbor environment that runs a task in a local folder: the stand-in for Docker where there is none.

Harbor takes it with `--env workbench_harbor.local_env:LocalFolderEnvironment`. Each trial gets a private
folder; every command runs in bubblewrap with the host's system folders read-only and the trial's own
folders bound at the container paths Harbor's tasks use (/app, /logs, /tests, /solution,
/installed-agent, /tmp, /root). It is no container: no image is built (the task's environment/ folder
is ignored), the network is the host's, nothing limits CPU or memory, and a program the task needs must
be on the host. Written for Workbench's tests of its Harbor agent (tests/integrations/test_harbor_run.py)
and for trying a task set on a machine without Docker; real runs use Harbor's own environments.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import tempfile
from pathlib import Path, PurePosixPath
from typing import Any

from harbor.environments.base import BaseEnvironment, ExecResult
from harbor.environments.capabilities import EnvironmentCapabilities

PRIVATE = ("app", "logs", "tests", "solution", "installed-agent", "tmp", "root")
HIDDEN = ("proc", "dev", "sys", "run", *PRIVATE)  # not taken from the host
# host tools under a private folder (pyenv's Pythons live in /root): bound read-only over it
HOST_TOOLS = ("/root/.pyenv", "/root/.local/share/uv/python")
HOST_PATHS_VARIABLE = "WORKBENCH_HARBOR_HOST_PATHS"  # more host folders bound read-only (a checkout in /tmp)
KILL_GRACE_S = 10.0


def _extra_host_paths() -> list[str]:
    """Host folders under a private one that a trial must see (`HOST_PATHS_VARIABLE`, separated
    by ':'): a Workbench checkout under /tmp or /root, whose venv the agent runs."""
    return [p for p in os.environ.get(HOST_PATHS_VARIABLE, "").split(os.pathsep) if p.startswith("/")]


class LocalFolderEnvironment(BaseEnvironment):
    """start, exec, upload, download and stop on a private folder per trial (see the module's doc)."""

    def __init__(self, *args: Any, keep: bool = False, **kwargs: Any) -> None:
        self._keep = keep
        self._root: Path | None = None
        super().__init__(*args, **kwargs)

    @staticmethod
    def type() -> str:
        return "local-folder"

    @property
    def capabilities(self) -> EnvironmentCapabilities:
        return EnvironmentCapabilities()

    def _validate_definition(self) -> None:
        if shutil.which("bwrap") is None:
            raise RuntimeError("the local folder environment needs bubblewrap (bwrap) on PATH")

    @property
    def root(self) -> Path:
        if self._root is None:
            raise RuntimeError("the local folder environment is not started: call start() first")
        return self._root

    async def start(self, force_build: bool) -> None:
        self._root = Path(tempfile.mkdtemp(prefix=f"harbor-{self.session_id[:40]}-"))
        for name in PRIVATE:
            (self._root / name).mkdir(mode=0o755)
        (self._root / "tmp").chmod(0o1777)
        workdir = self.task_env_config.workdir or "/app"
        self.host_path(workdir).mkdir(parents=True, exist_ok=True)
        await self.ensure_dirs(["/logs/agent", "/logs/verifier", "/logs/artifacts"])

    async def stop(self, delete: bool) -> None:
        if self._root is not None and delete and not self._keep:
            shutil.rmtree(self._root, ignore_errors=True)
        self._root = None

    def host_path(self, path: str) -> Path:
        """Where a container path of a private folder is on the host."""
        p = PurePosixPath(path)
        if not p.is_absolute() or len(p.parts) < 2 or p.parts[1] not in PRIVATE or ".." in p.parts:
            raise ValueError(f"{path!r} is outside the trial's folders ({', '.join('/' + n for n in PRIVATE)})")
        return self.root.joinpath(*p.parts[1:])

    def _argv(self, cwd: str) -> list[str]:
        argv = ["bwrap", "--die-with-parent", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/run"]
        for entry in sorted(os.listdir("/")):
            if entry in HIDDEN:
                continue
            host = Path("/") / entry
            if host.is_symlink():
                argv += ["--symlink", os.readlink(host), str(host)]
            elif host.is_dir():
                argv += ["--ro-bind", str(host), str(host)]
        argv += ["--ro-bind-try", "/sys", "/sys"]
        for name in PRIVATE:
            argv += ["--bind", str(self.root / name), f"/{name}"]
        for tool in (*HOST_TOOLS, *_extra_host_paths()):
            argv += ["--ro-bind-try", tool, tool]
        return [*argv, "--chdir", cwd]

    async def exec(
        self,
        command: str,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        timeout_sec: int | None = None,
        user: str | int | None = None,
    ) -> ExecResult:
        merged = self._merge_env(env) or {}
        base = {
            "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
            "HOME": "/root",
            "LANG": "C.UTF-8",
            "TERM": "xterm",
        }
        workdir = cwd or self.task_env_config.workdir or "/app"
        process = await asyncio.create_subprocess_exec(
            *self._argv(workdir),
            "bash",
            "-c",
            command,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={**base, **merged},
            start_new_session=True,
        )
        try:
            out, err = await asyncio.wait_for(process.communicate(), timeout_sec)
        except TimeoutError:
            await _end(process)
            return ExecResult(stdout="", stderr=f"timed out after {timeout_sec} s", return_code=124)
        except asyncio.CancelledError:  # Harbor's agent timeout: the command gets SIGTERM, then SIGKILL
            await asyncio.shield(_end(process))
            raise
        return ExecResult(
            stdout=out.decode(errors="replace"), stderr=err.decode(errors="replace"), return_code=process.returncode
        )

    async def upload_file(self, source_path: Path | str, target_path: str) -> None:
        target = self.host_path(target_path)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source_path, target)

    async def upload_dir(self, source_dir: Path | str, target_dir: str) -> None:
        shutil.copytree(source_dir, self.host_path(target_dir), dirs_exist_ok=True)

    async def download_file(self, source_path: str, target_path: Path | str) -> None:
        Path(target_path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(self.host_path(source_path), target_path)

    async def download_dir(self, source_dir: str, target_dir: Path | str) -> None:
        source = self.host_path(source_dir)
        if source.is_dir():
            shutil.copytree(source, target_dir, dirs_exist_ok=True, symlinks=True)


async def _end(process: asyncio.subprocess.Process) -> None:
    """SIGTERM to the command's process group, SIGKILL after a grace period."""
    for sig, wait in ((signal.SIGTERM, KILL_GRACE_S), (signal.SIGKILL, 5.0)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        try:
            await asyncio.wait_for(process.communicate(), wait)
            return
        except TimeoutError:
            continue
