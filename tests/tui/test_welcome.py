"""The welcome before the first prompt (issue 37 item 4): the real app under Pilot on a real Session,
in a fresh folder at 80x24 (the demo model) and with a configured model and MCP server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from tests.mcp.conftest import probe, with_servers
from tests.tui.test_app import type_prompt
from tests.waiting import on_screen
from workbench.config.settings import Settings
from workbench.tui.app import WorkbenchApp
from workbench.tui.transcript import Transcript
from workbench.tui.welcome import welcome

pytestmark = pytest.mark.tui


def rows(app: WorkbenchApp) -> list[str]:
    """The transcript pane's rows as drawn, in plain text."""
    transcript = app.query_one(Transcript)
    return [transcript.render_line(y).text.rstrip() for y in range(transcript.size.height)]


async def opened(pilot: Pilot[Any], app: WorkbenchApp) -> None:
    await on_screen(pilot, lambda: app.session is not None, what="the session to open")
    await pilot.pause()


async def test_a_fresh_folder_shows_the_welcome_until_the_first_prompt(tmp_path: Path) -> None:
    workspace = tmp_path / "fresh"
    workspace.mkdir()
    settings = Settings(model="demo", workspace=workspace, data_dir=tmp_path / "data")
    app = WorkbenchApp(settings, blink=False, preload=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        before = rows(app)  # at the first frames, before the session opened
        await opened(pilot, app)
        shown = rows(app)
        expected = [
            "Type a task below and press Enter to start.",
            "model      demo (scripted: it plays one scenario, not a language model)",
            f"workspace  …{str(workspace)[-39:]} (not a git repository)",  # its start cut: the header has it
            "sandbox    bash and tmux in workspace-write, network off",
            "approval   ask: you approve each command, file change and fetch (Ctrl+T)",
            "MCP        none configured",
            "Enter sends · Ctrl+J new line · Esc interrupts · Ctrl+P commands",
            "F1 every key · Ctrl+C twice quits",
        ]
        for line in expected:  # each whole on one row of the 80-column screen: it fits
            assert any(row.strip() == line for row in shown), (line, shown)
            assert any(row.strip() == line for row in before), ("shown with the first frame", line, before)
        await pilot.press("ctrl+t")  # the mode switched before the first prompt: the welcome says so
        await pilot.pause()
        switched = [row.strip() for row in rows(app)]
        assert "approval   auto: workspace changes run; risky commands ask you (Ctrl+T)" in switched
        assert "• approval mode: auto" in switched, "the notice shows below the welcome"
        await type_prompt(pilot, "hello")
        await pilot.pause()
        after = "\n".join(rows(app))  # the demo's run goes on: its items fill the pane
        assert app.query_one(Transcript).welcome_lines() == [] and "Type a task below" not in after


async def test_the_welcome_names_the_model_a_git_repository_and_the_mcp_servers(settings: Settings) -> None:
    (settings.workspace / ".git").mkdir()  # what makes a folder a repository to git and to the welcome
    settings = with_servers(settings, probe(), probe("docker", sandbox="off"))
    settings.approval = "read-only"
    app = WorkbenchApp(settings, blink=False, preload=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await opened(pilot, app)
        shown = [row.strip() for row in rows(app)]
    assert "model      openai/scripted" in shown
    assert any(row.startswith("workspace") and row.endswith("(a git repository)") for row in shown)
    assert "approval   read-only: changes and commands are blocked (Ctrl+T)" in shown
    assert "MCP        probe, docker (sandbox off)" in shown


def test_with_no_model_the_welcome_says_how_to_start_instead() -> None:
    text = welcome(Settings(model="", workspace=Path("/")), "ask").plain
    assert text.startswith("No model is set: set one (see above the prompt), or try the offline demo.")
    assert "Type a task below" not in text and "try the demo (Ctrl+P)" in text
