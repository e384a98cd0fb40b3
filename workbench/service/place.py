"""Where an engine lives: its folder, socket, lock and log, one engine per user and data folder.

The folder is private (0700, owned by the user, checked, never followed through a link): under
`$XDG_RUNTIME_DIR` when it is the user's own, else under /tmp, named by a digest of the data
folder, so that the socket path stays short whatever the data folder's path (AF_UNIX allows
107 bytes). A sandboxed command sees neither (/tmp is private to the sandbox, the runtime
folder hidden). The log is in the data folder.
"""

from __future__ import annotations

import hashlib
import os
import socket
import stat
import struct
from dataclasses import dataclass
from pathlib import Path

SOCKET_PATH_MAX = 107  # bytes, sun_path less its NUL


class PlaceError(Exception):
    """The engine's folder cannot be used: said in one line, and the client runs in-process."""


@dataclass(frozen=True)
class EnginePlace:
    folder: Path
    data_dir: Path

    @property
    def socket(self) -> Path:
        return self.folder / "engine.sock"

    @property
    def lock(self) -> Path:
        return self.folder / "engine.lock"

    @property
    def log(self) -> Path:
        return self.data_dir / "engine.log"

    def session_socket(self, session_id: str) -> Path:
        return self.folder / f"s-{session_id}.sock"


def engine_place(data_dir: Path, environ: dict[str, str] | None = None) -> EnginePlace:
    """The place of the engine for `data_dir` (not made: `ensure_folder` makes it)."""
    env = os.environ if environ is None else environ
    data = data_dir.expanduser().resolve()
    digest = hashlib.sha256(str(data).encode()).hexdigest()[:16]
    runtime = env.get("XDG_RUNTIME_DIR", "")
    base = (
        Path(runtime) / "workbench"
        if runtime and _own_private(Path(runtime))
        else Path(f"/tmp/workbench-engine-{os.getuid()}")
    )
    return EnginePlace(base / digest, data)


def ensure_folder(place: EnginePlace) -> None:
    """Make the engine's folder and its parent, 0700, and check both are the user's own."""
    for folder in (place.folder.parent, place.folder):
        try:
            folder.mkdir(mode=0o700, exist_ok=True)
        except OSError as err:
            raise PlaceError(f"cannot make the engine's folder {folder}: {err.strerror or err}") from err
        if not _own_private(folder):
            raise PlaceError(
                f"the engine's folder {folder} is not a private folder of this user (0700, owned by uid "
                f"{os.getuid()}, not a link): remove it or fix its owner and mode"
            )
    if len(os.fsencode(place.session_socket("x" * 32))) > SOCKET_PATH_MAX:
        raise PlaceError(f"the engine's socket path under {place.folder} is too long for a Unix socket")


def _own_private(folder: Path) -> bool:
    try:
        st = os.lstat(folder)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and stat.S_IMODE(st.st_mode) & 0o077 == 0


def peer_uid(sock: socket.socket) -> int:
    """The uid of the process at the other end of a Unix socket (SO_PEERCRED), -1 when unknown."""
    try:
        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    except OSError:
        return -1
    _pid, uid, _gid = struct.unpack("3i", creds)
    return int(uid)
