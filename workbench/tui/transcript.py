"""The selected agent's transcript: one widget that draws only the rows in view (Textual's Line API).

Every item of the agent (the view model's list, built from the event log) is there to scroll to;
none is a widget. Each item draws through its `ItemView` (messages.py, tool_block.py) into lines
at the pane's width, kept in a bounded cache until the item or its view changes. The position is
an item and a row within it (`top`), or the end (`top` None: following what arrives), so Home,
End and a jump to a search match cost only the rows they show, however long the session
(docs/DECISIONS.md, 2026-12-01). The scroll bar's thumb shows the position by item.

The transcript is one tab stop: Up and Down move a cursor between its items (a tall item
scrolls first), Enter opens or closes the item under it, `t` shows a defect's traceback,
PageUp/PageDown and the mouse wheel scroll. Search (Ctrl+F) highlights every occurrence of the
searched text in the rows drawn, the current one in its own colour.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from rich.console import RenderableType
from rich.segment import Segment
from textual import events
from textual.binding import BindingType
from textual.cache import LRUCache
from textual.strip import Strip
from textual.widget import Widget

from workbench.tui.item_view import ItemView, mark_matches, render_strips
from workbench.tui.items import AssistantItem, Item, NoticeItem, ToolItem, UserItem
from workbench.tui.keymap import bindings
from workbench.tui.messages import AssistantMessage, NoticeLine, UserMessage
from workbench.tui.search_bar import Match
from workbench.tui.text import printable
from workbench.tui.tool_block import ToolBlock

CACHED_ITEMS = 1000  # items whose drawn lines are kept (the rest draw again when scrolled to)
WHEEL_ROWS = 3
Position = tuple[int, int]  # (index of an item, row within it: its top margin first)


def item_view(item: Item, clock: Callable[[], float]) -> ItemView:
    if isinstance(item, ToolItem):
        return ToolBlock(item)
    if isinstance(item, AssistantItem):
        return AssistantMessage(item)
    if isinstance(item, UserItem):
        return UserMessage(item)
    assert isinstance(item, NoticeItem)
    return NoticeLine(item, clock)


WELCOME_ITEMS = 20  # items past which a transcript is not before its first prompt (no scan for one)


class Transcript(Widget, can_focus=True):
    """The transcript of one agent. `show` switches agent; `add` and `update` follow the view model."""

    BINDINGS: ClassVar[list[BindingType]] = bindings("transcript")
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "transcript--user",
        "transcript--from-agent",
        "transcript--queued",
        "transcript--notice",
        "transcript--cursor",
        "transcript--cursor-bar",
        "transcript--error-bar",
        "transcript--match",
        "transcript--match-current",
        "transcript--scrollbar",
        "transcript--scrollbar-thumb",
    }

    def __init__(self, clock: Callable[[], float], **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.clock = clock
        self.agent_id = ""
        self.items: list[Item] = []
        self.views: dict[int, ItemView] = {}  # Item.key -> its view (made when first needed)
        self._index: dict[int, int] = {}  # Item.key -> its index in `items`
        self._lines: LRUCache[int, tuple[object, list[Strip]]] = LRUCache(CACHED_ITEMS)
        self.top: Position | None = None  # the first row in view; None: the end, following it
        self.cursor = 0  # Item.key of the item under the cursor; 0: none
        self.needle = ""  # the search's text ("" when no search is open)
        self.current: tuple[int, int] | None = None  # (Item.key, occurrence) of the current match
        self._opened: ItemView | None = None  # an item the search opened to show its current match
        self._frame: list[Position] | None = None  # per row in view: its item and row (-1: blank)
        self._rows: list[Strip] | None = None
        self.welcome: RenderableType | None = None  # drawn above the items before the first prompt (welcome.py)
        self._welcome: tuple[int, list[Strip]] | None = None  # its lines at a width

    def on_mount(self) -> None:
        self.set_interval(1.0, self._tick)

    # --- the items -----------------------------------------------------------------------

    def show(self, agent_id: str, items: list[Item]) -> None:
        """Show `items` (the view model's list for the agent: it grows in place) from the end."""
        self.agent_id, self.items = agent_id, items
        self._index.clear()
        self.top, self.cursor, self.current = None, 0, None
        self._invalidate()

    def add(self, added: list[Item]) -> None:
        """Items appended to the shown agent's list (drawn when in view). Before any agent is
        shown (a prompt typed while the session opens), the transcript keeps them itself."""
        if not added:
            return
        if not self.agent_id and self.index(added[-1].key) < 0:
            self.items.extend(added)
        self._invalidate()

    def update(self, keys: set[int]) -> None:
        """Items that changed (their lines are drawn again when in view)."""
        if keys:
            self._invalidate()

    def view(self, item: Item) -> ItemView:
        view = self.views.get(item.key)
        if view is None:
            view = self.views[item.key] = item_view(item, self.clock)
        return view

    def item_views(self) -> list[ItemView]:
        """A view of every item, oldest first."""
        return [self.view(item) for item in self.items]

    def index(self, key: int) -> int:
        """The index in `items` of the item with `key` (-1 when it is not there)."""
        if key not in self._index and len(self._index) < len(self.items):
            for number in range(len(self._index), len(self.items)):
                self._index[self.items[number].key] = number
        return self._index.get(key, -1)

    def lines(self, item: Item) -> list[Strip]:
        """The item's lines at the pane's width (without the gutter, the cursor or the search's marks)."""
        view = self.view(item)
        width = max(1, self.size.width - 3)  # the gutter, a space and the scroll bar
        key = (item.version, width, view.state())
        cached = self._lines.get(item.key)
        if cached is not None and cached[0] == key:
            return cached[1]
        drawn = render_strips(self.app.console, view.renderable(width), width)
        self._lines.set(item.key, (key, drawn))
        return drawn

    def text_of(self, item: Item) -> str:
        """The item as drawn, in plain text (what a person reads; tests use it)."""
        return "\n".join(strip.text.rstrip() for strip in self.lines(item))

    def _height(self, number: int) -> int:
        item = self.items[number]
        view = self.view(item)
        return view.margin_top + len(self.lines(item)) if view.shown() else 0

    # --- the rows in view ----------------------------------------------------------------

    def _invalidate(self) -> None:
        self._frame = self._rows = None
        self.refresh()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._rows = None

    def on_resize(self) -> None:
        self._invalidate()

    def frame(self) -> list[Position]:
        """(item index, row within it) of each row in view, top to bottom; (-1, 0) for blank rows."""
        if self._frame is None:
            self._frame = self._layout()
        return self._frame

    def _layout(self) -> list[Position]:
        """The welcome's rows (blank positions), then the items' in the rest of the pane."""
        head = min(len(self.welcome_lines()), max(self.size.height, 0))
        return [(-1, 0)] * head + self._item_rows(self.size.height - head)

    def _item_rows(self, height: int) -> list[Position]:
        count = len(self.items)
        if height <= 0:
            return []
        rows: list[Position] = []
        if self.top is not None:
            number, offset = self.top
            while number < count and len(rows) < height:
                rows.extend((number, r) for r in range(offset, min(self._height(number), offset + height - len(rows))))
                number, offset = number + 1, 0
            if len(rows) == height:
                return rows
            self.top = None  # past the end: the end, followed
            rows = []
        number = count - 1
        while number >= 0 and len(rows) < height:  # the end, drawn upwards
            size = self._height(number)
            rows[0:0] = [(number, r) for r in range(max(0, size - (height - len(rows))), size)]
            number -= 1
        return rows + [(-1, 0)] * (height - len(rows))  # shorter than the pane: it reads from the top

    def render_line(self, y: int) -> Strip:
        if self._rows is None or len(self._rows) != self.size.height:
            self._rows = self._draw()
        if 0 <= y < len(self._rows):
            return self._rows[y]
        return Strip.blank(self.size.width, self.rich_style)

    def show_welcome(self, welcome: RenderableType | None) -> None:
        """What the pane shows at its top until the first prompt (welcome.py; None: nothing)."""
        self.welcome, self._welcome = welcome, None
        self._invalidate()

    def welcome_lines(self) -> list[Strip]:
        """The welcome's rows (a blank row above and below), while no prompt is in the transcript:
        before it only a few notices come (an approval mode switched), drawn below it."""
        if self.welcome is None or len(self.items) > WELCOME_ITEMS or any(isinstance(i, UserItem) for i in self.items):
            return []
        width = max(1, self.size.width - 3)
        if self._welcome is None or self._welcome[0] != width:
            blank = Strip.blank(width)
            self._welcome = (width, [blank, *render_strips(self.app.console, self.welcome, width), blank])
        return self._welcome[1]

    def _draw(self) -> list[Strip]:
        frame, width, base = self.frame(), self.size.width, self.rich_style
        welcome = self.welcome_lines()
        style = self.get_component_rich_style
        cursor = self.index(self.cursor) if self.has_focus and self.cursor else -1
        bar = self._scroll_bar(frame)
        marked: dict[int, list[Strip]] = {}
        rows: list[Strip] = []
        for y, (number, row) in enumerate(frame):
            thumb = Segment(" ", style("transcript--scrollbar-thumb" if bar[y] else "transcript--scrollbar"))
            if y < len(welcome):
                rows.append(Strip([Segment(" "), *welcome[y], Segment(" "), thumb], width).apply_style(base))
                continue
            if number < 0:
                rows.append(Strip([Segment(" " * (width - 1), base), thumb], width))
                continue
            view = self.view(self.items[number])
            if row < view.margin_top:
                rows.append(Strip([Segment(" " * (width - 1), base), thumb], width))
                continue
            if number not in marked:
                marked[number] = self._marked(self.items[number])
            line = marked[number][row - view.margin_top]
            if view.component:
                line = line.apply_style(style(view.component))
            gutter = Segment(" ")
            if number == cursor:
                line = line.apply_style(style("transcript--cursor"))
                gutter = Segment("▌", style("transcript--cursor-bar"))
            elif view.failed():
                gutter = Segment("▌", style("transcript--error-bar"))
            strip = Strip([gutter, *line, Segment(" "), thumb], width)
            rows.append(strip.apply_style(base))
        return rows

    def _marked(self, item: Item) -> list[Strip]:
        lines = self.lines(item)
        if not self.needle:
            return lines
        occurrence = self.current[1] if self.current is not None and self.current[0] == item.key else -1
        style = self.get_component_rich_style
        marked, _ = mark_matches(
            lines, self.needle, style("transcript--match"), style("transcript--match-current"), occurrence
        )
        return marked

    def _scroll_bar(self, frame: list[Position]) -> list[bool]:
        """Which rows the thumb covers: the items in view among all of them (none when all fit)."""
        height, count = len(frame), len(self.items)
        numbers = [number for number, _ in frame if number >= 0]
        if not numbers or (frame[-1][0] < 0 and numbers[0] == 0) or count == 0:
            return [False] * height
        start = min(height - 1, numbers[0] * height // count)
        end = max(start + 1, min(height, -(-(numbers[-1] + 1) * height // count)))
        return [start <= y < end for y in range(height)]

    def _tick(self) -> None:
        """Once a second: redraw a retry's countdown in view."""
        if any(number >= 0 and self.view(self.items[number]).ticking() for number, _ in self.frame()):
            self._invalidate()

    # --- moving --------------------------------------------------------------------------

    def _top_now(self) -> Position:
        """The first row in view as a position (also when following the end)."""
        return next(((n, r) for n, r in self.frame() if n >= 0), (0, 0))

    def _above(self, number: int, row: int, rows: int) -> Position:
        """The position `rows` rows above (number, row)."""
        while row < rows:
            rows -= row + 1
            number -= 1
            while number >= 0 and self._height(number) == 0:
                number -= 1
            if number < 0:
                return (0, 0)
            row = self._height(number) - 1
        return (number, row - rows)

    def scroll_rows(self, rows: int) -> None:
        """Scroll `rows` rows down (up when negative); at the end, the transcript follows it again."""
        number, row = self._top_now()
        if rows < 0:
            number, row = self._above(number, row, -rows)
        else:
            row += rows
            while number < len(self.items) - 1 and row >= self._height(number):
                row -= self._height(number)
                number += 1
        self.top = (number, row)
        self._invalidate()
        if rows > 0 and self._at_end():
            self.top = None  # scrolled down to the end: follow it again

    def _at_end(self) -> bool:
        """True when the last row in view is the last row of the last item drawn."""
        last_number, last_row = self.frame()[-1] if self.frame() else (-1, 0)
        if last_number < 0:
            return True
        return last_row == self._height(last_number) - 1 and self._shown_from(last_number + 1, 1) is None

    def scroll_to_row(self, number: int, row: int = 0, context: int = 0) -> None:
        """Bring row `row` of item `number` into view (`context` rows above it when it was out of view)."""
        if (number, row) not in self.frame():
            self.top = self._above(number, row, context)
            self._invalidate()

    def show_item(self, number: int) -> None:
        """Bring the whole item into view (its start, when it is taller than the pane)."""
        frame, size = self.frame(), self._height(number)
        if size == 0 or ((number, 0) in frame and (number, size - 1) in frame):
            return
        height = self.size.height
        if size >= height or (frame and frame[0][0] >= number):
            self.top = (number, 0)
        else:
            self.top = self._above(number, size - 1, height - 1)
        self._invalidate()

    # --- the cursor ----------------------------------------------------------------------

    def current_view(self) -> ItemView | None:
        number = self.index(self.cursor) if self.cursor else -1
        return self.view(self.items[number]) if number >= 0 else None

    def select(self, item: Item | None, scroll: bool = True) -> None:
        self.cursor = item.key if item is not None else 0
        if item is not None and scroll:
            self.show_item(self.index(item.key))
        self._invalidate()

    def _shown_from(self, number: int, step: int) -> Item | None:
        while 0 <= number < len(self.items):
            if self.view(self.items[number]).shown():
                return self.items[number]
            number += step
        return None

    def _last(self) -> Item | None:
        return self._shown_from(len(self.items) - 1, -1)

    def on_focus(self) -> None:
        if self.current_view() is None:
            self.select(self._last())
        self._invalidate()

    def on_blur(self) -> None:
        self._invalidate()

    def action_next_item(self) -> None:
        number = self.index(self.cursor) if self.cursor else -1
        if number < 0:
            self.select(self._last())
            return
        frame = self.frame()
        if frame and frame[-1][0] == number and frame[-1][1] < self._height(number) - 1:
            self.top = self._top_now()  # a tall item: read it to its end first
            self.scroll_rows(max(1, self.size.height // 2))
            return
        following = self._shown_from(number + 1, 1)
        if following is not None:
            self.select(following)

    def action_previous_item(self) -> None:
        number = self.index(self.cursor) if self.cursor else -1
        if number < 0:
            self.select(self._last())
            return
        self.top = self._top_now()  # moving back: new items no longer move the view
        frame = self.frame()
        if frame and frame[0][0] == number and frame[0][1] > self.view(self.items[number]).margin_top:
            self.scroll_rows(-max(1, self.size.height // 2))  # a tall item: back to its start first
            return
        before = self._shown_from(number - 1, -1)
        if before is not None:
            self.select(before)

    def action_toggle_item(self) -> None:
        view = self.current_view()
        if view is not None and view.can_open:
            view.toggle()
            self._invalidate()
            self.show_item(self.index(self.cursor))

    def action_traceback(self) -> None:
        view = self.current_view()
        if view is None or not view.show_defect():
            self.notify("No traceback here: t shows the traceback of a call or notice marked defect.", timeout=4)
            return
        self._invalidate()

    def action_first_item(self) -> None:
        """The oldest item, at once."""
        self.top = (0, 0)
        self.select(self._shown_from(0, 1), scroll=False)

    def action_last_item(self) -> None:
        self.top = None
        self.select(self._last(), scroll=False)

    def action_page_up(self) -> None:
        self.scroll_rows(-max(1, self.size.height - 1))

    def action_page_down(self) -> None:
        self.scroll_rows(max(1, self.size.height - 1))

    def on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        event.stop()
        self.scroll_rows(WHEEL_ROWS)

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        event.stop()
        self.scroll_rows(-WHEEL_ROWS)

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        frame = self.frame()
        if offset.x >= self.size.width - 1 and self.items:  # the scroll bar: that part of the transcript
            self.top = (min(len(self.items) - 1, offset.y * len(self.items) // max(1, len(frame))), 0)
            self._invalidate()
            return
        if 0 <= offset.y < len(frame) and frame[offset.y][0] >= 0:
            item = self.items[frame[offset.y][0]]
            self.select(item, scroll=False)
            view = self.view(item)
            if view.can_open:
                view.toggle()
                self._invalidate()

    # --- search --------------------------------------------------------------------------

    def mark(self, needle: str) -> None:
        """Highlight every occurrence of `needle` in the rows drawn ("" clears the search)."""
        self._conceal()
        self.needle, self.current = printable(needle), None
        self._invalidate()

    def _conceal(self) -> None:
        """Close what the search opened to show its current match."""
        if self._opened is not None:
            self._opened.conceal()
            self._opened = None

    def reveal(self, match: Match) -> None:
        """Make `match` the current one: its item under the cursor, the item opened to show it, in view."""
        item = match.item
        number = self.index(item.key)
        if number < 0:
            return
        view = self.view(item)
        if self._opened is not view:
            self._conceal()
            if view.reveal_text(self.needle, match.occurrence):
                self._opened = view
        self.current = (item.key, match.occurrence)
        self.cursor = item.key
        style = self.get_component_rich_style
        lines = self.lines(item)
        _, line = mark_matches(
            lines, self.needle, style("transcript--match"), style("transcript--match-current"), match.occurrence
        )
        self._invalidate()
        if line < 0:
            self.show_item(number)
        else:
            self.scroll_to_row(number, view.margin_top + line, context=self.size.height // 3)
