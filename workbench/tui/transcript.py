"""The selected agent's transcript: a window of mounted widgets over its items.

Only the newest `WINDOW` items have widgets; the view model keeps every item (built from the
event log), so scrolling to the top mounts the `STEP` items before the window (and Home
loads all of them, a step at a time), and following the live end drops widgets that fell far
behind. History is never thrown away, only its widgets.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

from workbench.tui.items import AssistantItem, Item, NoticeItem, ToolItem, UserItem
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

    BINDINGS: ClassVar[list[BindingType]] = [Binding("home", "load_earlier", "earlier", show=False)]

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

    def on_mount(self) -> None:
        self.mount(self._marker)
        self.anchor()

    def show(self, agent_id: str, items: list[Item]) -> None:
        """Show `items` (the view model's list for the agent: it grows in place) from the end."""
        self.agent_id, self.items = agent_id, items
        self._behind = False
        for widget in self.widgets.values():
            widget.remove()
        self.widgets.clear()
        self.first = max(0, len(items) - WINDOW)
        self._mount_tail(items[self.first :])
        self._update_marker()
        self.anchor()

    def add(self, added: list[Item]) -> None:
        """Items appended to the shown agent's list: mount those inside the window.

        Following the end, the window slides: widgets that fall out of it are removed and a burst
        of new items mounts only its tail. Scrolled back, new items wait (at most a few windows
        are mounted) and the tail is rebuilt when the person returns to the end.
        """
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

    def update(self, keys: set[int]) -> None:
        for key in keys:
            widget = self.widgets.get(key)
            if widget is not None:
                widget.refresh_item()  # type: ignore[attr-defined]

    def _mount_tail(self, items: list[Item]) -> None:
        widgets = [item_widget(item, self.clock) for item in items]
        for item, widget in zip(items, widgets, strict=True):
            self.widgets[item.key] = widget
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
        elif self._behind and new_value >= self.max_scroll_y:
            self.show(self.agent_id, self.items)  # back at the end: the newest items, mounted

    def action_load_earlier(self) -> None:
        self.release_anchor()
        self.load_earlier()
        self.scroll_home(animate=False)

    def load_earlier(self) -> None:
        """Mount the STEP items before the window, keeping what the person looks at in place."""
        if self.first == 0:
            return
        start = max(0, self.first - STEP)
        items = self.items[start : self.first]
        widgets = [item_widget(item, self.clock) for item in items]
        for item, widget in zip(items, widgets, strict=True):
            self.widgets[item.key] = widget
        self._loading = True
        height_before = self.virtual_size.height
        self.mount_all(widgets, after=self._marker)
        self.first = start
        self._update_marker()

        def keep_place() -> None:
            self.scroll_to(y=self.scroll_y + self.virtual_size.height - height_before, animate=False)
            self._loading = False

        self.call_after_refresh(keep_place)
