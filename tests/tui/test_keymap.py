"""The one keymap table: the README's key table and the help screen come from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.config.settings import Settings
from workbench.tui.app import WorkbenchApp
from workbench.tui.help_screen import KeysHelp
from workbench.tui.keymap import KEYS, WHERE, markdown_table

README = Path(__file__).parents[2] / "README.md"

pytestmark = pytest.mark.tui


def test_the_readme_holds_the_keymap_table() -> None:
    assert markdown_table() in README.read_text(), "README.md's key table differs: python -m workbench.tui.keymap"


def test_every_key_has_a_place_and_words() -> None:
    for key in KEYS:
        assert key.where in WHERE and key.does and key.label


@pytest.mark.tui
async def test_f1_and_question_mark_show_the_keys(tmp_path: Path) -> None:
    settings = Settings(model="openai/gpt-4.1", workspace=tmp_path, data_dir=tmp_path / "d")
    app = WorkbenchApp(settings, blink=False, preload=False, offline=True)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, KeysHelp)
        shown = str(app.screen.query_one("#keys-table").render())
        assert "Ctrl+F" in shown or app.screen.query_one("#keys-table").size.height > 10
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, KeysHelp)
        app.transcript.focus()
        await pilot.press("question_mark")  # ? in a pane: the keys, not a character for the prompt
        await pilot.pause()
        assert isinstance(app.screen, KeysHelp) and app.prompt_input.text == ""
