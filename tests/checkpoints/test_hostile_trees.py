"""Checkpoints of trees a hostile or unlucky command leaves: FIFOs swapped in for files, names
that are not UTF-8, deep folder chains, more folders than the open-file limit. Real folders, a
real store, the real scan; what could hang runs in a subprocess with a deadline."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from workbench.checkpoints.checkpointer import Checkpointer
from workbench.checkpoints.descend import remove_tree
from workbench.config.settings import Settings
from workbench.pb import workbench_pb2 as pb

TOOL = pb.CHECKPOINT_REASON_TOOL_CALL

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
            [sys.executable, "-c", CHECKPOINTS, str(ws), str(tmp_path / "data"), "2"],
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


def state_of(root: Path) -> dict[bytes, tuple[str, int, bytes]]:
    """Every path below `root` (as bytes): kind, permission bits, bytes; walked without recursion
    and through folder descriptors (a deep chain's paths outgrow what one call may name)."""
    out: dict[bytes, tuple[str, int, bytes]] = {}
    stack = [(b"", os.open(root, os.O_RDONLY | os.O_DIRECTORY))]
    while stack:
        rel, fd = stack.pop()
        try:
            for name in os.listdir(fd):
                raw = os.fsencode(name)
                key = rel + b"/" + raw if rel else raw
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                if stat.S_ISDIR(st.st_mode):
                    out[key] = ("dir", stat.S_IMODE(st.st_mode), b"")
                    stack.append((key, os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)))
                elif stat.S_ISLNK(st.st_mode):
                    out[key] = ("link", 0, os.fsencode(os.readlink(name, dir_fd=fd)))
                else:
                    file = os.open(name, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=fd)
                    with os.fdopen(file, "rb") as fh:
                        out[key] = ("file", stat.S_IMODE(st.st_mode), fh.read())
        finally:
            os.close(fd)
    return out


def make_chain(root: Path, depth: int, name: str = "d") -> None:
    """`depth` nested folders below `root` with a file at the bottom, made one level at a time."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir(name, dir_fd=fd)
            child = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
        out = os.open("bottom.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(out, b"at the bottom\n")
        os.close(out)
    finally:
        os.close(fd)


@pytest.mark.slow  # 2,200 mkdir and 1,100 rmdir: seconds on an overlay file system
@pytest.mark.parametrize("watch", [True, False], ids=["inotify", "stat-scan"])
async def test_a_chain_of_1100_folders_is_checkpointed_and_undone(tmp_path: Path, watch: bool):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "top.txt").write_text("top\n")
    cps = Checkpointer(Settings(workspace=ws, data_dir=tmp_path / "data"), "s1", watch=watch)
    try:
        await _chain_checkpointed_and_undone(ws, cps)
    finally:
        cps.close()
        above = os.open(ws.parent, os.O_RDONLY | os.O_DIRECTORY)
        try:
            remove_tree(above, ws.name)  # pytest's own clean-up recurses (RecursionError)
        finally:
            os.close(above)


async def _chain_checkpointed_and_undone(ws: Path, cps: Checkpointer) -> None:
    before = await cps.take(TOOL)
    assert before is not None and not before.error
    state_before = state_of(ws)
    make_chain(ws, 1100)  # past Python's recursion limit (1000)
    cps.after_call("bash", "{}")
    deep = await cps.take(TOOL)
    assert deep is not None and not deep.error and deep.commit != before.commit
    state_deep = state_of(ws)
    assert len(state_deep) == len(state_before) + 1101
    cps.restore(deep.commit, before.commit, cps.changes(deep.commit, before.commit))  # the chain removed
    assert state_of(ws) == state_before
    cps.after_call("bash", "{}")
    again = await cps.take(TOOL)
    assert again is not None and cps.tree_of(again.commit) == cps.tree_of(before.commit)  # the scan saw it go
    cps.restore(before.commit, deep.commit, cps.changes(before.commit, deep.commit))  # and made again
    assert state_of(ws) == state_deep
