"""The header: how many reviews need the person (first, so a narrow screen keeps it), session title,
model (saying when it is the scripted demo), workspace, session id.

Each is a reactive the app sets; the header repaints itself when one changes (one row: no layout).
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from workbench.tui.text import printable


def short_path(path: str) -> str:
    home = str(Path.home())
    return "~" + path[len(home) :] if path == home or path.startswith(home + "/") else path


class HeaderBar(Widget):
    session_title = reactive("")
    model = reactive("")
    workspace = reactive("")
    session_id = reactive("")
    needs_you = reactive(0)  # reviews waiting for the person, of every agent

    def render(self) -> Text:
        text = Text()
        text.append(" workbench", style="bold")
        if self.needs_you:
            text.append(" ")
            text.append(f" {self.needs_you} needs you (ctrl+r) ", style="bold white on magenta")
        if self.session_title:
            text.append(f" · {printable(self.session_title)}", style="bold")
        if self.model == "demo":
            text.append(" · demo (scripted, not a language model)", style="bold yellow")
        elif self.model:
            text.append(f" · {printable(self.model)}", style="cyan")
        else:
            text.append(" · no model set", style="bold red")
        if self.workspace:
            text.append(f" · {printable(short_path(self.workspace))}", style="dim")
        if self.session_id:
            text.append(f" · session {self.session_id}", style="dim")
        return text
