"""Transcript entries other than tool calls: user prompts, assistant text (Markdown), notices.

Assistant text streams into a Markdown widget: new text is appended as it arrives; when the
complete message differs from what streamed (it never should), the widget is rewritten.
A retry wait shows a countdown to its next attempt.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual.timer import Timer
from textual.widgets import Markdown, Static

from workbench.tui.items import AssistantItem, NoticeItem, UserItem
from workbench.tui.text import plain, printable

_LEVEL_STYLE = {"info": "dim", "warning": "yellow", "error": "red"}


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
        text = Text("> ", style="bold")
        text.append_text(plain(self.item.text))
        if self.item.queued:
            text.append("  (queued: sent at the next turn)", style="italic yellow")
        self.set_class(self.item.queued, "queued")
        self.update(text)


class AssistantMessage(Markdown):
    """Assistant text as Markdown. The text is the model's: escaped, and Markdown is not markup."""

    def __init__(self, item: AssistantItem) -> None:
        super().__init__(printable(item.text), classes="assistant")
        self.item = item
        self._shown = item.text
        self._version = item.version
        self._syncing = False

    def on_mount(self) -> None:
        self.display = not self.item.discarded

    def refresh_item(self) -> None:
        item = self.item
        if item.version == self._version:
            return
        self._version = item.version
        self.display = not item.discarded
        if not self._syncing:
            self._syncing = True
            self.call_later(self._sync)

    async def _sync(self) -> None:
        """Bring the widget up to the item's text, one append at a time (appends must not overlap)."""
        try:
            while self._shown != self.item.text:
                target = self.item.text
                if target.startswith(self._shown):
                    await self.append(printable(target[len(self._shown) :]))
                else:
                    await self.update(printable(target))
                self._shown = target
        finally:
            self._syncing = False


class NoticeLine(Static):
    """One line about the run; a retry wait counts down to its next attempt; a defect opens its traceback."""

    def __init__(self, item: NoticeItem, clock: Callable[[], float]) -> None:
        super().__init__(markup=False, classes=f"notice {item.level}")
        self.item = item
        self.clock = clock
        self.expanded = False
        self.can_focus = bool(item.detail)
        self._countdown: Timer | None = None

    def on_mount(self) -> None:
        self.refresh_item()
        if self.item.kind == "retry" and self.item.until > self.clock():
            self._countdown = self.set_interval(1.0, self.refresh_item)

    def on_click(self) -> None:
        self.expanded = not self.expanded
        self.refresh_item()

    def key_t(self) -> None:
        self.on_click()

    def refresh_item(self) -> None:
        item = self.item
        style = _LEVEL_STYLE.get(item.level, "")
        text = Text("• ", style=style)
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
