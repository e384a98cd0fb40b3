"""Snapshots of the TUI (pytest-textual-snapshot): fixed events, a fixed clock, no cursor blink.

Update after an intended change of the screen: `pytest tests/tui/test_snapshots.py --snapshot-update`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.tui_events import START, EventLog, failed_call, main_view, subagents_with_inbox
from workbench.config.settings import Settings
from workbench.pb import workbench_pb2 as pb
from workbench.tui.app import WorkbenchApp
from workbench.tui.picker import ResumePicker

pytestmark = pytest.mark.tui

SIZE = (130, 36)


@pytest.fixture(autouse=True)
def utc() -> Iterator[None]:
    """Times on screen are local: the same zone on every machine (restored after the test)."""
    before = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    time.tzset()
    yield
    if before is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = before
    time.tzset()


def offline_app(tmp_path: Path) -> WorkbenchApp:
    """No session: the app shows only the fixed events it is given (a fixed workspace name, never opened)."""
    settings = Settings(model="openai/gpt-4.1", workspace=Path("/home/dev/src/app"), data_dir=tmp_path / "data")
    return WorkbenchApp(settings, clock=lambda: START + 60, blink=False, preload=False, offline=True)


def fed(log: EventLog, select: str = ""):  # type: ignore[no-untyped-def]
    async def run_before(pilot) -> None:  # type: ignore[no-untyped-def]
        app: WorkbenchApp = pilot.app
        app.apply_events(log.events)
        await pilot.pause()
        if select:
            app.query_one("#agents").select_agent(select)
        await pilot.pause()
        await pilot.wait_for_scheduled_animations()

    return run_before


def test_main_view(snap_compare, tmp_path: Path) -> None:
    assert snap_compare(offline_app(tmp_path), terminal_size=SIZE, run_before=fed(main_view()))


def test_failed_call_with_partial_output(snap_compare, tmp_path: Path) -> None:
    assert snap_compare(offline_app(tmp_path), terminal_size=SIZE, run_before=fed(failed_call()))


def test_agents_tree_with_inbox(snap_compare, tmp_path: Path) -> None:
    assert snap_compare(offline_app(tmp_path), terminal_size=SIZE, run_before=fed(subagents_with_inbox(), "a2"))


@pytest.mark.parametrize("width", [80])
def test_failed_call_stacks_when_narrow(snap_compare, tmp_path: Path, width: int) -> None:
    assert snap_compare(offline_app(tmp_path), terminal_size=(width, 36), run_before=fed(failed_call()))


def test_resume_picker(snap_compare, tmp_path: Path) -> None:
    sessions = []
    for n, (title, workspace) in enumerate(
        [
            ("fix the login check", "/home/dev/src/app"),
            ("add a --verbose flag", "/home/dev/src/tool"),
            ("review the repository", "/home/dev/src/app"),
        ]
    ):
        info = pb.SessionInfo(
            id=f"5e55{n:08x}", title=title, workspace=workspace, model="openai/gpt-4.1", status=pb.RUN_STATUS_FINISHED
        )
        info.updated.FromSeconds(int(START) - 3600 * n)
        info.usage.input_tokens = 12_000 * (n + 1)
        sessions.append(info)

    async def run_before(pilot) -> None:  # type: ignore[no-untyped-def]
        pilot.app.push_screen(ResumePicker(sessions, "/home/dev/src/app"))
        await pilot.pause()

    assert snap_compare(offline_app(tmp_path), terminal_size=SIZE, run_before=run_before)
