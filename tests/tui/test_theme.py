"""Contrast of every selection and focus style, and of every text on the screen (muted and dim styles,
status colours, Markdown, borders' titles), measured on the rendered screen (the colours a terminal
gets, after Textual's filters), in the dark and the light theme; NO_COLOR respected."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.color import Color
from textual.color import Color as TColor
from textual.filter import dim_color
from textual.widget import Widget

from tests.tui_events import START, EventLog, failed_call, main_view, subagents_with_inbox
from workbench.config.settings import Settings
from workbench.pb import workbench_pb2 as pb
from workbench.tui.app import WorkbenchApp
from workbench.tui.approval import ApprovalScreen
from workbench.tui.items import Item
from workbench.tui.picker import ResumePicker
from workbench.tui.tool_block import ToolBlock
from workbench.tui.transcript import Transcript

MINIMUM = 4.5  # WCAG AA for text
SEARCH_STYLES = ("transcript--match", "transcript--match-current")  # Ctrl+F: every occurrence, the current one

pytestmark = pytest.mark.tui


def luminance(rgb: tuple[int, int, int]) -> float:
    def channel(c: int) -> float:
        v = c / 255
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def cells(app: WorkbenchApp, y: int, x0: int, x1: int) -> Iterator[tuple[str, float]]:
    """(text, contrast) of each visible run of text of screen row `y` between x0 and x1."""
    strip = app.screen._compositor.render_strips()[y]
    for line_filter in app._filters:
        strip = strip.apply_filter(line_filter, TColor.parse("black"))
    x = 0
    for segment in strip:
        text, style = segment.text, segment.style
        readable = "".join(c for c in text if not ("\u2500" <= c <= "\u259f") and not c.isspace())
        if style is not None and x + len(text) > x0 and x < x1 and readable:  # text: not the tree's guides
            fg = (style.color or Color.parse("white")).get_truecolor()
            bg = (style.bgcolor or Color.parse("black")).get_truecolor()
            if style.dim:
                dimmed = dim_color(TColor(*bg), TColor(*fg))
                fg = (dimmed.r, dimmed.g, dimmed.b)
            if style.reverse:
                fg, bg = bg, fg
            yield text.strip(), contrast(tuple(fg), tuple(bg))  # type: ignore[arg-type]
        x += len(text)


def unreadable(app: WorkbenchApp, where: str, dialog: str = "") -> list[str]:
    """Every run of text below 4.5:1 on the whole screen (or, with a modal up, in its `dialog` and
    its footer: the screen behind it is faded on purpose), with its row and what was on screen."""
    if dialog:
        regions = [app.screen.query_one(dialog).region, *(f.region for f in app.screen.query("Footer"))]
    else:
        regions = [app.screen.region]
    return [
        f"{where}, row {y}: {text!r} at {ratio:.2f}:1"
        for region in regions
        for y in range(region.y, region.bottom)
        for text, ratio in cells(app, y, region.x, region.right)
        if ratio < MINIMUM
    ]


def worst(app: WorkbenchApp, widget: Widget, line: int) -> tuple[float, str]:
    region = widget.content_region
    found = list(cells(app, region.y + line, region.x, region.right))
    assert found, f"nothing drawn on line {line} of {widget}"
    ratio, text = min((r, t) for t, r in found)
    return ratio, text


def row_of(transcript: Transcript, item: Item, line: int = 0) -> int:
    """The row in view of line `line` of `item` (its top margin not counted)."""
    number, view = transcript.index(item.key), transcript.view(item)
    return transcript.frame().index((number, view.margin_top + line))


@pytest.mark.parametrize("theme", ["dark", "light"])
async def test_selection_and_focus_styles_keep_text_readable(tmp_path: Path, theme: str) -> None:
    settings = Settings(model="openai/gpt-4.1", workspace=tmp_path, data_dir=tmp_path / "d", theme=theme)
    app = WorkbenchApp(settings, clock=lambda: START + 60, blink=False, preload=False, offline=True)
    async with app.run_test(size=(140, 40)) as pilot:
        app.apply_events(subagents_with_inbox().events)
        await pilot.pause()
        agents = app.agents_pane
        agents.focus()
        agents.select_agent("a2")  # a failed child: its label is red, its cursor must not be
        await pilot.pause()
        await pilot.pause()
        assert agents.selected_agent == "a2"
        ratio, text = worst(app, agents, agents.cursor_line - round(agents.scroll_y))
        assert ratio >= MINIMUM, f"Agents cursor row: {text!r} at {ratio:.2f}:1"
        inbox = app.inbox_pane
        inbox.focus()
        inbox.highlighted = 1  # the failed child's item: red text on the highlight
        await pilot.pause()
        first = next(y for y, (index, _) in enumerate(inbox._lines) if index == 1)
        for line in (first, first + 1):
            ratio, text = worst(app, inbox, line - round(inbox.scroll_y))
            assert ratio >= MINIMUM, f"Inbox highlight: {text!r} at {ratio:.2f}:1"
        footer = app.query_one("Footer")
        ratio, text = worst(app, footer, 0)
        assert ratio >= MINIMUM, f"footer: {text!r} at {ratio:.2f}:1"

    app = WorkbenchApp(settings, clock=lambda: START + 60, blink=False, preload=False, offline=True)
    async with app.run_test(size=(140, 40)) as pilot:
        app.apply_events(failed_call().events)
        await pilot.pause()
        transcript = app.transcript
        transcript.focus()
        block = next(view for view in transcript.item_views() if isinstance(view, ToolBlock))
        transcript.select(block.item)
        await pilot.pause()
        ratio, text = worst(app, transcript, row_of(transcript, block.item))
        assert ratio >= MINIMUM, f"transcript cursor on a failed call: {text!r} at {ratio:.2f}:1"
        app.prompt_input.focus()
        await pilot.pause()
        ratio, text = worst(app, app.working_line if app.working_line.display else app.status_line, 0)
        assert ratio >= MINIMUM, f"status: {text!r} at {ratio:.2f}:1"


def with_everything() -> EventLog:
    """The main view and more: a retry, a queued prompt, an Inbox delivery, a notice of each level."""
    log = main_view()
    log.add("main", "retry_wait", pb.RetryWait(attempt=1, max_attempts=3, seconds=4, reason="HTTP 500: upstream"))
    log.add("main", "notice", pb.Notice(text="a warning notice", level="warning"))
    log.add("main", "notice", pb.Notice(text="an error notice", level="error"))
    inbox = pb.Message(role=pb.ROLE_USER, text="[Inbox: 1 item] tests (a1) completed", author=pb.AUTHOR_INBOX)
    log.add("main", "message", inbox)
    log.add("main", "prompt_queued", pb.PromptQueued(text="and the docs too"))
    return log


async def screens(app: WorkbenchApp, pilot: Any, log: EventLog) -> AsyncIterator[tuple[str, str]]:
    """Show one state after another; yield a name for each and the modal's dialog, if one is up."""

    async def drawn() -> None:
        await pilot.pause()
        await pilot.pause()

    app.apply_events(log.events)
    await drawn()
    for view in app.transcript.item_views():  # every call open: outputs, causes, diffs
        if isinstance(view, ToolBlock) and not view.expanded:
            view.toggle()
            app.transcript.update({view.item.key})
    await drawn()
    yield "the prompt focused", ""
    app.transcript.focus()
    await drawn()
    yield "the transcript focused", ""
    for agent in [a for a in app.view.agents if a != "main"]:  # each child's transcript and row
        app.agents_pane.focus()
        app.agents_pane.select_agent(agent)
        await drawn()
        yield f"agent {agent} selected", ""
    app.prompt_input.focus()
    app.notify("a note for the person", timeout=30)
    await drawn()
    yield "a toast", ""
    await pilot.press("f1")
    await drawn()
    yield "the keys screen", "#help"
    await pilot.press("escape")
    await pilot.press("ctrl+o")
    await drawn()
    yield "the changed files", "#files"
    await pilot.press("escape")
    await pilot.press("ctrl+f")
    await pilot.press(*"the")
    await drawn()
    match, current = (app.transcript.get_component_rich_style(name).bgcolor for name in SEARCH_STYLES)
    drawn_backgrounds = {s.style.bgcolor for strip in app.screen._compositor.render_strips() for s in strip if s.style}
    if app.matches:  # the current match in its own colours, other matches in theirs: measured with the rest
        assert current in drawn_backgrounds and (len(app.matches) == 1 or match in drawn_backgrounds)
    yield "a search with matches", ""
    await pilot.press("escape")
    call = pb.ToolCall(id="call_r", name="write_file", arguments='{"path": "notes.md", "content": "hi"}')
    shown = "--- a/notes.md\n+++ b/notes.md\n@@ -1 +1 @@\n-old line\n+hi"
    decision = pb.GuardDecision(call_id="call_r", call=call, reason="writes a file", shown=shown)
    app.push_screen(ApprovalScreen(decision, agent="a1", task="run the test suite and report failures"))
    await drawn()
    yield "the approval modal", "#approval"
    app.pop_screen()
    sessions = [pb.SessionInfo(id="5e55aa", title="fix the login check", workspace="/w", model="openai/gpt-4.1")]
    app.push_screen(ResumePicker(sessions, "/w"))
    await drawn()
    yield "the resume picker", "#picker"


@pytest.mark.parametrize("theme", ["dark", "light"])
async def test_every_text_on_the_screen_is_readable(tmp_path: Path, theme: str) -> None:
    """Not only the selection: muted and dim text (notices, the agent rows' cost and activity, the
    header's path), status colours on the bars, inline code, the prompt's title when it is blurred."""
    settings = Settings(model="openai/gpt-4.1", workspace=tmp_path, data_dir=tmp_path / "d", theme=theme)
    failures: list[str] = []
    for size in ((140, 40), (80, 24)):
        for make in (with_everything, failed_call, subagents_with_inbox):
            app = WorkbenchApp(settings, clock=lambda: START + 60, blink=False, preload=False, offline=True)
            async with app.run_test(size=size) as pilot:
                async for where, dialog in screens(app, pilot, make()):
                    failures += unreadable(app, f"{size[0]}x{size[1]} {make.__name__}, {where}", dialog)
    assert not failures, "\n".join(dict.fromkeys(failures))


async def test_no_color_draws_no_colour(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    settings = Settings(model="openai/gpt-4.1", workspace=tmp_path, data_dir=tmp_path / "d")
    app = WorkbenchApp(settings, clock=lambda: START + 60, blink=False, preload=False, offline=True)
    async with app.run_test(size=(100, 30)) as pilot:
        app.apply_events(failed_call().events)
        await pilot.pause()
        strips = app.screen._compositor.render_strips()
        colours = set()
        for strip in strips:
            for line_filter in app._filters:
                strip = strip.apply_filter(line_filter, TColor.parse("black"))
            for segment in strip:
                for color in (segment.style.color, segment.style.bgcolor) if segment.style else ():
                    if color is not None:
                        r, g, b = color.get_truecolor()
                        colours.add((r, g, b))
        assert colours and all(r == g == b for r, g, b in colours)  # greys only
