"""The selected agent's transcript: a window of mounted widgets over its items, and a cursor.

Only the newest `WINDOW` items have widgets; the view model keeps every item (built from the
event log), so scrolling to the top mounts the `STEP` items before the window (and Home
loads all of them, a step at a time), and following the live end drops widgets that fell far
behind. History is never thrown away, only its widgets.

The transcript is one tab stop: Up and Down move a cursor between its items (a tall item
scrolls first), Enter opens or closes the item under it, `t` shows a defect's traceback.
Search (Ctrl+F) jumps the cursor to matching items, mounting a window around one far back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from rich.text import Text
from textual import events
from textual.binding import BindingType
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

from workbench.tui.items import AssistantItem, Item, NoticeItem, ToolItem, UserItem
from workbench.tui.keymap import bindings
from workbench.tui.messages import AssistantMessage, NoticeLine, UserMessage
from workbench.tui.tool_block import ToolBlock

WINDOW = 60  # widgets kept mounted while following the end
STEP = 30  # items mounted at a time when scrolling back


def item_widget(item: Item, clock: Callable[[], float]) -> Widget:
    if isinstance(item, ToolItem):
        return ToolBlock(item)
    if isinstance(item, AssistantItem):
        return AssistantMessage(item)
    if isinstance(item, UserItem):
        return UserMessage(item)
    assert isinstance(item, NoticeItem)
    return NoticeLine(item, clock)


class Transcript(VerticalScroll, can_focus=True):
    """The transcript of one agent. `show` switches agent; `add` and `update` follow the view model."""

    BINDINGS: ClassVar[list[BindingType]] = bindings("transcript")

    def __init__(self, clock: Callable[[], float], **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.clock = clock
        self.agent_id = ""
        self.items: list[Item] = []
        self.first = 0  # index in `items` of the first mounted item
        self.widgets: dict[int, Widget] = {}  # Item.key -> its mounted widget
        self._marker = Static(markup=False, classes="earlier")
        self._loading = False
        self._behind = False  # scrolled back while many items arrived: the tail is rebuilt at the end
        self.cursor = 0  # Item.key of the item under the cursor; 0: none
        self.matches: set[int] = set()  # Item.key of the search's matches (highlighted)
        self._following = False  # anchored to the end (once the items filled the pane)

    def on_mount(self) -> None:
        self.mount(self._marker)

    def follow_end(self) -> None:
        """Keep the newest item in view once the items fill the pane (anchored earlier, Textual
        would draw a short transcript at the bottom of the pane: it reads top-down instead)."""
        if not self._following and self.virtual_size.height > self.scrollable_content_region.height:
            self._following = True
            self.anchor()

    def show(self, agent_id: str, items: list[Item]) -> None:
        """Show `items` (the view model's list for the agent: it grows in place) from the end."""
        self._remount(agent_id, items, max(0, len(items) - WINDOW), len(items))
        self._following = False
        self.call_after_refresh(self.follow_end)

    def _remount(self, agent_id: str, items: list[Item], first: int, end: int) -> None:
        self.agent_id, self.items = agent_id, items
        self._behind = end < len(items)  # a window far back: new items wait, the end rebuilds the tail
        for widget in self.widgets.values():
            widget.remove()
        self.widgets.clear()
        self.first = first
        self._mount_tail(items[first:end])
        self._update_marker()

    def add(self, added: list[Item]) -> None:
        """Items appended to the shown agent's list: mount those inside the window.

        Following the end, the window slides: widgets that fall out of it are removed and a burst
        of new items mounts only its tail. Scrolled back, new items wait (at most a few windows
        are mounted) and the tail is rebuilt when the person returns to the end.
        """
        # an agent shown between the view's update and this redraw drew these items already (keys
        # grow along the list: one older than the window's first was left out on purpose)
        floor = self.items[self.first].key if self.first < len(self.items) else 0
        added = [item for item in added if item.key not in self.widgets and item.key >= floor]
        if not added:
            return
        if self._behind:
            return
        if not self.is_vertical_scroll_end and len(self.widgets) + len(added) > 4 * WINDOW:
            self._behind = True
            return
        if self.is_vertical_scroll_end and len(self.widgets) + len(added) > WINDOW + STEP:
            new_first = max(self.first, len(self.items) - WINDOW)
            for item in self.items[self.first : new_first]:
                widget = self.widgets.pop(item.key, None)
                if widget is not None:
                    widget.remove()
            self.first = new_first
            added = added[-(len(self.items) - new_first) :]
        self._mount_tail(added)
        self._update_marker()
        if not self._following:
            self.call_after_refresh(self.follow_end)

    def update(self, keys: set[int]) -> None:
        for key in keys:
            widget = self.widgets.get(key)
            if widget is not None:
                widget.refresh_item()  # type: ignore[attr-defined]
        if keys and not self._following:
            self.call_after_refresh(self.follow_end)

    def _mount_tail(self, items: list[Item]) -> None:
        widgets = [item_widget(item, self.clock) for item in items]
        for item, widget in zip(items, widgets, strict=True):
            self.widgets[item.key] = widget
            widget.set_class(item.key == self.cursor, "-cursor")
            widget.set_class(item.key in self.matches, "-match")
        if widgets:
            self.mount_all(widgets)

    def _update_marker(self) -> None:
        self._marker.display = self.first > 0
        if self.first:
            self._marker.update(Text(f"↑ {self.first} earlier items: scroll up or press Home", style="dim italic"))

    # --- scrolling back ----------------------------------------------------------------

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if new_value <= 0 < old_value and self.first > 0 and not self._loading:
            self.load_earlier()
        elif self._behind and new_value > old_value and new_value >= self.max_scroll_y:
            self.show(self.agent_id, self.items)  # back at the end: the newest items, mounted

    # --- the cursor --------------------------------------------------------------------

    def shown(self) -> list[Widget]:
        """The mounted item widgets, top to bottom (hidden ones, like an empty answer, left out)."""
        return [w for item in self.items[self.first :] if (w := self.widgets.get(item.key)) is not None and w.display]

    def current(self) -> Widget | None:
        return self.widgets.get(self.cursor)

    def select(self, widget: Widget | None, scroll: bool = True) -> None:
        old = self.current()
        if old is not None:
            old.remove_class("-cursor")
        self.cursor = widget.item.key if widget is not None else 0  # type: ignore[attr-defined]
        if widget is not None:
            widget.add_class("-cursor")
            if scroll:
                self.scroll_to_widget(widget, animate=False, top=widget.outer_size.height > self.size.height)

    def on_focus(self) -> None:
        if self.current() is None:
            shown = self.shown()
            self.select(shown[-1] if shown else None)

    def on_click(self, event: events.Click) -> None:
        widget = event.widget
        while widget is not None and widget.parent is not self:
            widget = widget.parent  # type: ignore[assignment]
        if widget is not None and widget is not self._marker:
            self.select(widget, scroll=False)

    def _visible(self) -> tuple[int, int]:
        top = round(self.scroll_y)
        return top, top + self.scrollable_content_region.height

    def action_next_item(self) -> None:
        shown, current = self.shown(), self.current()
        if current is None or current not in shown:
            self.select(shown[-1] if shown else None)
            return
        top, bottom = self._visible()
        if current.virtual_region.bottom > bottom:  # a tall item: read it to its end first
            self.release_anchor()
            self.scroll_relative(y=max(1, (bottom - top) // 2), animate=False)
            return
        index = shown.index(current)
        if index + 1 < len(shown):
            self.select(shown[index + 1])
        elif self._behind:
            self.show(self.agent_id, self.items)  # past a window far back: the newest items
            self.action_last_item()

    def action_previous_item(self) -> None:
        shown, current = self.shown(), self.current()
        if current is None or current not in shown:
            self.select(shown[-1] if shown else None)
            return
        top, _ = self._visible()
        self.release_anchor()
        if current.virtual_region.y < top:  # a tall item: back to its start first
            self.scroll_relative(y=-max(1, self.scrollable_content_region.height // 2), animate=False)
            return
        index = shown.index(current)
        if index == 0 and self.first > 0:
            self.load_earlier()
            self.call_after_refresh(self.action_previous_item)
        elif index > 0:
            self.select(shown[index - 1])

    def action_toggle_item(self) -> None:
        widget = self.current()
        if widget is not None and hasattr(widget, "action_toggle_open"):
            widget.action_toggle_open()
            self.call_after_refresh(self.select, widget)

    def action_traceback(self) -> None:
        widget = self.current()
        shows = getattr(widget, "show_defect", None)
        if shows is None or not shows():
            self.notify("No traceback here: t shows the traceback of a call or notice marked defect.", timeout=4)

    def action_first_item(self) -> None:
        """The oldest item, at once: a window of widgets is mounted at the start (the newest come
        back with End, or scrolling to the end)."""
        self.release_anchor()
        if self.first > 0:
            self._remount(self.agent_id, self.items, 0, min(len(self.items), WINDOW))
        self.scroll_home(animate=False)
        self.call_after_refresh(lambda: self.select(next(iter(self.shown()), None), scroll=False))

    def action_last_item(self) -> None:
        if self._behind:
            self.show(self.agent_id, self.items)
        shown = self.shown()
        self.select(shown[-1] if shown else None, scroll=False)
        self.scroll_end(animate=False)
        self._following = False
        self.call_after_refresh(self.follow_end)

    def reveal(self, item: Item) -> None:
        """Put the cursor on `item`, mounting a window around it when it is not mounted."""
        if item.key not in self.widgets:
            index = self.items.index(item)
            first = max(0, index - STEP // 2)
            self.release_anchor()
            self._remount(self.agent_id, self.items, first, min(len(self.items), first + WINDOW))
        self.call_after_refresh(lambda: self.select(self.widgets.get(item.key)))

    def mark(self, keys: set[int]) -> None:
        """Highlight the search's matches (and only them)."""
        for key in self.matches - keys:
            if (widget := self.widgets.get(key)) is not None:
                widget.remove_class("-match")
        self.matches = keys
        for key in keys:
            if (widget := self.widgets.get(key)) is not None:
                widget.add_class("-match")

    def load_earlier(self) -> None:
        """Mount the STEP items before the window, keeping what the person looks at in place."""
        if self.first == 0:
            return
        start = max(0, self.first - STEP)
        items = self.items[start : self.first]
        widgets = [item_widget(item, self.clock) for item in items]
        for item, widget in zip(items, widgets, strict=True):
            self.widgets[item.key] = widget
            widget.set_class(item.key in self.matches, "-match")
        self._loading = True
        height_before = self.virtual_size.height
        self.mount_all(widgets, after=self._marker)
        self.first = start
        self._update_marker()

        def keep_place() -> None:
            self.scroll_to(y=self.scroll_y + self.virtual_size.height - height_before, animate=False)
            self._loading = False

        self.call_after_refresh(keep_place)
