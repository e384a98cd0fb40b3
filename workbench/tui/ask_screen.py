"""A one-line question in a modal (the palette's "Switch model" asks for the model string)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from workbench.tui.keymap import bindings

if TYPE_CHECKING:
    from workbench.tui.app import WorkbenchApp


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


async def switch_model(app: WorkbenchApp) -> None:
    """The palette's "Switch model" (in a worker): this session continues with another model: it is
    closed and opened again (resumed) with the new model in its settings; with no session yet, the
    next one opens with it."""
    session = app.session
    current = session.settings.model if session else app.settings.model
    model = await app.push_screen_wait(
        AskText("Model for this session (any litellm model string, or demo)", current, "openai/gpt-4.1")
    )
    if not model or model == current:
        return
    settings = dataclasses.replace(session.settings if session else app.settings, model=model)
    app.open_session(settings, session.id if session else None, None)
