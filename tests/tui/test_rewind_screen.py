"""The rewind screen and the changed-files screen's restore, under Pilot, driving a real Session
(the scripted model server over HTTP, a real SQLite file and checkpoint store)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.checkpoints.test_checkpointer import make_workspace
from tests.checkpoints.treestate import tree_state
from tests.scripted_server import ScriptedModel, call, reply
from tests.tui.test_app import SIZE, make_app, type_prompt
from tests.waiting import on_screen
from workbench.config.settings import Settings
from workbench.tui.files_screen import ChangedFiles
from workbench.tui.rewind_screen import RewindReview, TurnPicker

pytestmark = pytest.mark.tui

SKIP = (".git", ".workbench")


async def test_ctrl_g_rewinds_the_files_after_showing_them(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    make_workspace(workspace)
    before = tree_state(workspace, SKIP)
    scripted_model.add(
        reply("", call("bash", command='python3 -c "import os, shutil; shutil.rmtree(os.getcwd())"')),
        reply("gone"),
    )
    app = make_app(settings)
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, lambda: app.session is not None, what="the session to open")
        await type_prompt(pilot, "clean up")
        await on_screen(pilot, lambda: app.view.last_answer == "gone" and not app.view.busy, what="the answer")
        assert tree_state(workspace, SKIP) != before
        await pilot.press("ctrl+g")
        await on_screen(pilot, lambda: isinstance(app.screen, TurnPicker), what="the rewind screen")
        await pilot.press("c", "enter")
        await on_screen(pilot, lambda: isinstance(app.screen, RewindReview), what="the files to put back")
        review = app.screen
        assert isinstance(review, RewindReview)
        assert "src/main.py" in {f.path for f in review.plan.files} or "src/" in {f.path for f in review.plan.files}
        await pilot.press("y")
        await on_screen(pilot, lambda: tree_state(workspace, SKIP) == before, what="the files back")
        await on_screen(
            pilot,
            lambda: any(
                getattr(i, "text", "").startswith("files put back to before turn 1")
                for i in app.view.transcripts.get("main", [])
            ),
            what="the rewind in the transcript",
        )
        await app._close_session()


async def test_ctrl_o_r_puts_one_file_back(settings: Settings, scripted_model: ScriptedModel, workspace: Path) -> None:
    (workspace / "a.txt").write_text("first\n")
    (workspace / "b.txt").write_text("other\n")
    scripted_model.add(
        reply("", call("write_file", path="a.txt", content="second\n")),
        reply("", call("write_file", path="b.txt", content="changed\n")),
        reply("done"),
    )
    app = make_app(settings)
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, lambda: app.session is not None, what="the session to open")
        await type_prompt(pilot, "edit")
        await on_screen(pilot, lambda: app.view.last_answer == "done" and not app.view.busy, what="the answer")
        await pilot.press("ctrl+o")
        await on_screen(pilot, lambda: isinstance(app.screen, ChangedFiles), what="the changed files")
        screen = app.screen
        assert isinstance(screen, ChangedFiles)
        screen.show(next(p for p in screen.files if p.endswith("a.txt")))
        await pilot.press("r")
        await on_screen(pilot, lambda: (workspace / "a.txt").read_text() == "first\n", what="a.txt put back")
        assert (workspace / "b.txt").read_text() == "changed\n"
        await app._close_session()
