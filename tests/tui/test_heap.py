"""A long history the app applies at once leaves the garbage collector's generations (tui/heap.py)."""

from __future__ import annotations

import gc
from pathlib import Path

from tests.tui_events import EventLog
from workbench.config.settings import Settings
from workbench.tui.app import WorkbenchApp
from workbench.tui.heap import LONG_BATCH
from workbench.tui.view import ROOT


def history(items: int) -> EventLog:
    log = EventLog()
    log.spawn("main", "main", "a long session")
    log.run("a long session")
    for n in range(items // 2):
        log.tool("read_file", {"path": f"src/m{n}.py"}, output="x = 1\n", seconds=0.001)
        log.say(f"step {n}")
    return log


def tracked(obj: object) -> bool:
    """Whether the collector's generations hold `obj` (`gc.get_objects` leaves the frozen out)."""
    return any(o is obj for o in gc.get_objects())


async def test_a_long_replayed_history_is_frozen_and_a_short_one_is_not(tmp_path: Path) -> None:
    """The session's subscription replays stored events through `_on_event`, one call each, before
    any live one (engine/store.py): those of a long session arrive as one batch."""
    settings = Settings(model="demo", workspace=tmp_path, data_dir=tmp_path / "d")
    for items, frozen in ((40, False), (LONG_BATCH, True)):
        app = WorkbenchApp(settings, blink=False, preload=False, offline=True)
        async with app.run_test(size=(100, 30)) as pilot:
            events = history(items).events
            for event in events:
                app._on_event(event)
            await pilot.pause()
            assert app.view.last_seq == events[-1].seq
            assert tracked(app.view.transcript(ROOT)) is not frozen, f"{len(events)} events"
