"""One tool call in the transcript: a collapsible block with name, argument summary, status, duration.

While bash or tmux runs, the tail of its output streams into a box under the header. A failed
call is marked as an error and opened, with its partial output and its cause side by side when
the block is wide, stacked when narrow. A defect's traceback is there on demand (`t`).
write_file and edit_file show their diff. An output longer than FOLD_LINES opens folded to its
last FOLD_LINES lines ("N more lines: Enter shows them"); Enter again shows it all, then closes
it. The transcript's cursor sends the keys (the block is not a tab stop).
"""

from __future__ import annotations

from collections.abc import Hashable

from rich import box
from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from workbench.tui.item_view import ItemView, fold, occurrences
from workbench.tui.items import ToolItem
from workbench.tui.text import diff_text, duration, plain, printable

NARROW = 70  # cells: below this a failed call's output and cause stack instead of sitting side by side
DIFF_LINES = 40  # lines of a diff shown in the transcript (the whole diff is in Changed files)
SHOWN_LINES = 400  # lines of a finished call's output shown in the block (the tail; the whole is in the log)
FOLD_LINES = 40  # a longer output opens folded to its last FOLD_LINES lines
LIVE_LINES = 10  # lines of a running command's output shown while it streams


def _tail(text: str, lines: int = SHOWN_LINES, folded: bool = False) -> str:
    parts = text.splitlines()
    if len(parts) <= lines:
        return text
    hidden = len(parts) - lines
    head = f"… {hidden} more lines: Enter shows them" if folded else f"… {hidden} earlier lines not shown"
    return head + "\n" + "\n".join(parts[-lines:])


def _line_count(text: str) -> int:
    return text.count("\n") + (0 if text.endswith("\n") else 1) if text else 0


def _live_tail(chunks: list[str], lines: int) -> str:
    """The last `lines` lines of streamed `chunks`, joining only the chunks it needs."""
    taken: list[str] = []
    newlines = 0
    for chunk in reversed(chunks):
        taken.append(chunk)
        newlines += chunk.count("\n")
        if newlines > lines:
            break
    return "\n".join("".join(reversed(taken)).rstrip("\n").splitlines()[-lines:])


class ToolBlock(ItemView):
    """A tool call. Enter (from the transcript's cursor) or a click opens it; `t` shows a defect's traceback."""

    item: ToolItem
    can_open = True

    def __init__(self, item: ToolItem) -> None:
        super().__init__(item)
        self.expanded = False
        self.unfolded = False  # a long output: all of it, not its last FOLD_LINES lines
        self.show_traceback = False
        self._opened_failure = False
        self._before_search = (False, False)  # (expanded, unfolded) before a search opened it

    def failed(self) -> bool:
        return self.item.failed

    def state(self) -> Hashable:
        item = self.item
        if (item.failed or item.diff) and not self._opened_failure:
            # a failure, and a file tool's diff, open themselves once; the person may close them
            self.expanded = self._opened_failure = True
        return (self.expanded, self.unfolded, self.show_traceback)

    def toggle(self) -> None:
        """Closed -> open (a long output folded) -> all of a long output -> closed."""
        if self.expanded and not self.unfolded and self._long():
            self.unfolded = True
        else:
            self.expanded, self.unfolded = not self.expanded, False

    def show_defect(self) -> bool:
        if self.item.defect is None:
            return False
        self.show_traceback = not self.show_traceback
        self.expanded = True
        return True

    def reveal_text(self, needle: str, occurrence: int) -> bool:
        """A match past those in the header (in the output): open the block, and all of a long output."""
        in_header = sum(1 for _ in occurrences(fold(self.header_text().plain), fold(needle)))
        if not needle or occurrence < in_header or (self.expanded and (self.unfolded or not self._long())):
            return False
        self._before_search = (self.expanded, self.unfolded)
        self.expanded, self.unfolded = True, self.unfolded or self._long()
        return True

    def conceal(self) -> None:
        self.expanded, self.unfolded = self._before_search

    def _output(self) -> str:
        """The output the open block shows (a diff has its own limit)."""
        item, result = self.item, self.item.result
        if result is None or result.is_error:
            return item.streamed or (result.output if result is not None else "")
        return "" if item.diff else result.output

    def _long(self) -> bool:
        return _line_count(self._output()) > FOLD_LINES

    # --- drawing -------------------------------------------------------------------------

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

    def renderable(self, width: int) -> RenderableType:
        body = self._body(width)
        if body is None:
            return self.header_text()
        return Group(self.header_text(), Padding(body, (0, 0, 0, 2)))

    def _body(self, width: int) -> RenderableType | None:
        item, result = self.item, self.item.result
        if result is None and item.call.name in ("bash", "tmux"):  # running: its output streams (always shown)
            tail = _live_tail(item.output, LIVE_LINES)
            return Panel(plain(tail) if tail else Text("(no output yet)", "dim"), box=box.ROUNDED, border_style="dim")
        if not self.expanded:
            return None
        parts: list[RenderableType] = []
        lines = SHOWN_LINES if self.unfolded else FOLD_LINES
        folded = not self.unfolded
        if result is None:
            parts.append(plain(_tail(item.streamed, lines, folded) or "(no output yet)"))
        elif result.is_error:
            parts.append(self._failure(width, _tail(item.streamed or result.output, lines, folded)))
        elif item.diff:
            diff_lines = item.diff.splitlines()
            shown = diff_text("\n".join(diff_lines[:DIFF_LINES]))
            if len(diff_lines) > DIFF_LINES:
                shown.append(f"\n… {len(diff_lines) - DIFF_LINES} more lines (ctrl+o: changed files)", style="dim")
            parts.append(shown)
        else:
            parts.append(plain(_tail(result.output, lines, folded)) if result.output else Text("(no output)", "dim"))
        if item.defect is not None and self.show_traceback:
            parts.append(Text(""))
            parts.append(plain(item.defect.traceback, "red"))
        return Group(*parts)

    def _failure(self, width: int, partial: str) -> RenderableType:
        """The cause, and beside it (or above it, when narrow) the output the call gave before it failed."""
        result = self.item.result
        assert result is not None
        cause = plain(result.error or "(no cause given)", "red")
        for note in result.notes:
            cause.append("\n" + printable(note), style="yellow")
        cause_pane = Group(Text("cause", style="bold dim"), cause)
        if not partial:
            return cause_pane
        output_pane = Group(Text("output so far", style="bold dim"), plain(partial))
        if width < NARROW:
            return Group(output_pane, Text(""), cause_pane)
        grid = Table.grid(expand=True, padding=(0, 1, 0, 0))
        grid.add_column(ratio=1)
        grid.add_column(ratio=1)
        grid.add_row(output_pane, cause_pane)
        return grid
