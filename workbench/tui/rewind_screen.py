"""Rewind: pick a prompt (a turn) and what goes back (files, conversation or both), then review
the files that will change with their diffs before anything changes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from workbench.tui.keymap import bindings
from workbench.tui.text import diff_text, printable

if TYPE_CHECKING:
    from workbench.session.port import SessionPort
    from workbench.session.rewind import RewindPlan, TurnSummary

MODES = {"code": "the files", "conversation": "the conversation", "both": "the files and the conversation"}


class TurnPicker(ModalScreen["tuple[int, str] | None"]):
    """Dismisses with (turn, mode) on Enter, or None (Esc)."""

    BINDINGS: ClassVar[list[BindingType]] = bindings("rewind") + bindings("screens")

    def __init__(self, turns: list[TurnSummary]) -> None:
        super().__init__()
        self.turns = turns
        self.mode = "code"

    def compose(self) -> ComposeResult:
        with Vertical(id="rewind"):
            yield Static(id="rewind-mode")
            options = []
            for t in reversed(self.turns):
                prompt = printable(t.prompt.strip().splitlines()[0] if t.prompt.strip() else "")[:60]
                options.append(
                    Option(Text(f"turn {t.number}  {prompt}  ({len(t.files)} path(s) changed)"), id=str(t.number))
                )
            yield OptionList(*options, id="turn-list")

    def on_mount(self) -> None:
        self.query_one(OptionList).border_title = "Rewind to before which prompt?"
        self._show_mode()

    def _show_mode(self) -> None:
        line = Text("puts back ")
        line.append(MODES[self.mode], style="bold")
        line.append("   c files · v conversation · b both · Enter choose · Esc back", style="dim")
        self.query_one("#rewind-mode", Static).update(line)

    def action_mode(self, mode: str) -> None:
        self.mode = mode
        self._show_mode()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id:
            self.dismiss((int(event.option.id), self.mode))

    def action_dismiss_none(self) -> None:
        self.dismiss(None)


class RewindReview(ModalScreen[bool]):
    """What a planned rewind changes, file by file with its diff: y goes ahead, Esc goes back."""

    BINDINGS: ClassVar[list[BindingType]] = bindings("review_rewind") + bindings("screens")

    def __init__(self, plan: RewindPlan) -> None:
        super().__init__()
        self.plan = plan
        self.diffs = {f.path: f.diff for f in plan.files}

    def compose(self) -> ComposeResult:
        plan = self.plan
        parts = [w for w, on in (("files", plan.code), ("conversation", plan.conversation)) if on]
        head = Text(f"The {' and the '.join(parts)} go back {printable(plan.what)}.", style="bold")
        if plan.conversation:
            head.append(f"\n{plan.messages_dropped} message(s) from that prompt on leave the conversation.")
        if plan.outside:
            names = ", ".join(printable(p) for p in plan.outside[:5])
            head.append(
                f"\nChanged outside Workbench since its last checkpoint, kept as they are: {names}", style="yellow"
            )
        head.append("\ny: go ahead · Esc: back", style="dim")
        with Vertical(id="rewind"):
            yield Static(head, id="rewind-head")
            with Horizontal(id="files"):
                options = [
                    Option(Text(f"{f.kind[:7]:<8}{printable(f.path)}  +{f.added} -{f.removed}"), id=f.path)
                    for f in plan.files
                ]
                yield OptionList(*options, id="file-list")
                with VerticalScroll(id="file-diff"):
                    yield Static(Text("No file changes.", style="dim"), id="diff")

    def on_mount(self) -> None:
        self.query_one(OptionList).border_title = f"Files ({len(self.plan.files)})"
        if self.plan.files:
            self._show(self.plan.files[0].path)

    def _show(self, path: str) -> None:
        diff = self.diffs.get(path, "")
        self.query_one("#diff", Static).update(diff_text(diff) if diff else Text("(no text diff)", style="dim"))

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option.id:
            self._show(event.option.id)

    def action_go_ahead(self) -> None:
        self.dismiss(True)

    def action_dismiss_none(self) -> None:
        self.dismiss(False)


async def rewind(app: App[Any], session: SessionPort) -> None:
    """Ctrl+G (in a worker): pick a prompt and what goes back, review the files and their diffs,
    then rewind; a refusal is said in a note and nothing changes."""
    try:
        turns = await session.turns()
        if not turns:
            app.notify("Nothing to rewind yet: no prompt has a checkpoint.", timeout=4)
            return
        picked = await app.push_screen_wait(TurnPicker(turns))
        if picked is None:
            return
        turn, mode = picked
        plan = await session.plan_rewind(
            turn, code=mode in ("code", "both"), conversation=mode in ("conversation", "both")
        )
        if not await app.push_screen_wait(RewindReview(plan)):
            return
        done = await session.rewind(plan)
    except Exception as err:  # SessionError: said to the person, nothing changed
        app.notify(printable(str(err)), severity="warning", timeout=6, markup=False)
        return
    kept = f"; {len(plan.outside)} changed outside kept as they are" if plan.outside else ""
    app.notify(printable(f"Rewound to before turn {turn}: {len(done.files)} path(s) put back{kept}"), timeout=6)
