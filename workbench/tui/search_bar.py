"""Ctrl+F: search the shown transcript. Every occurrence is highlighted where it is drawn; Enter
(or Down) goes to the next, Shift+Enter (or Up) to the previous, Esc closes. Every item is
searched, drawn or not; the text is matched as it is, never read as markup or a pattern."""

from __future__ import annotations

from typing import ClassVar, NamedTuple

from textual.binding import BindingType
from textual.message import Message
from textual.widgets import Input

from workbench.tui.item_view import fold, occurrences
from workbench.tui.items import AssistantItem, Item, NoticeItem, ToolItem, UserItem
from workbench.tui.keymap import bindings
from workbench.tui.text import printable


class Match(NamedTuple):
    """One occurrence of the searched text: its item, and which occurrence in the item (from 0)."""

    item: Item
    occurrence: int


def item_text(item: Item) -> str:
    """What a search looks through in one item, as the screen shows it (escape codes as `\\x1b`)."""
    if isinstance(item, (UserItem, AssistantItem, NoticeItem)):
        return printable(item.text)
    if isinstance(item, ToolItem):
        result = item.result
        parts = [item.call.name, item.summary, item.streamed]
        if result is not None:
            parts += [result.output, result.error]
        return printable("\n".join(parts))
    return ""


def find(items: list[Item], query: str) -> list[Match]:
    """Every occurrence of `query` in `items`, oldest first (case-insensitive; the query as the
    screen would show it, so a pasted escape code finds the `\\x1b` drawn for one)."""
    needle = fold(printable(query))
    if not needle:
        return []
    return [
        Match(item, number) for item in items for number, _ in enumerate(occurrences(fold(item_text(item)), needle))
    ]


class SearchBar(Input):
    """The search field under the transcript (hidden until Ctrl+F)."""

    BINDINGS: ClassVar[list[BindingType]] = bindings("search")

    class Step(Message):
        """Go to the next (+1) or previous (-1) match."""

        def __init__(self, step: int) -> None:
            super().__init__()
            self.step = step

    class Closed(Message):
        pass

    def validate_value(self, value: str) -> str:
        """A pasted control character (an escape code) is shown and searched as its escape (`\\x1b`):
        never written to the terminal."""
        return printable(value)

    def action_next_match(self) -> None:
        self.post_message(self.Step(1))

    def action_previous_match(self) -> None:
        self.post_message(self.Step(-1))

    def action_close_search(self) -> None:
        self.post_message(self.Closed())
