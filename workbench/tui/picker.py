"""The resume picker: stored sessions, this workspace's first, newest first within each group."""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from workbench.core import words
from workbench.pb import workbench_pb2 as pb
from workbench.session.errors import SessionError
from workbench.tui.header_bar import short_path
from workbench.tui.keymap import bindings
from workbench.tui.session_client import list_sessions
from workbench.tui.text import one_line, printable, tokens

if TYPE_CHECKING:
    from workbench.tui.app import WorkbenchApp


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


async def pick(app: WorkbenchApp) -> None:
    """`workbench --resume` and the palette's "Resume session" (in a worker): the picker, then the
    chosen session opens in its own folder, on its model unless one was given."""
    settings = app.settings
    try:
        sessions = await asyncio.to_thread(list_sessions, settings)
    except SessionError as err:
        app.problem(f"cannot list the sessions: {err}")
        return
    chosen = await app.push_screen_wait(ResumePicker(sessions, str(settings.workspace)))
    info = next((s for s in sessions if s.id == chosen), None)
    if info is not None:
        resumed = dataclasses.replace(settings, workspace=Path(info.workspace), model=settings.model or info.model)
        app.open_session(resumed, info.id, app.initial_prompt)
    elif app.session is None:
        if settings.model:
            app.open_session(settings, None, app.initial_prompt)
        else:
            app.setup.display = True
