"""Transcript entries other than tool calls: user prompts, assistant text (Markdown), notices.

Each is an `ItemView` (item_view.py): the transcript draws its lines. Assistant text is
Markdown, redrawn as it streams (the store batches deltas every ~50 ms and the app redraws at
most as often). A retry wait counts down to its next attempt; a defect's traceback opens on `t`.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

from rich.console import RenderableType
from rich.padding import Padding
from rich.text import Text

from workbench.core import words
from workbench.pb import workbench_pb2 as pb
from workbench.tui.item_view import ItemView
from workbench.tui.items import AssistantItem, NoticeItem, UserItem
from workbench.tui.text import plain, printable

_LEVEL_STYLE = {"info": "", "warning": "yellow", "error": "red"}  # info: its rows are muted (dim on top: 2.8:1)
_AUTHOR_LABEL: dict[int, str] = {
    pb.AUTHOR_PARENT: "task from its parent:",
    pb.AUTHOR_INBOX: "⇠",
    pb.AUTHOR_WORKBENCH: "workbench:",
}


class UserMessage(ItemView):
    """A prompt: the person's on its own band, another author's (a parent, the Inbox) muted and labelled."""

    item: UserItem

    def __init__(self, item: UserItem) -> None:
        super().__init__(item)

    @property
    def margin_top(self) -> int:  # type: ignore[override]
        return 1 if self.item.author == pb.AUTHOR_PERSON else 0

    @property
    def component(self) -> str:  # type: ignore[override]
        if self.item.author != pb.AUTHOR_PERSON:
            return "transcript--from-agent"
        return "transcript--queued" if self.item.queued and not self.item.starting else "transcript--user"

    def renderable(self, width: int) -> RenderableType:
        item = self.item
        text = Text()
        if item.author == pb.AUTHOR_PERSON:
            text.append("> ", style="bold")
        else:  # not the person's words: who wrote them, then the text
            text.append(f"{_AUTHOR_LABEL.get(item.author, words.author(item.author))} ", style="bold italic")
        text.append_text(plain(item.text))
        if item.starting:
            text.append("  (sending…)", style="italic")
        elif item.queued:
            text.append("  (queued: sent at the next turn)", style="italic")
        return Padding(text, (0, 1))


class AssistantMessage(ItemView):
    """Assistant text rendered as Markdown (rich's, which reads no markup), redrawn as it streams."""

    item: AssistantItem

    def __init__(self, item: AssistantItem) -> None:
        super().__init__(item)

    def shown(self) -> bool:
        return not self.item.discarded and bool(self.item.text)

    def renderable(self, width: int) -> RenderableType:
        from rich.markdown import Markdown  # imported at the first answer, off the first frame's path

        return Markdown(printable(self.item.text))


class NoticeLine(ItemView):
    """One line about the run; a retry wait counts down to its next attempt; a defect opens its traceback."""

    item: NoticeItem
    component = "transcript--notice"

    def __init__(self, item: NoticeItem, clock: Callable[[], float]) -> None:
        super().__init__(item)
        self.clock = clock
        self.expanded = False

    @property
    def can_open(self) -> bool:  # type: ignore[override]
        return bool(self.item.detail)

    def _left(self) -> float:
        return self.item.until - self.clock()

    def ticking(self) -> bool:
        return self.item.kind == "retry" and self._left() > 0.5

    def state(self) -> Hashable:
        return (self.expanded, round(self._left()) if self.item.kind == "retry" else 0)

    def toggle(self) -> None:
        if self.item.detail:
            self.expanded = not self.expanded

    def show_defect(self) -> bool:
        self.toggle()
        return bool(self.item.detail)

    def renderable(self, width: int) -> RenderableType:
        item = self.item
        style = _LEVEL_STYLE.get(item.level, "")
        text = Text()
        text.append("• ", style=style)
        text.append(printable(item.text), style=style)
        if item.kind == "retry":
            left = self._left()
            text.append(f"; retrying in {left:.0f} s" if left > 0.5 else "; retrying now", style="bold yellow")
        if item.detail:
            if self.expanded:
                text.append("\n" + printable(item.detail), style="red")
            else:
                text.append("  (t or click: traceback)", style="dim")
        return text
