"""The resume picker: stored sessions, this workspace's first, newest first within each group."""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from workbench.core import words
from workbench.pb import workbench_pb2 as pb
from workbench.tui.header_bar import short_path
from workbench.tui.keymap import bindings
from workbench.tui.text import one_line, printable, tokens


def ordered(sessions: list[pb.SessionInfo], workspace: str) -> list[pb.SessionInfo]:
    """This workspace's sessions on top; each group keeps the given (newest first) order."""
    return sorted(sessions, key=lambda s: s.workspace != workspace)


def session_text(info: pb.SessionInfo, here: bool) -> Text:
    when = datetime.fromtimestamp(info.updated.seconds or info.created.seconds).strftime("%Y-%m-%d %H:%M")
    text = Text()
    text.append(f"{when}  ", style="dim")
    text.append(one_line(info.title or "(no prompt yet)", 60), style="bold")
    text.append(f"\n  {info.id}  {printable(info.model)}  {words.run_status(info.status)}", style="dim")
    text.append(f"  {tokens(info.usage.input_tokens + info.usage.output_tokens)} tokens", style="dim")
    if not here:
        text.append(f"  {printable(short_path(info.workspace))}", style="dim italic")
    if info.live:
        text.append("  (open in another process)", style="yellow")
    return text


class ResumePicker(ModalScreen[str | None]):
    """Pick a session to resume; dismisses with its id, or None (Esc)."""

    BINDINGS: ClassVar[list[BindingType]] = bindings("screens")

    def __init__(self, sessions: list[pb.SessionInfo], workspace: str) -> None:
        super().__init__()
        self.sessions = ordered(sessions, workspace)
        self.workspace = workspace

    def compose(self) -> ComposeResult:
        with Vertical(id="picker"):
            here = sum(1 for s in self.sessions if s.workspace == self.workspace)
            yield Static(
                Text(
                    f"Resume a session ({here} in this workspace, {len(self.sessions)} in all) · "
                    "Enter resumes it · Esc goes back",
                    style="bold",
                ),
                classes="picker-title",
            )
            if not self.sessions:
                yield Static(Text("No stored sessions yet. Esc goes back.", style="dim"))
            yield OptionList(
                *[Option(session_text(s, s.workspace == self.workspace), id=s.id) for s in self.sessions],
                id="sessions",
            )
        yield Footer()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
