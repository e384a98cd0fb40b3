"""One tool call in the transcript: a collapsible block with name, argument summary, status, duration.

While bash or tmux runs, its output streams into a line-based log view (one widget, not one
per line). A failed call is marked as an error and expanded, with its partial output and its
cause side by side when the block is wide, stacked when narrow. A defect's traceback is there
on demand (`t`). write_file and edit_file show their diff. An output longer than FOLD_LINES
opens folded to its last FOLD_LINES lines ("N more lines: Enter shows them"); Enter again shows
it all, then closes it. The transcript's cursor sends the keys (the block is not a tab stop).
"""

from __future__ import annotations

from rich.text import Text
from textual.containers import Container, Vertical
from textual.widget import Widget
from textual.widgets import Log, Static

from workbench.tui.items import ToolItem
from workbench.tui.text import diff_text, duration, plain, printable

NARROW = 70  # cells: below this a failed call's output and cause stack instead of sitting side by side
DIFF_LINES = 40  # lines of a diff shown in the transcript (the whole diff is in Changed files)
SHOWN_LINES = 400  # lines of a finished call's output shown in the block (the tail; the whole is in the log)
FOLD_LINES = 40  # a longer output opens folded to its last FOLD_LINES lines


def _tail(text: str, lines: int = SHOWN_LINES, folded: bool = False) -> str:
    parts = text.splitlines()
    if len(parts) <= lines:
        return text
    hidden = len(parts) - lines
    head = f"… {hidden} more lines: Enter shows them" if folded else f"… {hidden} earlier lines not shown"
    return head + "\n" + "\n".join(parts[-lines:])


def _line_count(text: str) -> int:
    return text.count("\n") + (0 if text.endswith("\n") else 1) if text else 0


class ToolBlock(Vertical):
    """A tool call. Enter (from the transcript's cursor) or a click opens it; `t` shows a defect's traceback."""

    def __init__(self, item: ToolItem) -> None:
        super().__init__(classes="tool")
        self.item = item
        self.expanded = False
        self.unfolded = False  # a long output: all of it, not its last FOLD_LINES lines
        self.show_traceback = False
        self._version = -1
        self._chunks_written = 0
        self._body_state = ""  # what the body shows now: "", "live", "done", "collapsed"
        self._opened_failure = False
        self._header = Static(markup=False, classes="tool-header")
        self._body: Vertical | None = None
        self._log: Log | None = None

    def compose(self):  # type: ignore[no-untyped-def]
        yield self._header  # the body is mounted when there is something to show (fewer widgets to lay out)

    def on_mount(self) -> None:
        self.refresh_item()

    def on_resize(self) -> None:
        self.set_class(self.size.width < NARROW, "narrow")

    def on_click(self) -> None:
        self.action_toggle_open()

    def action_toggle_open(self) -> None:
        """Closed -> open (a long output folded) -> all of a long output -> closed."""
        if self.expanded and not self.unfolded and self._long():
            self.unfolded = True
        else:
            self.expanded, self.unfolded = not self.expanded, False
        self.refresh_item(force=True)

    def _output(self) -> str:
        """The output the open block shows (a diff has its own limit)."""
        item, result = self.item, self.item.result
        if result is None or result.is_error:
            return item.streamed or (result.output if result is not None else "")
        return "" if item.diff else result.output

    def _long(self) -> bool:
        return _line_count(self._output()) > FOLD_LINES

    def show_defect(self) -> bool:
        """`t`: show or hide the defect's traceback; False when the call has none."""
        if self.item.defect is None:
            return False
        self.show_traceback = not self.show_traceback
        self.expanded = True
        self.refresh_item(force=True)
        return True

    # --- rendering ---------------------------------------------------------------------

    def header_text(self) -> Text:
        """`▼ bash ✗ failed 0.6s  pytest -x`: status and duration before the summary, which a narrow block cuts."""
        item = self.item
        text = Text()
        text.append("▼ " if self.expanded else "▶ ", style="dim")
        text.append(item.call.name, style="bold")
        result = item.result
        if result is None:
            text.append("  running", style="yellow")
        elif result.is_error:
            text.append(f"  ✗ failed {duration(result.duration)}", style="bold red")
        else:
            text.append(f"  ✓ {duration(result.duration)}", style="green")
        if item.defect is not None:
            text.append("  defect: t shows the traceback", style="red")
        if item.summary:
            text.append(f"  {printable(item.summary)}", style="dim")
        text.no_wrap, text.overflow = True, "ellipsis"
        return text

    def refresh_item(self, force: bool = False) -> None:
        item = self.item
        if not self._header.is_attached:
            return  # not mounted yet: on_mount renders the item as it is then
        if item.version == self._version and not force:
            return
        if (item.failed or item.diff) and not self._opened_failure:
            # a failure, and a file tool's diff, open themselves once; the person may close them
            self.expanded = self._opened_failure = True
        self._version = item.version
        self.set_class(item.failed, "error")
        self.set_class(item.running, "running")
        self._header.update(self.header_text())
        if item.running and item.call.name in ("bash", "tmux"):
            self._stream_live()
        else:
            self._render_done()

    def _set_body(self, widgets: list[Widget]) -> None:
        """Replace the body (none while collapsed: fewer widgets to lay out in a long transcript)."""
        if self._body is not None:
            self._body.remove()
            self._body = None
        if widgets:
            self._body = Vertical(*widgets, classes="tool-body")
            self.mount(self._body)

    def _stream_live(self) -> None:
        """Running bash/tmux: write the new chunks into the log view (always shown while it runs)."""
        if self._body_state != "live":
            self._log = Log(max_lines=5000, auto_scroll=True, classes="live-output")
            self._set_body([self._log])
            self._body_state, self._chunks_written = "live", 0
        log = self._log
        if log is None or not log.is_attached:
            self.call_after_refresh(self.refresh_item, True)  # written once the log view is mounted
            return
        chunks = self.item.output[self._chunks_written :]
        if chunks:
            log.write(printable("".join(chunks)))
            self._chunks_written += len(chunks)

    def _render_done(self) -> None:
        self._body_state = "done" if self.expanded else "collapsed"
        self._log = None
        if not self.expanded:
            self._set_body([])
            return
        item, result = self.item, self.item.result
        widgets: list[Widget] = []
        lines = SHOWN_LINES if self.unfolded else FOLD_LINES
        folded = not self.unfolded
        if result is None:
            widgets.append(Static(plain(_tail(item.streamed, lines, folded) or "(no output yet)"), classes="output"))
        elif result.is_error:
            partial = item.streamed or result.output
            cause_text = plain(result.error or "(no cause given)", "red")
            for note in result.notes:
                cause_text.append("\n" + printable(note), style="yellow")
            cause = Vertical(Static("cause", classes="pane-title"), Static(cause_text, classes="cause"), classes="pane")
            if partial:  # the output it gave before it failed, beside the cause
                output = Static(plain(_tail(partial, lines, folded)), classes="output")
                out = Vertical(Static("output so far", classes="pane-title"), output, classes="pane")
                widgets.append(Container(out, cause, classes="failure"))
            else:
                widgets.append(Container(cause, classes="failure"))
        elif item.diff:
            diff_lines = item.diff.splitlines()
            shown = diff_text("\n".join(diff_lines[:DIFF_LINES]))
            if len(diff_lines) > DIFF_LINES:
                shown.append(f"\n… {len(diff_lines) - DIFF_LINES} more lines (ctrl+o: changed files)", style="dim")
            widgets.append(Static(shown, classes="diff"))
        else:
            shown = plain(_tail(result.output, lines, folded)) if result.output else Text("(no output)", "dim")
            widgets.append(Static(shown))
        if item.defect is not None and self.show_traceback:
            widgets.append(Static(plain(item.defect.traceback, "red"), classes="traceback"))
        self._set_body(widgets)
