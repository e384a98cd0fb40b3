"""The Inbox pane: what subagents sent back to their parents, with the unread count.

Each item: the child, its final status and its cause (or a summary of its result). Enter on
an item selects that child in the Agents pane. An item is read once its recipient took it in
(an Inbox delivery in its transcript) or the person focused the pane.

The entries and the unread count are reactive (`show` sets both from the view model): new
entries are added as options, and the pane's title follows the counts.
"""

from __future__ import annotations

from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.binding import BindingType
from textual.message import Message
from textual.reactive import var
from textual.strip import Strip
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from workbench.core import words
from workbench.pb import workbench_pb2 as pb
from workbench.tui.agents_pane import STATUS_STYLE
from workbench.tui.keymap import bindings
from workbench.tui.text import one_line, printable
from workbench.tui.view import InboxEntry, SessionView


def entry_text(entry: InboxEntry) -> Text:
    item = entry.item
    if item.kind == pb.INBOX_KIND_MESSAGE:
        text = Text()
        text.append("✉ ", style="cyan")
        text.append(printable(item.child_name or item.child_id), style="bold")
        text.append(f" → {printable(entry.recipient)}\n  ", style="dim")
        text.append(one_line(item.text, 120))
        return text
    glyph, style = STATUS_STYLE.get(item.status, ("·", ""))
    text = Text()
    text.append(f"{glyph} ", style=style)
    text.append(printable(item.child_name or item.child_id), style="bold")
    text.append(f" {item.child_id}  {words.agent_status(item.status)}", style=style)
    detail = item.cause or item.result
    if detail:
        text.append("\n  ")
        text.append(one_line(detail, 120), style="red" if item.cause else "")
    return text


class InboxPane(OptionList):
    BINDINGS: ClassVar[list[BindingType]] = bindings("inbox")

    class Open(Message):
        """Show this child (Enter on its Inbox item)."""

        def __init__(self, agent_id: str) -> None:
            super().__init__()
            self.agent_id = agent_id

    entries: var[tuple[InboxEntry, ...] | None] = var(None, init=False)  # None: no session shown yet
    unread = var(0, init=False)

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.view: SessionView | None = None  # whose items the person reads by focusing the pane

    def show(self, view: SessionView) -> None:
        """The view model's Inbox (another session's: from the start)."""
        self.view = view
        self.entries = tuple(view.inbox)
        self.unread = view.unread

    def watch_entries(self, old: tuple[InboxEntry, ...] | None, new: tuple[InboxEntry, ...] | None) -> None:
        shown = old or ()
        if new is None or new[: len(shown)] != shown:  # not more of the same Inbox: another session's
            self.clear_options()
            shown = ()
        if new is not None and len(new) > len(shown):
            self.add_options([Option(entry_text(e), id=str(e.seq)) for e in new[len(shown) :]])
        self._title()

    def watch_unread(self) -> None:
        self._title()

    def _title(self) -> None:
        if self.entries is not None:
            unread = self.unread
            self.border_title = f"Inbox ({unread} unread)" if unread else f"Inbox ({len(self.entries)})"

    def render_line(self, y: int) -> Strip:
        """The highlighted item in the highlight's own colour: its status colours (green, red) on
        the highlight were unreadable (dark green on teal)."""
        strip = super().render_line(y)
        line = self.scroll_offset.y + y
        if self.highlighted is None or line >= len(self._lines) or self._lines[line][0] != self.highlighted:
            return strip
        color = self.get_visual_style("option-list--option", "option-list--option-highlighted").rich_style.color
        recoloured = [Segment(s.text, (s.style or Style()) + Style(color=color, dim=False), s.control) for s in strip]
        return Strip(recoloured, strip.cell_length)

    def on_focus(self) -> None:
        if self.view is not None:
            self.view.mark_read()
            self.unread = self.view.unread

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if self.entries is not None:
            entry = self.entries[event.option_index]
            self.post_message(self.Open(entry.item.child_id))
