"""What a session's shells started ends with the session, also after a kill -9 of its owner.

Every process of the session's tmux server (the server, the shells, whatever they start)
carries two marks it inherits:
- the session's cgroup (cgroup v2, when one can be made and joined here, e.g. as root), with
  one cgroup per agent inside it (`agent_cgroup`: each agent's shells and windows, so a cancel
  ends exactly that agent's processes, `setsid` ones included):
  `cgroup.kill` ends them all whatever they did to their process group, session, terminal
  or environment (`setsid`, `nohup`, `disown`, `trap '' HUP`, `env -i`);
- `WORKBENCH_SESSION=<socket name>` in the environment: without a cgroup a scan of /proc
  finds them by it (a program that clears its environment and leaves the terminal session
  with setsid escapes this net).
`end_session` uses both, then the terminal sessions of the windows (`processes.kill_session`).

A record, `<data_dir>/terminals/<socket name>.json`, holds the owner's pid and start time, the
server's, the socket, the private folder and the cgroup; `reap_orphans(data_dir)` ends the
leftovers of every session whose owner is gone. A process that is about to die (SIGHUP, SIGTERM:
`session/ending.py`) ends its own sessions' leftovers first (`end_own_sessions`), whatever they
were doing, a sandbox still starting included.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from workbench.terminal.processes import kill_all, marked_pids, same_process, start_time
from workbench.terminal.shell_env import MARKER
from workbench.terminal.shell_reports import REPORTS

CGROUP_PREFIX = "workbench-"
KILL_ROUNDS = 20  # rounds of scan-and-kill: a process that forks while it is killed is found again


# --- cgroup v2 ----------------------------------------------------------------------------------


def _own_cgroup() -> Path | None:
    """This process's cgroup v2 folder, if the unified hierarchy is mounted."""
    mount = None
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            left, _, right = line.partition(" - ")
            if right.split(" ", 1)[0] == "cgroup2":
                mount = left.split(" ")[4]
                break
    if mount is None:
        return None
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            if line.startswith("0::"):
                return Path(mount) / line[3:].lstrip("/")
    return None


def make_cgroup(name: str) -> Path | None:
    """A new cgroup for a session beside this process's own; None when that is not allowed."""
    own = _own_cgroup()
    if own is None:
        return None
    path = own / f"{CGROUP_PREFIX}{name}"
    try:
        path.mkdir()
    except FileExistsError:
        pass
    except OSError:
        return None
    if not os.access(path / "cgroup.procs", os.W_OK):
        with contextlib.suppress(OSError):
            path.rmdir()
        return None
    return path


def join_cgroup(path: Path) -> None:
    """Move the calling process into `path` (run in a child before exec: preexec_fn)."""
    with contextlib.suppress(OSError), open(path / "cgroup.procs", "w") as fh:
        fh.write("0\n")


def in_cgroup(pid: int, path: Path) -> bool:
    try:
        return str(pid) in (path / "cgroup.procs").read_text().split()
    except OSError:
        return False


def agent_cgroup(session: Path, agent_id: str) -> Path | None:
    """The cgroup of one agent's processes, inside its session's; None when it cannot be made."""
    path = session / f"agent-{agent_id}"
    try:
        path.mkdir(exist_ok=True)
    except OSError:
        return None
    return path if os.access(path / "cgroup.procs", os.W_OK) else None


def move_to_cgroup(pid: int, path: Path) -> bool:
    """Move a running process into `path` (its children to come follow it there)."""
    try:
        (path / "cgroup.procs").write_text(f"{pid}\n")
    except OSError:
        return False
    return True


def _children(path: Path) -> list[Path]:
    with contextlib.suppress(OSError):
        return [c for c in path.iterdir() if c.is_dir()]
    return []


def kill_cgroup(path: Path) -> None:
    """End every process in the cgroup and in the cgroups below it (its agents'), and remove them."""
    if not path.is_dir():
        return
    for child in _children(path):
        kill_cgroup(child)
    kill = path / "cgroup.kill"
    for _ in range(KILL_ROUNDS):
        try:
            pids = [int(p) for p in (path / "cgroup.procs").read_text().split()]
        except OSError:
            break
        if not pids:
            break
        if kill.exists():
            with contextlib.suppress(OSError):
                kill.write_text("1\n")
        else:
            kill_all(pids)
        time.sleep(0.02)
    for _ in range(100):  # the kernel empties it as the processes die
        try:
            path.rmdir()
            return
        except OSError:
            time.sleep(0.02)


def kill_marked(value: str) -> None:
    for _ in range(KILL_ROUNDS):
        pids = marked_pids(MARKER, value)
        if not pids:
            return
        kill_all(pids)
        time.sleep(0.01)


# --- the session's record -------------------------------------------------------------------------


@dataclass
class Record:
    """What ends a session's leftovers when its owner is gone (a JSON file in the data folder)."""

    session: str
    socket_name: str
    owner_pid: int
    owner_start: int
    server_pid: int = 0
    server_start: int = 0
    socket_path: str = ""
    dir: str = ""
    cgroup: str = ""


# the records this process wrote and has not removed: its sessions that still run something
_own: dict[Path, Record] = {}


def records_dir(data_dir: Path) -> Path:
    return data_dir / "terminals"


def write_record(folder: Path, record: Record) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{record.socket_name}.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(asdict(record)))
    os.replace(tmp, path)
    _own[path] = record
    return path


def remove_record(path: Path) -> None:
    """Its session ended what it started: the record goes."""
    _own.pop(path, None)
    with contextlib.suppress(OSError):
        path.unlink()


def end_own_sessions() -> None:
    """End now what this process's sessions started and still run, as `reap_orphans` would once
    this process is gone; for a process about to die. The records stay: the next start reads them
    (their sessions' runs are marked interrupted) and finds nothing left to end."""
    for path, record in list(_own.items()):
        end_session(record)
        _own.pop(path, None)


def owner_record(session: str, socket_name: str) -> Record:
    pid = os.getpid()
    return Record(session=session, socket_name=socket_name, owner_pid=pid, owner_start=start_time(pid))


def end_session(record: Record) -> None:
    """End the server, everything started from it, its socket file and its private folder."""
    if record.cgroup:
        kill_cgroup(Path(record.cgroup))
    if record.server_pid and same_process(record.server_pid, record.server_start):
        with contextlib.suppress(OSError):
            os.kill(record.server_pid, signal.SIGKILL)
    kill_marked(record.socket_name)
    if record.socket_path:
        with contextlib.suppress(OSError):
            Path(record.socket_path).unlink()
    if record.dir and Path(record.dir).name.startswith(f"workbench-{record.socket_name[:40]}"):
        with contextlib.suppress(OSError):  # the report channels' folder is not listable
            os.chmod(Path(record.dir) / REPORTS, 0o700)
        shutil.rmtree(record.dir, ignore_errors=True)


def reap_orphans(data_dir: Path) -> list[str]:
    """End the tmux servers, commands and private folders of sessions whose owner is gone.

    Returns their session ids. Call it at start (and from `workbench doctor`); a live owner's
    session (another workbench running now) is left alone.
    """
    ended = []
    for path in sorted(records_dir(data_dir).glob("*.json")):
        try:
            record = Record(**json.loads(path.read_text()))
        except (OSError, ValueError, TypeError):
            continue  # being written, or not ours
        if same_process(record.owner_pid, record.owner_start):
            continue
        end_session(record)
        with contextlib.suppress(OSError):
            path.unlink()
        ended.append(record.session)
    _remove_empty_cgroups()
    return ended


def _remove_empty_cgroups(older_than: float = 60.0) -> None:
    """Sessions' cgroups left empty (their owner was killed and nothing reaped them yet): gone.

    A cgroup made a moment ago may still be waiting for its server to join: only old ones go.
    """
    own = _own_cgroup()
    if own is None:
        return
    with contextlib.suppress(OSError):
        for path in own.glob(f"{CGROUP_PREFIX}*"):
            with contextlib.suppress(OSError):
                if time.time() - path.stat().st_mtime > older_than and not (path / "cgroup.procs").read_text().strip():
                    for child in _children(path):  # its agents' cgroups, empty too (else the rmdir is refused)
                        with contextlib.suppress(OSError):
                            child.rmdir()
                    path.rmdir()  # refused while a process is in it
