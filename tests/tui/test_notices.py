"""Notices in the transcript, on fixed events and a fixed clock: a retry countdown, a discarded
stream, a compaction, a defect's traceback on demand."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tui_events import EventLog
from tests.waiting import on_screen
from workbench.config.settings import Settings
from workbench.pb import workbench_pb2 as pb
from workbench.tui.app import WorkbenchApp
from workbench.tui.messages import AssistantMessage, NoticeLine
from workbench.tui.tool_block import ToolBlock
from workbench.tui.transcript import Transcript

pytestmark = pytest.mark.tui


def drawn(app: WorkbenchApp) -> str:
    """What the screen shows now (its last composed frame)."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


async def test_retry_countdown_discarded_stream_compaction_and_traceback(tmp_path: Path) -> None:
    log = EventLog()
    log.spawn("main", "main", "go")
    log.run("go")
    log.add("main", "text_delta", pb.TextDelta(text="half a rep"))
    log.add("main", "stream_discarded", pb.StreamDiscarded(attempt=1, discarded_chars=10, reason="connection reset"))
    log.add("main", "compaction", pb.Compaction(messages_before=40, messages_after=3, reason="over 80% of the window"))
    call = log.tool("grep", {"pattern": "x"}, error="grep failed: internal error")
    traceback = "Traceback (most recent call last):\n  ...\nKeyError: 'x'"
    defect = pb.Defect(where="grep", call_id=call.id, error_type="KeyError", message="'x'", traceback=traceback)
    log.add("main", "defect", defect)
    wait = log.add("main", "retry_wait", pb.RetryWait(attempt=1, max_attempts=5, reason="429 rate limited", seconds=9))
    clock = Clock(wait.time.seconds + wait.time.nanos / 1e9 + 2)
    settings = Settings(model="openai/gpt-4.1", workspace=tmp_path, data_dir=tmp_path / "d")
    app = WorkbenchApp(settings, clock=clock, blink=False, preload=False, offline=True)
    async with app.run_test(size=(140, 40)) as pilot:
        app.apply_events(log.events)
        await pilot.pause()
        transcript = app.query_one(Transcript)
        views = transcript.item_views()
        notices = [view for view in views if isinstance(view, NoticeLine)]
        lines = [transcript.text_of(view.item) for view in notices]
        assert any("broke off" in line and "10 chars discarded" in line for line in lines)
        assert any("compacted the conversation: 40 -> 3 messages" in line for line in lines)
        retry = next(view for view in notices if view.item.kind == "retry")
        assert "retrying in 7 s" in transcript.text_of(retry.item)
        assert "retrying in 7 s" in str(app.status_line.render())
        clock.now += 4  # the status line reads the clock as it draws, and repaints itself each second
        assert "retrying in 3 s" in transcript.text_of(retry.item) and "retrying in 3 s" in str(
            app.status_line.render()
        )
        await on_screen(pilot, lambda: "retrying in 3 s" in drawn(app), what="the countdown repainted")
        answers = [view for view in views if isinstance(view, AssistantMessage)]
        assert answers and not any(view.shown() for view in answers)  # the discarded half reply is hidden
        block = next(view for view in views if isinstance(view, ToolBlock))
        assert "t shows the traceback" in str(block.header_text()) and "KeyError" not in transcript.text_of(block.item)
        transcript.focus()
        plain = next(view for view in notices if not view.item.detail)
        transcript.select(plain.item)
        await pilot.press("t")  # a line with no traceback: said, not silently nothing
        assert any("No traceback here" in str(n.message) for n in app._notifications)
        transcript.select(block.item)  # the transcript's cursor on the block (Up/Down move it)
        await pilot.press("t")
        await pilot.pause()
        assert "KeyError: 'x'" in transcript.text_of(block.item)
