"""The app's start (workbench/tui/session_client.py): the theme in force on the first frame, the
stylesheet parsed once for it."""

from __future__ import annotations

import asyncio
import gc
from pathlib import Path
from typing import Any

import pytest
from rich.color import Color as RichColor
from rich.style import Style
from textual.color import Color
from textual.css.stylesheet import Stylesheet
from textual.filter import ANSIToTruecolor

from workbench.config.settings import Settings
from workbench.session.catalog import list_sessions
from workbench.tui.app import WorkbenchApp
from workbench.tui.theme import ANSI_DARK, ANSI_LIGHT, THEMES

pytestmark = pytest.mark.tui


@pytest.mark.parametrize("name", ["dark", "light"])
async def test_the_first_frame_has_the_theme_and_parses_the_css_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """Set as reactives, the theme and its ANSI colours each queued a second and third parse of
    the whole stylesheet before the first frame (docs/DECISIONS.md, 2026-12-01)."""
    reparsed: list[int] = []
    reparse = Stylesheet.reparse

    def counted(self: Stylesheet, *args: Any, **kwargs: Any) -> None:
        reparsed.append(1)
        reparse(self, *args, **kwargs)

    monkeypatch.setattr(Stylesheet, "reparse", counted)
    theme, ansi = THEMES[name], ANSI_DARK if name == "dark" else ANSI_LIGHT
    settings = Settings(model="demo", workspace=tmp_path, data_dir=tmp_path / "d", theme=name)
    app = WorkbenchApp(settings, blink=False, preload=False, offline=True)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert reparsed == []
        assert app.theme == theme.name and app.current_theme is theme
        mode = "-dark-mode" if theme.dark else "-light-mode"
        assert {mode, f"-theme-{theme.name}"} <= app.classes
        assert app.screen.styles.background == Color.parse(theme.background or "")
        truecolor = next(f for f in app._filters if isinstance(f, ANSIToTruecolor))
        red = truecolor.truecolor_style(Style(color="red"), RichColor.parse("black")).color  # rich's "red": the theme's
        assert red is not None and tuple(red.get_truecolor()) == tuple(ansi.ansi_colors[1])


async def test_the_collector_the_console_script_left_off_is_on_after_the_first_frame(tmp_path: Path) -> None:
    """cli/launch.py turns the garbage collector off for the imports and the first frame; the
    app turns it on again once that frame is drawn (a demo session: it opens after that frame)."""
    settings = Settings(model="demo", workspace=tmp_path, data_dir=tmp_path / "d")
    app = WorkbenchApp(settings, blink=False, preload=False)
    gc.disable()
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            assert gc.isenabled()
            await app._quit()
    finally:
        gc.enable()


async def test_a_quit_while_the_session_opens_closes_it_and_names_it(tmp_path: Path) -> None:
    """Ctrl+C twice right after the first frame, before the session had opened: the app ended
    with the session half open and said nothing about it. The quit now waits for it, closes it
    (not live any more) and the way out names it (`run_app` prints how to continue)."""

    class QuitAtOnce(WorkbenchApp):
        def _start(self) -> None:
            super()._start()  # the session starts opening in a worker
            self.action_quit_twice()  # in the same turn of the loop: Session.open has not returned
            self.action_quit_twice()

    settings = Settings(model="demo", workspace=tmp_path, data_dir=tmp_path / "d")
    app = QuitAtOnce(settings, blink=False, preload=False)
    async with app.run_test(size=(100, 30)):
        for _ in range(600):
            if not app.is_running:
                break
            await asyncio.sleep(0.05)
    assert app.session_id
    stored = {info.id: info for info in list_sessions(settings)}
    assert app.session_id in stored and not stored[app.session_id].live
