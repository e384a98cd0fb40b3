"""Transcript entries other than tool calls: user prompts, assistant text (Markdown), notices.

Assistant text is Markdown, redrawn as it streams (the store batches deltas every ~50 ms and
the app redraws at most as often).
A retry wait shows a countdown to its next attempt.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual.timer import Timer
from textual.widgets import Static

from workbench.core import words
from workbench.pb import workbench_pb2 as pb
from workbench.tui.items import AssistantItem, NoticeItem, UserItem
from workbench.tui.text import plain, printable

_LEVEL_STYLE = {"info": "", "warning": "yellow", "error": "red"}  # info: the CSS mutes it already (dim on top: 2.8:1)
_AUTHOR_LABEL: dict[int, str] = {
    pb.AUTHOR_PARENT: "task from its parent:",
    pb.AUTHOR_INBOX: "⇠",
    pb.AUTHOR_WORKBENCH: "workbench:",
}


class UserMessage(Static):
    def __init__(self, item: UserItem) -> None:
        super().__init__(markup=False, classes="user")
        self.item = item
        self._version = -1

    def on_mount(self) -> None:
        self.refresh_item()

    def refresh_item(self) -> None:
        if self.item.version == self._version:
            return
        self._version = self.item.version
        item = self.item
        if item.author == pb.AUTHOR_PERSON:
            text = Text()
            text.append("> ", style="bold")
            text.append_text(plain(item.text))
        else:  # not the person's words: who wrote them, then the text
            text = Text()
            text.append(f"{_AUTHOR_LABEL.get(item.author, words.author(item.author))} ", style="bold italic")
            text.append_text(plain(item.text))
        self.set_class(item.author != pb.AUTHOR_PERSON, "from-agent")
        if self.item.starting:
            text.append("  (sending…)", style="italic")
        elif self.item.queued:
            text.append("  (queued: sent at the next turn)", style="italic yellow")
        self.set_class(self.item.queued and not self.item.starting, "queued")
        self.update(text)


class AssistantMessage(Static):
    """Assistant text rendered as Markdown, redrawn as it streams (one widget, however long).

    The text is the model's: escaped, and rendered by rich's Markdown, which reads no markup.
    """

    def __init__(self, item: AssistantItem) -> None:
        super().__init__(classes="assistant")
        self.item = item
        self._version = -1

    def on_mount(self) -> None:
        self.refresh_item()

    @property
    def source(self) -> str:
        return self.item.text

    def refresh_item(self) -> None:
        item = self.item
        if item.version == self._version:
            return
        self._version = item.version
        self.display = not item.discarded and bool(item.text)
        from rich.markdown import Markdown  # imported at the first answer, off the first frame's path

        self.update(Markdown(printable(item.text)))


class NoticeLine(Static):
    """One line about the run; a retry wait counts down to its next attempt; a defect opens its traceback."""

    def __init__(self, item: NoticeItem, clock: Callable[[], float]) -> None:
        super().__init__(markup=False, classes=f"notice {item.level}")
        self.item = item
        self.clock = clock
        self.expanded = False
        self._countdown: Timer | None = None

    def on_mount(self) -> None:
        self.refresh_item()
        if self.item.kind == "retry" and self.item.until > self.clock():
            self._countdown = self.set_interval(1.0, self.refresh_item)

    def on_click(self) -> None:
        self.action_toggle_open()

    def action_toggle_open(self) -> None:
        if self.item.detail:
            self.expanded = not self.expanded
            self.refresh_item()

    def show_defect(self) -> bool:
        """`t`: show or hide a defect's traceback; False when the notice has none."""
        self.action_toggle_open()
        return bool(self.item.detail)

    def refresh_item(self) -> None:
        item = self.item
        style = _LEVEL_STYLE.get(item.level, "")
        text = Text()
        text.append("• ", style=style)
        text.append(printable(item.text), style=style)
        if item.kind == "retry":
            left = item.until - self.clock()
            text.append(f"; retrying in {left:.0f} s" if left > 0.5 else "; retrying now", style="bold yellow")
            if left <= 0.5 and self._countdown is not None:
                self._countdown.stop()
        if item.detail:
            if self.expanded:
                text.append("\n" + printable(item.detail), style="red")
            else:
                text.append("  (t or click: traceback)", style="dim")
        self.update(text)
