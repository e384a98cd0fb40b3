"""The keys, from the one keymap table (F1, or ? in a pane); Esc, F1 or ? closes it."""

from __future__ import annotations

from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from workbench.tui.keymap import bindings, grouped


def keys_table() -> Table:
    table = Table(box=None, show_header=True, header_style="bold", expand=True, padding=(0, 1))
    table.add_column("key", style="bold", no_wrap=True)
    table.add_column("where", style="italic", ratio=1)
    table.add_column("does", ratio=3)
    for label, where, does in grouped():
        table.add_row(Text(label), Text(where), Text(does))
    return table


class KeysHelp(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = bindings("screens")

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help") as box:
            box.border_title = "keys"
            box.border_subtitle = "Esc closes"
            yield Static(keys_table(), id="keys-table")
        yield Footer()

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
