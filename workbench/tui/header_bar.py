"""The header: how many reviews need the person (first, so a narrow screen keeps it), session title,
model (saying when it is the scripted demo), workspace, session id."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.widgets import Static

from workbench.tui.text import printable


def short_path(path: str) -> str:
    home = str(Path.home())
    return "~" + path[len(home) :] if path == home or path.startswith(home + "/") else path


class HeaderBar(Static):
    def __init__(self, **kwargs: object) -> None:
        super().__init__(markup=False, **kwargs)  # type: ignore[arg-type]

    def show(self, title: str, model: str, workspace: str, session_id: str, needs_you: int = 0) -> None:
        text = Text()
        text.append(" workbench", style="bold")
        if needs_you:
            text.append(" ")
            text.append(f" {needs_you} needs you (ctrl+r) ", style="bold white on magenta")
        if title:
            text.append(f" · {printable(title)}", style="bold")
        if model == "demo":
            text.append(" · demo (scripted, not a language model)", style="bold yellow")
        elif model:
            text.append(f" · {printable(model)}", style="cyan")
        else:
            text.append(" · no model set", style="bold red")
        if workspace:
            text.append(f" · {printable(short_path(workspace))}", style="dim")
        if session_id:
            text.append(f" · session {session_id}", style="dim")
        self.update(text)
