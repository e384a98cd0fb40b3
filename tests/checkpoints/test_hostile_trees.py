"""Checkpoints of trees a hostile or unlucky command leaves: FIFOs swapped in for files, names
that are not UTF-8, deep folder chains, more folders than the open-file limit. Real folders, a
real store, the real scan; what could hang runs in a subprocess with a deadline."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

# Swaps f{i}.txt (a regular file) and p{i} (a FIFO) with renameat2(RENAME_EXCHANGE) until killed.
RACER = textwrap.dedent(
    """
    import ctypes, os, sys
    libc = ctypes.CDLL(None, use_errno=True)
    rename = libc.renameat2
    rename.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    folder = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
    print("racing", flush=True)
    while True:
        for i in range(4):
            if rename(folder, b"f%d.txt" % i, folder, b"p%d" % i, 2) != 0:  # 2: RENAME_EXCHANGE
                sys.exit("renameat2: " + os.strerror(ctypes.get_errno()))
    """
)

# Takes full-scan checkpoints of the workspace for `seconds`; prints how many, and any error.
CHECKPOINTS = textwrap.dedent(
    """
    import asyncio, sys, time
    from pathlib import Path
    from workbench.checkpoints.checkpointer import Checkpointer
    from workbench.config.settings import Settings
    from workbench.pb import workbench_pb2 as pb

    async def main():
        settings = Settings(workspace=Path(sys.argv[1]), data_dir=Path(sys.argv[2]))
        cps = Checkpointer(settings, "s1", watch=False)
        end, taken, errors = time.monotonic() + float(sys.argv[3]), 0, set()
        while time.monotonic() < end:
            cp = await cps.take(pb.CHECKPOINT_REASON_TURN)
            taken += 1
            if cp.error:
                errors.add(cp.error)
        cps.close()
        print(taken, sorted(errors), flush=True)

    asyncio.run(main())
    """
)


def _has_renameat2() -> bool:
    import ctypes

    return hasattr(ctypes.CDLL(None), "renameat2")


@pytest.mark.skipif(not sys.platform.startswith("linux") or not _has_renameat2(), reason="renameat2 is Linux's")
def test_a_fifo_swapped_in_for_a_file_does_not_hang_a_checkpoint(tmp_path: Path):
    ws = tmp_path / "ws"
    ws.mkdir()
    for i in range(4):
        (ws / f"f{i}.txt").write_text(f"file {i}\n" * 100)
        os.mkfifo(ws / f"p{i}")
    (ws / "fixed.txt").write_text("stays\n")
    racer = subprocess.Popen([sys.executable, "-c", RACER, str(ws)], stdout=subprocess.PIPE, text=True)
    try:
        assert racer.stdout is not None and racer.stdout.readline() == "racing\n"
        scan = subprocess.run(
            [sys.executable, "-c", CHECKPOINTS, str(ws), str(tmp_path / "data"), "4"],
            capture_output=True,
            text=True,
            timeout=30,  # before the fix: blocked for good in the open of a FIFO, with the GIL held
        )
    except subprocess.TimeoutExpired:
        pytest.fail("a checkpoint hung on a FIFO swapped in for a regular file")
    finally:
        racer.kill()
        racer.wait()
    assert scan.returncode == 0, scan.stderr
    taken, _, errors = scan.stdout.partition(" ")
    assert int(taken) > 5 and errors.strip() == "[]", scan.stdout
