"""The prompt: Enter sends, Ctrl+J (or Shift+Enter where the terminal sends it) adds a newline,
Up on the first line and Down on the last browse the prompts sent before."""

from __future__ import annotations

from typing import ClassVar

from textual import events
from textual.binding import BindingType
from textual.message import Message
from textual.widgets import TextArea

from workbench.tui.keymap import bindings

NEWLINE_KEYS = ("ctrl+j", "shift+enter")


class PromptInput(TextArea):
    BINDINGS: ClassVar[list[BindingType]] = bindings("prompt")

    class Submitted(Message):
        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    def __init__(self, blink: bool = True, **kwargs: object) -> None:
        super().__init__(soft_wrap=True, show_line_numbers=False, tab_behavior="focus", **kwargs)  # type: ignore[arg-type]
        self.cursor_blink = blink
        self.sent: list[str] = []
        self.sent_index = 0  # len(history): the draft being typed
        self.draft = ""

    async def _on_key(self, event: events.Key) -> None:
        key = event.key
        if key == "enter":
            event.stop()
            event.prevent_default()
            self.submit()
            return
        if key in NEWLINE_KEYS:
            event.stop()
            event.prevent_default()
            self.insert("\n")
            return
        row = self.cursor_location[0]
        if key == "up" and row == 0 and self.sent_index > 0:
            event.stop()
            event.prevent_default()
            self.browse(-1)
            return
        if key == "down" and row == self.document.line_count - 1 and self.sent_index < len(self.sent):
            event.stop()
            event.prevent_default()
            self.browse(1)
            return
        await super()._on_key(event)

    def browse(self, step: int) -> None:
        if self.sent_index == len(self.sent):
            self.draft = self.text
        self.sent_index += step
        self.text = self.sent[self.sent_index] if self.sent_index < len(self.sent) else self.draft
        self.move_cursor(self.document.end)

    def submit(self) -> None:
        text = self.text
        if not text.strip():
            return
        if not self.sent or self.sent[-1] != text:
            self.sent.append(text)
        self.sent_index = len(self.sent)
        self.draft = ""
        self.text = ""
        self.post_message(self.Submitted(text))
