"""The checkpoint store after a session killed mid-checkpoint: libgit2's temporary object file
is removed once it is old enough not to be another session's write in flight (a real kill -9)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from workbench.checkpoints.repo import Store, store_dir

# Streams a blob into the store from a reader that stalls after two chunks ("writing"), to be killed.
KILLED_WRITE = textwrap.dedent(
    """
    import io, sys, time
    from pathlib import Path
    from workbench.checkpoints.repo import Store

    class Stalls(io.RawIOBase):
        chunks = 0
        def readable(self):
            return True
        def readinto(self, buffer):
            self.chunks += 1
            if self.chunks == 3:
                print("writing", flush=True)
                time.sleep(120)
            buffer[:4096] = b"x" * 4096
            return 4096

    Store(Path(sys.argv[1]), Path(sys.argv[2])).repo.create_blob_fromiobase(Stalls())
    """
)


def test_a_write_killed_mid_way_leaves_no_temporary_file_for_good(tmp_path: Path):
    data, ws = tmp_path / "data", tmp_path / "ws"
    ws.mkdir()
    writer = subprocess.Popen(
        [sys.executable, "-c", KILLED_WRITE, str(data), str(ws)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert writer.stdout is not None and writer.stdout.readline() == "writing\n"
    finally:
        writer.kill()  # kill -9 mid-write
        writer.wait()
    store = store_dir(data, ws)
    left = [p for p in (store / "objects").iterdir() if p.is_file()]
    assert [p.name.startswith(("tmp_object_git2_", "streamed_git2_")) for p in left] == [True], left
    Store(data, ws)  # a session opening the store soon after: the write may be another one's, in flight
    assert left[0].exists()
    old = time.time() - 2 * 3600
    os.utime(left[0], (old, old))
    Store(data, ws)  # later: it is a killed write's
    assert not left[0].exists()
