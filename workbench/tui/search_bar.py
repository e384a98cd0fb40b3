"""Ctrl+F: search the shown transcript. Every occurrence is highlighted where it is drawn; Enter
(or Down) goes to the next, Shift+Enter (or Up) to the previous, Esc closes. Every item is
searched, drawn or not; the text is matched as it is, never read as markup or a pattern."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, NamedTuple

from textual.binding import BindingType
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Input, Static

from workbench.tui.item_view import fold, occurrences
from workbench.tui.items import AssistantItem, Item, NoticeItem, ToolItem, UserItem
from workbench.tui.keymap import bindings
from workbench.tui.text import printable

if TYPE_CHECKING:
    from workbench.tui.transcript import Transcript


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


class TranscriptSearch:
    """The search of the shown transcript: its bar, its count line, its matches and which is current."""

    def __init__(self, transcript: Transcript, row: Widget, bar: SearchBar, info: Static) -> None:
        self.transcript, self.row, self.bar, self.info = transcript, row, bar, info
        self.matches: list[Match] = []  # the search's matches in the shown transcript
        self.index = -1

    def open(self) -> None:
        """Ctrl+F: the search row shows, its field takes the focus, and the search runs again."""
        self.row.display = True
        self.bar.focus()
        self.run(self.bar.value)

    def close(self) -> None:
        """Esc in the field: the row and the highlights go, the transcript takes the focus."""
        self.row.display = False
        self.transcript.mark("")
        self.transcript.focus()

    def run(self, query: str) -> None:
        """Find `query` in the shown transcript again (typed, opened, or another agent shown)."""
        self.matches = find(self.transcript.items, query)
        self.index = -1
        self.transcript.mark(query)
        self._count()

    def typed(self, query: str) -> None:
        self.run(query)
        if self.matches:
            self.goto(len(self.matches) - 1)  # the newest match first

    def step(self, step: int) -> None:
        if self.matches:
            self.goto(self.index + step if self.index >= 0 else len(self.matches) - 1)

    def goto(self, index: int) -> None:
        self.index = index % len(self.matches)
        self.transcript.reveal(self.matches[self.index])
        self._count()

    def _count(self) -> None:
        count, at = len(self.matches), self.index + 1
        shown = f"{at} of {count}" if at else f"{count} match{'es' if count != 1 else ''}"
        self.info.update(shown if self.bar.value else "type to search")
