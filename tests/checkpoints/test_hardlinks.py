"""Hard links (issue 39 item 7): a file written through one of its names changed every name, and a
checkpoint must see them all; a restore puts each name back byte for byte and keeps the link.
A real folder, a real store (pygit2), the real inotify watch and the stat scan without it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.checkpoints.test_checkpointer import settings_for
from tests.checkpoints.treestate import tree_state
from workbench.checkpoints.checkpointer import Checkpointer
from workbench.pb import workbench_pb2 as pb

TOOL = pb.CHECKPOINT_REASON_TOOL_CALL
WATCH = pytest.mark.parametrize("watch", [True, False], ids=["inotify", "stat-scan"])


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "sub").mkdir(parents=True)
    (root / "orig.txt").write_text("original\n")
    os.link(root / "orig.txt", root / "alias.txt")
    os.link(root / "orig.txt", root / "sub" / "third.txt")  # a name in another folder
    (root / "plain.txt").write_text("plain\n")
    return root


def same_inode(*paths: Path) -> bool:
    return len({(p.lstat().st_dev, p.lstat().st_ino) for p in paths}) == 1


async def checkpoint(cps: Checkpointer) -> str:
    cp = await cps.take(TOOL, call_id="c", tool="bash")
    assert cp is not None and cp.commit and not cp.error, cp
    cps.after_call("bash", '{"command": "..."}')
    return cp.commit


async def undo(cps: Checkpointer, first: str) -> None:
    now = await checkpoint(cps)
    cps.restore(now, first, cps.changes(now, first))


@WATCH
async def test_an_append_through_one_name_is_seen_in_every_name_and_undone(ws: Path, tmp_path: Path, watch: bool):
    cps = Checkpointer(settings_for(ws, tmp_path / "data"), "s1", watch=watch)
    before = tree_state(ws)
    first = await checkpoint(cps)
    with (ws / "alias.txt").open("a") as fh:  # `echo agent >> alias.txt`
        fh.write("agent\n")
    after = await cps.take(TOOL)
    assert after is not None and after.files_changed == 3  # orig.txt, alias.txt, sub/third.txt
    assert {c.path for c in cps.changes(after.commit, first)} == {"orig.txt", "alias.txt", "sub/third.txt"}
    cps.restore(after.commit, first, cps.changes(after.commit, first))
    assert tree_state(ws) == before
    assert same_inode(ws / "orig.txt", ws / "alias.txt", ws / "sub" / "third.txt")  # the link is kept
    cps.close()


@WATCH
async def test_a_name_replaced_by_a_new_file_is_linked_again_by_the_restore(ws: Path, tmp_path: Path, watch: bool):
    """What the edit tool does (a temporary file renamed over the name): the other names keep the
    old bytes; the restore gives the edited name its bytes back and makes it a link again."""
    cps = Checkpointer(settings_for(ws, tmp_path / "data"), "s1", watch=watch)
    before = tree_state(ws)
    first = await checkpoint(cps)
    (ws / "alias.tmp").write_text("edited\n")
    os.replace(ws / "alias.tmp", ws / "alias.txt")
    cps.mark(Path("alias.txt"))
    await undo(cps, first)
    assert tree_state(ws) == before
    assert same_inode(ws / "orig.txt", ws / "alias.txt", ws / "sub" / "third.txt")
    cps.close()


@WATCH
async def test_a_name_written_then_removed_before_the_checkpoint(ws: Path, tmp_path: Path, watch: bool):
    """The written name is gone by the checkpoint: the watch names only it, its other names changed."""
    cps = Checkpointer(settings_for(ws, tmp_path / "data"), "s1", watch=watch)
    before = tree_state(ws)
    first = await checkpoint(cps)
    with (ws / "alias.txt").open("a") as fh:
        fh.write("agent\n")
    os.remove(ws / "alias.txt")
    await undo(cps, first)
    assert tree_state(ws) == before
    assert same_inode(ws / "orig.txt", ws / "alias.txt", ws / "sub" / "third.txt")
    cps.close()


@WATCH
async def test_a_name_written_then_its_folder_removed(ws: Path, tmp_path: Path, watch: bool):
    """The watch names the folder only (`rm -rf sub` after writing through sub/third.txt)."""
    cps = Checkpointer(settings_for(ws, tmp_path / "data"), "s1", watch=watch)
    before = tree_state(ws)
    first = await checkpoint(cps)
    with (ws / "sub" / "third.txt").open("a") as fh:
        fh.write("agent\n")
    shutil.rmtree(ws / "sub")
    after = await checkpoint(cps)
    assert {c.path for c in cps.changes(after, first)} == {"orig.txt", "alias.txt", "sub", "sub/third.txt"}
    cps.restore(after, first, cps.changes(after, first))
    assert tree_state(ws) == before
    assert same_inode(ws / "orig.txt", ws / "alias.txt", ws / "sub" / "third.txt")
    cps.close()


@WATCH
async def test_a_link_made_and_written_between_two_checkpoints(ws: Path, tmp_path: Path, watch: bool):
    cps = Checkpointer(settings_for(ws, tmp_path / "data"), "s1", watch=watch)
    before = tree_state(ws)
    first = await checkpoint(cps)
    os.link(ws / "plain.txt", ws / "sub" / "new-name.txt")
    with (ws / "sub" / "new-name.txt").open("a") as fh:
        fh.write("agent\n")
    after = await checkpoint(cps)
    assert {c.path for c in cps.changes(after, first)} == {"plain.txt", "sub/new-name.txt"}
    cps.restore(after, first, cps.changes(after, first))
    assert tree_state(ws) == before
    cps.close()


@WATCH
async def test_a_cp_al_tree_edited_through_its_copy(tmp_path: Path, watch: bool):
    """pnpm's node_modules and `cp -al` trees: every file has a second name."""
    ws = tmp_path / "ws"
    for i in range(300):
        folder = ws / "src" / f"d{i % 10}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"f{i}.js").write_text(f"module {i}\n")
    shutil.copytree(ws / "src", ws / "copy", copy_function=os.link)
    cps = Checkpointer(settings_for(ws, tmp_path / "data"), "s1", watch=watch)
    before = tree_state(ws)
    first = await checkpoint(cps)
    for i in (3, 150):
        with (ws / "copy" / f"d{i % 10}" / f"f{i}.js").open("a") as fh:
            fh.write("patched\n")
    after = await cps.take(TOOL)
    assert after is not None and after.files_changed == 4
    cps.restore(after.commit, first, cps.changes(after.commit, first))
    assert tree_state(ws) == before
    names = [f"d{i % 10}/f{i}.js" for i in range(300)]
    assert all(same_inode(ws / "src" / name, ws / "copy" / name) for name in names)  # the links kept
    cps.close()
