"""Changed files: the files this session wrote or edited, each with its latest diff; `r` puts the
highlighted one back as it was before the last turn that changed it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from workbench.tui.keymap import bindings
from workbench.tui.text import diff_text, printable

if TYPE_CHECKING:
    from workbench.session.port import SessionPort
    from workbench.tui.app import WorkbenchApp


class ChangedFiles(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = bindings("files") + bindings("screens")

    def __init__(self, files: dict[str, str], restore: Callable[[str], None] | None = None) -> None:
        super().__init__()
        self.files = dict(files)
        self.restore = restore  # puts one file back (the app runs it on the session); None: no session
        self.current = next(iter(self.files), "")

    def compose(self) -> ComposeResult:
        with Horizontal(id="files"):
            yield OptionList(*[Option(Text(printable(p)), id=p) for p in self.files], id="file-list")
            with VerticalScroll(id="file-diff"):
                yield Static(Text("No file changed yet.", style="dim"), id="diff")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(OptionList).border_title = f"Changed files ({len(self.files)})"
        if self.files:
            self.show(next(iter(self.files)))

    def show(self, path: str) -> None:
        self.current = path
        diff = self.files.get(path, "")
        self.query_one("#diff", Static).update(diff_text(diff) if diff else Text("(no diff recorded)", style="dim"))

    def action_dismiss_none(self) -> None:
        self.dismiss(None)

    def action_restore(self) -> None:
        if self.restore is not None and self.current:
            self.restore(self.current)

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option.id:
            self.show(event.option.id)


def changed_files(app: WorkbenchApp) -> None:
    """Ctrl+O: the changed files; `r` puts one back through the session open then (none: no `r`)."""

    def put_back(path: str) -> None:
        if app.session is not None:
            app.run_worker(restore(app, app.session, path), group="rewind")

    app.push_screen(ChangedFiles(app.view.changed_files, None if app.session is None else put_back))


async def restore(app: App[Any], session: SessionPort, path: str) -> None:
    """One file back as it was before the last turn that changed it (Ctrl+O, r; in a worker)."""
    try:
        done = await session.restore_file(path)
    except Exception as err:  # SessionError: said to the person, nothing changed
        app.notify(printable(str(err)), severity="warning", timeout=6, markup=False)
        return
    app.notify(printable(f"{path} put back as before turn {done.to_turn}"), timeout=5, markup=False)
