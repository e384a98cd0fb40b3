"""The transcript's cursor, search, folding, the side column and the working line, under Pilot
on the real app fed fixed events (tests/tui_events.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.color import Color
from textual import events
from textual.strip import Strip

from tests.tui.test_theme import SEARCH_STYLES
from tests.tui_events import START, EventLog, subagents_with_inbox
from workbench.config.settings import Settings
from workbench.pb import workbench_pb2 as pb
from workbench.tui.app import WorkbenchApp
from workbench.tui.tool_block import FOLD_LINES, ToolBlock

pytestmark = pytest.mark.tui


def offline(tmp_path: Path, now: float = START + 60) -> WorkbenchApp:
    settings = Settings(model="openai/gpt-4.1", workspace=tmp_path, data_dir=tmp_path / "d")
    return WorkbenchApp(settings, clock=lambda: now, blink=False, preload=False, offline=True)


def long_session(items: int = 400) -> EventLog:
    log = EventLog()
    log.spawn("main", "main", "long")
    log.run("long")
    for n in range(items // 2):
        log.tool("read_file", {"path": f"f{n}.txt"}, output=f"line {n}")
        log.say("the needle is here" if n in (3, 150) else f"answer {n}")
    return log


async def test_ctrl_f_finds_items_far_back_and_steps_between_them(tmp_path: Path) -> None:
    app = offline(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        app.apply_events(long_session().events)
        await pilot.pause()
        await pilot.press("ctrl+f")
        assert app.search_bar.has_focus
        await pilot.press(*"needle")
        await pilot.pause()
        assert len(app.matches) == 2 and "2 of 2" in str(app.search_info.render())  # the newest first
        await pilot.press("enter")  # the next wraps to the first match, far outside the window
        await pilot.pause()
        await pilot.pause()
        first = app.matches[0].item
        transcript = app.transcript
        assert transcript.cursor == first.key and "1 of 2" in str(app.search_info.render())
        assert any(number == transcript.index(first.key) for number, _ in transcript.frame())  # in view
        await pilot.press("escape")
        assert not app.query_one("#search-row").display and app.transcript.has_focus


async def test_a_long_output_folds_and_enter_shows_it_all(tmp_path: Path) -> None:
    log = EventLog()
    log.spawn("main", "main", "build")
    log.run("build")
    log.tool("bash", {"command": "make"}, output="".join(f"compiling {n}\n" for n in range(100)))
    app = offline(tmp_path)
    async with app.run_test(size=(120, 60)) as pilot:
        app.apply_events(log.events)
        await pilot.pause()
        transcript = app.transcript
        transcript.focus()
        block = next(view for view in transcript.item_views() if isinstance(view, ToolBlock))
        transcript.select(block.item)
        await pilot.press("enter")  # open: folded to the last FOLD_LINES lines
        await pilot.pause()
        shown = transcript.text_of(block.item)
        assert f"{100 - FOLD_LINES} more lines" in shown and "compiling 99" in shown and "compiling 0\n" not in shown
        await pilot.press("enter")  # all of it
        await pilot.pause()
        shown = transcript.text_of(block.item)
        assert "compiling 0" in shown and "more lines" not in shown
        await pilot.press("enter")  # closed
        await pilot.pause()
        assert not block.expanded


async def test_the_side_column_folds_with_one_agent_and_ctrl_b_toggles_it(tmp_path: Path) -> None:
    app = offline(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        app.apply_events(long_session(10).events)
        await pilot.pause()
        side = app.query_one("#side")
        assert not side.display  # one agent, no Inbox item: the transcript has the width
        await pilot.press("ctrl+b")
        assert side.display
        await pilot.press("ctrl+b")
        assert not side.display
    app = offline(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        app.apply_events(subagents_with_inbox().events)
        await pilot.pause()
        assert app.query_one("#side").display  # subagents and an Inbox: shown


async def test_the_working_line_says_what_the_root_does(tmp_path: Path) -> None:
    log = EventLog()
    log.spawn("main", "main", "test it")
    log.run("test it")
    call = pb.ToolCall(id="c1", name="bash", arguments='{"command": "pytest -q"}')
    log.add("main", "tool_call_started", pb.ToolCallStarted(call=call))
    app = offline(tmp_path, now=START + 12.4)
    async with app.run_test(size=(120, 40)) as pilot:
        app.apply_events(log.events)
        await pilot.pause()
        line = str(app.working_line.render())
        assert app.working_line.display and "running bash: pytest -q" in line and "esc to interrupt" in line
        assert "11s" in line  # since the run started
        log.add("main", "text_delta", pb.TextDelta(text="x" * 400))
        app.apply_events(log.events)
        await pilot.pause()
        assert "~100" in str(app.working_line.render())  # streamed output tokens, an estimate until usage arrives


def screen_rows(app: WorkbenchApp) -> list[Strip]:
    return app.screen._compositor.render_strips()


def backgrounds(strip: Strip, start: int, end: int) -> set[Color | None]:
    """The background colours of cells start..end of a rendered row (ASCII text: a character a cell)."""
    found, x = set(), 0
    for segment in strip:
        if x < end and x + len(segment.text) > start:
            found.add(segment.style.bgcolor if segment.style else None)
        x += len(segment.text)
    return found


def cells_of(app: WorkbenchApp, text: str, nth: int = 0) -> tuple[Strip, int, int]:
    """The row showing the nth occurrence of `text` on the screen, and its cells."""
    seen = 0
    for strip in screen_rows(app):
        start = strip.text.find(text)
        while start >= 0:
            if seen == nth:
                return strip, start, start + len(text)
            seen += 1
            start = strip.text.find(text, start + 1)
    raise AssertionError(f"{text!r} (#{nth}) is not on the screen")


def searched() -> EventLog:
    log = EventLog()
    log.spawn("main", "main", "search")
    log.run("search")
    log.say("the needle and another NEEDLE here, and [bold]not markup[/bold]")
    log.tool("bash", {"command": "make"}, output="line one\nneedle in the output\n\x1b[31mred\x1b[0m done")
    log.say("nothing to see")
    return log


async def test_search_highlights_the_matched_text_and_steps_between_occurrences(tmp_path: Path) -> None:
    app = offline(tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        app.apply_events(searched().events)
        await pilot.pause()
        transcript = app.transcript
        match, current = (transcript.get_component_rich_style(name).bgcolor for name in SEARCH_STYLES)
        assert match != current
        await pilot.press("ctrl+f", *"needle")
        await pilot.pause()
        assert "3 of 3" in str(app.search_info.render())  # every occurrence, the newest current
        # the current one, in the call's output (the search opened the call to show it)
        row, start, _ = cells_of(app, "needle in the output")
        assert backgrounds(row, start, start + 6) == {current}
        row, start, _end = cells_of(app, "the needle and another NEEDLE")
        assert backgrounds(row, start + 4, start + 10) == {match}  # "needle": the word, not the item
        assert match not in backgrounds(row, start, start + 4) and current not in backgrounds(row, start, start + 4)
        assert backgrounds(row, start + 23, start + 29) == {match}  # "NEEDLE": case does not matter
        await pilot.press("up")  # the previous occurrence becomes the current one
        await pilot.pause()
        assert "2 of 3" in str(app.search_info.render())
        row, start, _ = cells_of(app, "the needle and another NEEDLE")
        assert backgrounds(row, start + 23, start + 29) == {current} and backgrounds(row, start + 4, start + 10) == {
            match
        }
        assert "needle in the output" not in "\n".join(s.text for s in screen_rows(app))  # the call closed again
        await pilot.press("down")
        await pilot.pause()
        assert "3 of 3" in str(app.search_info.render())


async def test_a_search_for_markup_or_an_escape_code_matches_it_literally(tmp_path: Path) -> None:
    app = offline(tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        app.apply_events(searched().events)
        await pilot.pause()
        transcript = app.transcript
        current = transcript.get_component_rich_style("transcript--match-current").bgcolor
        await pilot.press("ctrl+f", *"[bold]")
        await pilot.pause()
        assert "1 of 1" in str(app.search_info.render())
        row, start, _end = cells_of(app, "[bold]not markup[/bold]")  # drawn as written, never as markup
        assert backgrounds(row, start, start + 6) == {current}
        assert not any(s.style and s.style.bold for s in row if "not markup" in s.text)
        app.search_bar.value = "\x1b[31m"  # a pasted escape code finds the `\x1b` drawn for it
        await pilot.pause()
        assert "1 of 1" in str(app.search_info.render())
        row, start, _ = cells_of(app, "\\x1b[31mred")
        assert backgrounds(row, start, start + 8) == {current}
        assert not any("\x1b" in strip.text for strip in screen_rows(app))  # no escape code reaches the terminal


async def test_page_up_scrolls_back_and_new_items_follow_only_at_the_end(tmp_path: Path) -> None:
    app = offline(tmp_path)
    log = long_session()
    async with app.run_test(size=(120, 40)) as pilot:
        app.apply_events(log.events)
        await pilot.pause()
        transcript = app.transcript
        transcript.focus()
        await pilot.pause()
        assert transcript.top is None  # at the end, following it
        end = transcript.frame()[0]
        transcript.post_message(events.MouseScrollUp(transcript, 5, 5, 0, -1, 0, False, False, False))
        await pilot.pause()
        assert transcript.top is not None and transcript._above(*end, 3) == transcript.frame()[0]  # the wheel: 3 rows
        transcript.post_message(events.MouseScrollDown(transcript, 5, 5, 0, 1, 0, False, False, False))
        await pilot.pause()
        assert transcript.top is None  # down to the end again: following
        await pilot.press("pageup")
        await pilot.pause()
        held = transcript.frame()[0]
        assert transcript.top == held and held[0] < len(transcript.items) - 10
        log.say("a new answer while the person reads back")
        app.apply_events(log.events[-3:])
        await pilot.pause()
        assert transcript.frame()[0] == held  # what they read stays put
        await pilot.press("pagedown")
        await pilot.pause()
        assert transcript.top is not None  # a page down: the new answer is a row further
        await pilot.press("pagedown")
        await pilot.pause()
        assert transcript.top is None and "a new answer" in transcript.text_of(
            transcript.items[transcript.frame()[-1][0]]
        )


async def test_a_running_command_streams_its_last_lines_and_a_click_opens_a_call(tmp_path: Path) -> None:
    log = EventLog()
    log.spawn("main", "main", "build")
    log.run("build")
    log.tool("read_file", {"path": "notes.txt"}, output="the notes")
    call = pb.ToolCall(id="c9", name="bash", arguments='{"command": "make"}')
    log.add("main", "tool_call_started", pb.ToolCallStarted(call=call))
    app = offline(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        app.apply_events(log.events)
        await pilot.pause()
        transcript = app.transcript
        running = transcript.items[-1]
        for n in range(30):  # chunks arrive while it runs: the newest lines show, in view, at the end
            log.add("main", "tool_output", pb.ToolOutputChunk(call_id="c9", text=f"step {n}\n"))
            app.apply_events(log.events[-1:])
            await pilot.pause()
        shown = transcript.text_of(running)
        assert "step 29" in shown and "step 19" not in shown and "running" in shown
        screen = "\n".join(strip.text for strip in app.screen._compositor.render_strips())
        assert "step 29" in screen
        read = next(item for item in transcript.items if "notes.txt" in transcript.text_of(item))
        row = transcript.frame().index((transcript.index(read.key), 0))
        assert "the notes" not in transcript.text_of(read)
        await pilot.click(transcript, offset=(5, row))  # a click selects the call and opens it
        await pilot.pause()
        assert transcript.cursor == read.key and "the notes" in transcript.text_of(read)
