"""Checkpoints and restores on a real folder, a real store (pygit2) and the real inotify watch."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.checkpoints.treestate import git_state, make_user_repo, tree_state
from workbench.checkpoints.checkpointer import Checkpointer
from workbench.config.settings import Settings
from workbench.pb import workbench_pb2 as pb

TOOL = pb.CHECKPOINT_REASON_TOOL_CALL


def make_workspace(ws: Path) -> None:
    (ws / "src" / "deep").mkdir(parents=True)
    (ws / "src" / "main.py").write_text("print('hi')\n")
    (ws / "src" / "deep" / "data.bin").write_bytes(bytes(range(256)) * 40)
    (ws / "run.sh").write_text("#!/bin/sh\necho run\n")
    os.chmod(ws / "run.sh", 0o755)
    (ws / "secret.key").write_text("k")
    os.chmod(ws / "secret.key", 0o600)
    (ws / "private").mkdir(mode=0o700)
    os.chmod(ws / "private", 0o700)
    (ws / "empty").mkdir()
    (ws / ".gitignore").write_text(".env\nbuild/\n")
    (ws / ".env").write_text("TOKEN=1\n")
    (ws / "build").mkdir()
    (ws / "build" / "out.o").write_bytes(b"\0" * 10)
    os.symlink("src/main.py", ws / "link")
    os.symlink("/nonexistent/target", ws / "dangling")
    (ws / "crlf.txt").write_bytes(b"a\r\nb\r\n")


def settings_for(ws: Path, data: Path, **kw: object) -> Settings:
    return Settings(workspace=ws, data_dir=data, **kw)  # type: ignore[arg-type]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    make_workspace(root)
    return root


@pytest.mark.parametrize("watch", [True, False], ids=["inotify", "stat-scan"])
async def test_restore_is_byte_identical_with_modes_links_and_empty_folders(ws: Path, tmp_path: Path, watch: bool):
    cps = Checkpointer(settings_for(ws, tmp_path / "data"), "s1", watch=watch)
    before = tree_state(ws)
    first = await cps.take(TOOL, call_id="c1", tool="bash")
    assert first is not None and first.commit and not first.error
    # what a careless agent does
    shutil.rmtree(ws / "src")
    os.remove(ws / ".env")
    os.remove(ws / "link")
    (ws / "link").mkdir()
    os.chmod(ws / "secret.key", 0o644)
    (ws / "run.sh").write_text("changed")
    os.rmdir(ws / "empty")
    (ws / "new.txt").write_text("new")
    (ws / "private").rename(ws / "moved")
    cps.after_call("bash", '{"command": "..."}')  # what the engine says after each call
    after = await cps.take(TOOL, call_id="c2", tool="bash")
    assert after is not None and after.commit != first.commit and after.files_changed > 0
    cps.restore(after.commit, first.commit, cps.changes(after.commit, first.commit))
    assert tree_state(ws) == before
    cps.close()


async def test_nothing_changed_means_no_new_commit(ws: Path, tmp_path: Path):
    cps = Checkpointer(settings_for(ws, tmp_path / "data"), "s1")
    a = await cps.take(TOOL)
    b = await cps.take(TOOL)
    assert a is not None and b is not None
    assert b.commit == a.commit and b.unchanged
    (ws / "src" / "main.py").write_text("print('bye')\n")
    c = await cps.take(TOOL)
    assert c is not None and c.commit != a.commit and c.files_changed == 1
    cps.close()


async def test_small_ignored_files_kept_large_ignored_tree_skipped(ws: Path, tmp_path: Path):
    big = ws / "node_modules"
    big.mkdir()
    (ws / ".gitignore").write_text(".env\nbuild/\nnode_modules/\n")
    for i in range(3):
        (big / f"m{i}.js").write_bytes(b"x" * 400_000)
    cps = Checkpointer(settings_for(ws, tmp_path / "data", checkpoint_ignored_total=1_000_000), "s1")
    cp = await cps.take(TOOL)
    assert cp is not None and any(line.startswith("node_modules/") for line in cp.skipped)
    # an agent that ignores everything next does not hide what it deletes
    (ws / ".gitignore").write_text("*\n")
    os.remove(ws / ".env")
    shutil.rmtree(ws / "build")
    later = await cps.take(TOOL)
    assert later is not None
    cps.restore(later.commit, cp.commit, cps.changes(later.commit, cp.commit))
    assert (ws / ".env").read_text() == "TOKEN=1\n" and (ws / "build" / "out.o").exists()
    assert (ws / ".gitignore").read_text() == ".env\nbuild/\nnode_modules/\n"
    assert len(list(big.iterdir())) == 3  # the skipped tree is left alone
    cps.close()


async def test_restore_follows_no_planted_link(ws: Path, tmp_path: Path):
    outside = tmp_path / "outside"
    outside.mkdir()
    cps = Checkpointer(settings_for(ws, tmp_path / "data"), "s1")
    first = await cps.take(TOOL)
    shutil.rmtree(ws / "src")
    os.symlink(outside, ws / "src")  # a restore into src/ must not land in `outside`
    after = await cps.take(TOOL)
    assert first is not None and after is not None
    cps.restore(after.commit, first.commit, cps.changes(after.commit, first.commit))
    assert list(outside.iterdir()) == []
    assert (ws / "src").is_dir() and not (ws / "src").is_symlink()
    assert (ws / "src" / "main.py").read_text() == "print('hi')\n"
    cps.close()


async def test_users_git_state_untouched(ws: Path, tmp_path: Path):
    make_user_repo(ws)
    before = git_state(ws)
    cps = Checkpointer(settings_for(ws, tmp_path / "data"), "s1")
    commits = []
    for i in range(20):
        (ws / f"f{i}.txt").write_text(str(i))
        cp = await cps.take(TOOL)
        assert cp is not None and not cp.error
        commits.append(cp.commit)
    cps.restore(commits[-1], commits[0], cps.changes(commits[-1], commits[0]))
    cps.restore(commits[0], commits[-1], cps.changes(commits[0], commits[-1]))
    assert git_state(ws) == before
    cps.close()


async def test_off_switch_takes_nothing(ws: Path, tmp_path: Path):
    cps = Checkpointer(settings_for(ws, tmp_path / "data", checkpoints=False), "s1")
    assert await cps.take(TOOL) is None
    assert not (tmp_path / "data" / "checkpoints").exists()


async def test_failed_checkpoint_is_an_error_not_an_exception(ws: Path, tmp_path: Path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "checkpoints").write_text("not a folder")  # the store cannot be made
    cps = Checkpointer(settings_for(ws, data), "s1")
    cp = await cps.take(TOOL)
    assert cp is not None and cp.error.startswith("no checkpoint of the workspace could be taken")


async def test_files_over_the_limit_skipped_with_notice(ws: Path, tmp_path: Path):
    (ws / "huge.bin").write_bytes(b"h" * 5000)
    cps = Checkpointer(settings_for(ws, tmp_path / "data", checkpoint_file_limit=4000), "s1")
    cp = await cps.take(TOOL)
    assert cp is not None and any(line.startswith("huge.bin") for line in cp.skipped)
    cps.close()


async def test_a_workspace_larger_than_the_store_cap_fails_before_filling_the_disk(ws: Path, tmp_path: Path):
    (ws / "big").mkdir()
    for i in range(5):
        (ws / "big" / f"{i}.bin").write_bytes(b"z" * 300_000)
    cps = Checkpointer(settings_for(ws, tmp_path / "data", checkpoint_store_cap=1_000_000), "s1")
    cp = await cps.take(TOOL)
    assert cp is not None and "checkpoint_store_cap" in cp.error and not cp.commit
    assert (await cps.take(TOOL)).error  # type: ignore[union-attr]  # it stays failed
    cps.close()
