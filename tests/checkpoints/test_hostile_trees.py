"""Checkpoints of trees a hostile or unlucky command leaves: FIFOs swapped in for files, names
that are not UTF-8, deep folder chains, more folders than the open-file limit. Real folders, a
real store, the real scan; what could hang runs in a subprocess with a deadline."""

from __future__ import annotations

import json
import os
import resource
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
    """Every path below `root` (as bytes): kind, permission bits, bytes; walked depth first
    without recursion, through folder descriptors (one per level: a deep chain's paths outgrow
    what one call may name, and 3,000 sibling folders the open-file limit)."""
    out: dict[bytes, tuple[str, int, bytes]] = {}
    keys, fds = [b""], [os.open(root, os.O_RDONLY | os.O_DIRECTORY)]
    try:
        pending = [_level(out, b"", fds[0])]
        while pending:
            if not pending[-1]:
                pending.pop()
                keys.pop()
                os.close(fds.pop())
                continue
            name = pending[-1].pop()
            key = keys[-1] + b"/" + os.fsencode(name) if keys[-1] else os.fsencode(name)
            fds.append(os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fds[-1]))
            keys.append(key)
            pending.append(_level(out, key, fds[-1]))
    finally:
        for fd in fds:
            os.close(fd)
    return out


def _level(out: dict[bytes, tuple[str, int, bytes]], rel: bytes, fd: int) -> list[str]:
    """Record the entries of one open folder; the names of its folders."""
    folders = []
    for name in os.listdir(fd):
        key = rel + b"/" + os.fsencode(name) if rel else os.fsencode(name)
        st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        if stat.S_ISDIR(st.st_mode):
            out[key] = ("dir", stat.S_IMODE(st.st_mode), b"")
            folders.append(name)
        elif stat.S_ISLNK(st.st_mode):
            out[key] = ("link", 0, os.fsencode(os.readlink(name, dir_fd=fd)))
        else:
            with os.fdopen(os.open(name, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=fd), "rb") as fh:
                out[key] = ("file", stat.S_IMODE(st.st_mode), fh.read())
    return folders


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


# Under a soft limit of 1,024 open files: a checkpoint, every folder removed, a checkpoint, an undo.
UNDER_THE_LIMIT = textwrap.dedent(
    """
    import asyncio, json, os, resource, sys
    from pathlib import Path
    from tests.checkpoints.test_hostile_trees import state_of
    from workbench.checkpoints.checkpointer import Checkpointer
    from workbench.checkpoints.descend import remove_tree
    from workbench.config.settings import Settings
    from workbench.pb import workbench_pb2 as pb

    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))

    async def main():
        ws = Path(sys.argv[1])
        cps = Checkpointer(Settings(workspace=ws, data_dir=Path(sys.argv[2])), "s1")
        before = state_of(ws)
        first = await cps.take(pb.CHECKPOINT_REASON_TOOL_CALL)
        top = os.open(ws, os.O_RDONLY | os.O_DIRECTORY)
        for name in os.listdir(top):
            if name != ".gitignore":
                remove_tree(top, name)
        os.close(top)
        cps.after_call("bash", "{}")
        gone = await cps.take(pb.CHECKPOINT_REASON_TOOL_CALL)
        cps.restore(gone.commit, first.commit, cps.changes(gone.commit, first.commit))
        after = state_of(ws)
        cps.close()
        lost = sorted(k.decode() for k in before.keys() - after.keys())
        print(json.dumps({"errors": [first.error, gone.error], "paths": len(before), "lost": lost[:5]}))

    asyncio.run(main())
    """
)


@pytest.mark.slow  # 6,000 folders and 6,000 files made: seconds
def test_more_folders_than_the_open_file_limit_are_checkpointed_and_undone(tmp_path: Path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".gitignore").write_text("node_modules/\n")
    for i in range(3000):
        (ws / f"s{i}").mkdir()
        (ws / f"s{i}" / "a.txt").write_text(f"{i}\n")
    for i in range(1500):  # ignored and small: kept, and counted through first (checkpoint_ignored_total)
        package = ws / "node_modules" / f"p{i}"
        (package / "lib").mkdir(parents=True)
        (package / "package.json").write_text(f'{{"name": "p{i}"}}\n')
        (package / "lib" / "index.js").write_text("module.exports = 1\n")
    run = subprocess.run(
        [sys.executable, "-c", UNDER_THE_LIMIT, str(ws), str(tmp_path / "data")],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=Path(__file__).parents[2],
    )
    assert run.returncode == 0, run.stderr[-3000:]
    found = json.loads(run.stdout)
    assert found == {"errors": ["", ""], "paths": 1 + 6000 + 1 + 6000, "lost": []}


# A checkpoint taken with no descriptor left: it fails naming the limit; it never records the
# folders it could not open as deleted (an undo to that would empty the workspace).
NO_DESCRIPTOR_LEFT = textwrap.dedent(
    """
    import asyncio, json, os, sys
    from pathlib import Path
    from workbench.checkpoints.checkpointer import Checkpointer
    from workbench.config.settings import Settings
    from workbench.pb import workbench_pb2 as pb

    async def main():
        ws = Path(sys.argv[1])
        cps = Checkpointer(Settings(workspace=ws, data_dir=Path(sys.argv[2])), "s1", watch=False)
        first = await cps.take(pb.CHECKPOINT_REASON_TOOL_CALL)
        (ws / "src" / "new.txt").write_text("new")
        cps.after_call("bash", "{}")
        held = []
        try:
            while True:
                held.append(os.open(os.devnull, os.O_RDONLY))
        except OSError:
            pass
        starved = await cps.take(pb.CHECKPOINT_REASON_TOOL_CALL)
        for fd in held:
            os.close(fd)
        later = await cps.take(pb.CHECKPOINT_REASON_TOOL_CALL)
        dropped = []  # what a checkpoint taken anyway would say was deleted
        if starved.commit and not starved.error:
            dropped = [c.path for c in cps.changes(first.commit, starved.commit) if c.target is None]
        since = [c.path for c in cps.changes(first.commit, later.commit)] if later.commit else []
        print(json.dumps({"starved": starved.error, "dropped": dropped, "later": later.error, "since_first": since}))

    asyncio.run(main())
    """
)


def _low_limit() -> None:
    """In the child: a soft limit of 256 open files (a few thousand are opened to use them up)."""
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))


def test_a_checkpoint_with_no_descriptor_left_fails_naming_the_limit(tmp_path: Path):
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "main.py").write_text("print(1)\n")
    (ws / "README").write_text("read me\n")
    run = subprocess.run(
        [sys.executable, "-c", NO_DESCRIPTOR_LEFT, str(ws), str(tmp_path / "data")],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=_low_limit,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    found = json.loads(run.stdout)
    assert "Too many open files" in found["starved"] and "ulimit -n" in found["starved"], found
    assert found["dropped"] == [] and not found["later"] and found["since_first"] == ["src/new.txt"], found


def make_latin1_tree(ws: Path) -> None:
    """Names that are not UTF-8: a Latin-1 archive's file, folder and link."""
    raw = os.fsencode(ws)
    with open(raw + b"/caf\xe9.txt", "wb") as fh:
        fh.write(b"caf\xe9 au lait\n")
    os.mkdir(raw + b"/d\xe9j\xe0")
    with open(raw + b"/d\xe9j\xe0/\xff.bin", "wb") as fh:
        fh.write(bytes(range(256)))
    os.symlink(b"caf\xe9.txt", raw + b"/lien\xe9")
    (ws / "plain.txt").write_text("plain\n")
    with open(raw + b"/gros\xe9.bin", "wb") as fh:
        fh.write(b"\xe9" * 2000)


@pytest.mark.parametrize("watch", [True, False], ids=["inotify", "stat-scan"])
async def test_names_that_are_not_utf8_round_trip_byte_for_byte(tmp_path: Path, watch: bool):
    ws = tmp_path / "ws"
    ws.mkdir()
    make_latin1_tree(ws)
    cps = Checkpointer(
        Settings(workspace=ws, data_dir=tmp_path / "data", checkpoint_file_limit=1000), "s1", watch=watch
    )
    first = await cps.take(TOOL)
    assert first is not None and not first.error and first.commit
    assert list(first.skipped) == ["gros\\xe9.bin (2,000 bytes, over the limit)"]  # shown escaped
    first.SerializeToString()  # valid UTF-8 for the event log
    before = state_of(ws)
    raw = os.fsencode(ws)
    os.remove(raw + b"/caf\xe9.txt")
    os.rename(raw + b"/d\xe9j\xe0", raw + b"/moved\xe9")
    with open(raw + b"/new\xe9.txt", "wb") as fh:
        fh.write(b"new\n")
    cps.after_call("bash", "{}")
    after = await cps.take(TOOL)
    assert after is not None and not after.error and after.commit != first.commit
    changes = cps.changes(after.commit, first.commit)
    assert {os.fsencode(c.path) for c in changes} >= {b"caf\xe9.txt", b"new\xe9.txt", b"moved\xe9", b"d\xe9j\xe0"}
    cps.restore(after.commit, first.commit, changes)
    assert state_of(ws) == before
    cps.close()


# The first look at the tree fails for want of descriptors; once some are free again, the next
# checkpoint is taken (it failed for the rest of the session: the failed first look was re-raised).
FIRST_LOOK_STARVED = textwrap.dedent(
    """
    import asyncio, json, os, sys
    from pathlib import Path
    from workbench.checkpoints.checkpointer import Checkpointer
    from workbench.config.settings import Settings
    from workbench.pb import workbench_pb2 as pb

    async def main():
        ws = Path(sys.argv[1])
        cps = Checkpointer(Settings(workspace=ws, data_dir=Path(sys.argv[2])), "s1", watch=False)
        held = []
        try:
            while True:
                held.append(os.open(os.devnull, os.O_RDONLY))
        except OSError:
            pass
        starved = await cps.take(pb.CHECKPOINT_REASON_TOOL_CALL)
        for fd in held:
            os.close(fd)
        later = await cps.take(pb.CHECKPOINT_REASON_TOOL_CALL)
        print(json.dumps({"starved": starved.error, "later": later.error, "taken": bool(later.commit)}))

    asyncio.run(main())
    """
)


def test_a_first_look_that_ran_out_of_descriptors_is_tried_again(tmp_path: Path):
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "main.py").write_text("print(1)\\n")
    run = subprocess.run(
        [sys.executable, "-c", FIRST_LOOK_STARVED, str(ws), str(tmp_path / "data")],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=_low_limit,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    found = json.loads(run.stdout)
    assert "Too many open files" in found["starved"] and "ulimit -n" in found["starved"], found
    assert found["later"] == "" and found["taken"], found
