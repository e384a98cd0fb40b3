"""The first frame's baseline: a bare Textual app with the workbench's layout, widgets and CSS
(workbench/tui/workbench.tcss) and no Workbench or engine import at all.

    python -m tools.benchmarks._bare_tui      # what tools/benchmarks/tui.py launches in tmux
"""

from __future__ import annotations

from pathlib import Path

from textual.app import App, ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Footer, Input, OptionList, Static, TextArea, Tree

CSS = Path(__file__).resolve().parents[2] / "workbench" / "tui" / "workbench.tcss"


class BareApp(App[None]):
    CSS_PATH = CSS

    def compose(self) -> ComposeResult:
        yield Static(" workbench · demo (scripted, not a language model)", id="header")
        with Horizontal(id="main"):
            with Vertical(id="side"):
                yield Tree("agents", id="agents")
                yield OptionList(id="inbox")
            with Vertical(id="work"):
                yield Static("", id="agent-line")
                yield VerticalScroll(id="transcript")
                with Horizontal(id="search-row"):
                    yield Input(id="search")
                    yield Static("", id="search-info")
        with Vertical(id="prompt-area"):
            with Horizontal(id="setup"):
                yield Static("", id="setup-help")
            yield Static("", id="working")
            yield TextArea(id="prompt")
        yield Static("", id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#side").display = False
        self.query_one("#setup").display = False
        self.query_one("#search-row").display = False
        self.query_one("#prompt").focus()


if __name__ == "__main__":
    BareApp().run()
