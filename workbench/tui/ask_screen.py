"""A one-line question in a modal (the palette's "Switch model" asks for the model string)."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from workbench.tui.keymap import bindings


class AskText(ModalScreen[str | None]):
    """Dismisses with the text typed (Enter), or None (Esc)."""

    BINDINGS: ClassVar[list[BindingType]] = bindings("screens")

    def __init__(self, question: str, value: str = "", placeholder: str = "") -> None:
        super().__init__()
        self.question, self.value, self.placeholder = question, value, placeholder

    def compose(self) -> ComposeResult:
        with Vertical(id="ask"):
            yield Static(Text(self.question, style="bold"))
            yield Input(value=self.value, placeholder=self.placeholder, id="answer")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value.strip() or None)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
