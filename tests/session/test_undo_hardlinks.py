"""Undo of a change made through a hard link (issue 39 item 7): `alias.txt` is a second name of
`orig.txt`, made before the session; the agent writes through the alias (sandboxed bash, the edit
tool), and an undo puts both names back byte for byte and keeps them one file. Real tools, the
scripted model server over HTTP, a real SQLite log and checkpoint store, `workbench undo --yes`."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.checkpoints.treestate import tree_state
from tests.scripted_server import ScriptedModel, call, reply
from workbench.config.settings import Settings
from workbench.session.session import Session

SKIP = (".git", ".workbench")


@pytest.fixture
def linked(workspace: Path) -> Path:
    (workspace / "orig.txt").write_text("original\n")
    os.link(workspace / "orig.txt", workspace / "alias.txt")  # `ln orig.txt alias.txt`, before the session
    (workspace / "other.txt").write_text("other\n")
    return workspace


def one_file(ws: Path) -> bool:
    a, b = (ws / "orig.txt").lstat(), (ws / "alias.txt").lstat()
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


async def test_bash_appends_through_the_alias_and_undo_puts_both_names_back(
    settings: Settings, scripted_model: ScriptedModel, linked: Path
) -> None:
    before = tree_state(linked, SKIP)
    scripted_model.add(reply("", call("bash", command="echo agent >> alias.txt")), reply("done"))
    session = await Session.open(settings)
    try:
        session.send("append")
        await session.wait()
        assert (linked / "orig.txt").read_text() == "original\nagent\n"  # one file, two names
        plan = await session.plan_rewind()
        assert {f.path for f in plan.files} == {"orig.txt", "alias.txt"} and not plan.outside
        await session.rewind(plan)
        assert tree_state(linked, SKIP) == before and one_file(linked)
    finally:
        await session.close()


def test_workbench_undo_yes_in_a_new_process_finds_nothing_changed_outside(
    scripted_model: ScriptedModel, linked: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What the review ran: a run, then `workbench undo --yes` (its first scan sees every name)."""
    from workbench.cli.main import main

    before = tree_state(linked, SKIP)
    data = tmp_path / "data"
    scripted_model.add(reply("", call("bash", command="echo agent >> alias.txt")), reply("done"))
    argv = ["run", "--model", "openai/scripted", "--api-base", scripted_model.url, "--approval", "auto"]
    assert main([*argv, "--workspace", str(linked), "--data-dir", str(data), "append"]) == 0
    capsys.readouterr()
    assert main(["undo", "--workspace", str(linked), "--yes", "--data-dir", str(data)]) == 0
    out = capsys.readouterr().out
    assert "changed outside Workbench" not in out, out
    assert tree_state(linked, SKIP) == before and one_file(linked)


async def test_the_edit_tool_on_the_alias_is_undone_and_the_link_made_again(
    settings: Settings, scripted_model: ScriptedModel, linked: Path
) -> None:
    before = tree_state(linked, SKIP)
    scripted_model.add(
        reply("", call("edit_file", path="alias.txt", old_text="original", new_text="edited")),
        reply("done"),
    )
    session = await Session.open(settings)
    try:
        session.send("edit")
        await session.wait()
        assert (linked / "alias.txt").read_text() == "edited\n"
        plan = await session.plan_rewind()
        assert not plan.outside
        await session.rewind(plan)
        assert tree_state(linked, SKIP) == before and one_file(linked)
    finally:
        await session.close()


LINKED = [("alias.txt", "linked"), ("orig.txt", "linked")]


@pytest.mark.parametrize(
    ("command", "listed"),
    [
        ("cp orig.txt t && mv t alias.txt", LINKED),  # the same bytes, the link broken
        ("cp other.txt o && mv o orig.txt && ln -f other.txt alias.txt", [*LINKED, ("other.txt", "apart")]),
    ],
    ids=["link-broken", "names-regrouped"],
)
async def test_a_change_of_links_alone_is_listed_and_undone(
    settings: Settings, scripted_model: ScriptedModel, linked: Path, command: str, listed: list[tuple[str, str]]
) -> None:
    """No name's bytes changed, only which names are one file: the undo still has work to do."""
    (linked / "other.txt").write_text("original\n")  # every name holds the same bytes
    before = tree_state(linked, SKIP)
    scripted_model.add(reply("", call("bash", command=command)), reply("done"))
    session = await Session.open(settings)
    try:
        session.send("relink")
        await session.wait()
        assert tree_state(linked, SKIP) == before  # the same bytes under every name
        plan = await session.plan_rewind()
        assert sorted((f.path, f.kind) for f in plan.files) == listed
        await session.rewind(plan)
        assert tree_state(linked, SKIP) == before and one_file(linked)
        other = (linked / "other.txt").lstat()
        assert other.st_nlink == 1  # other.txt is a file of its own again
    finally:
        await session.close()


async def test_a_mode_change_alone_is_undone(settings: Settings, scripted_model: ScriptedModel, linked: Path) -> None:
    """The plan listed `mode 600` but the undo changed nothing when no bytes differed."""
    os.chmod(linked / "other.txt", 0o600)
    scripted_model.add(reply("", call("bash", command="chmod 644 other.txt")), reply("done"))
    session = await Session.open(settings)
    try:
        session.send("chmod")
        await session.wait()
        plan = await session.plan_rewind()
        assert [(f.path, f.kind) for f in plan.files] == [("other.txt", "mode 600")]
        await session.rewind(plan)
        assert (linked / "other.txt").stat().st_mode & 0o777 == 0o600
    finally:
        await session.close()
