"""The status line: tokens, context used, cost, a retry countdown, the tmux attach command.

Its state is reactive: the app sets `figures` (what it shows of the view model), `window`,
`message` and the named slots (`set_slot`: the approval mode, later the sandbox), and the line
repaints itself when one changes (never a layout: it is one row). A retry's countdown follows
the clock on a timer of its own while it runs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rich.text import Text
from textual.reactive import reactive
from textual.timer import Timer
from textual.widget import Widget

from workbench.core.words import ROOT_ID
from workbench.tui.items import NoticeItem
from workbench.tui.text import printable, tokens
from workbench.tui.view import SessionView


@dataclass(frozen=True)
class Figures:
    """What the status line shows of a session's view model (equal figures: nothing to repaint)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = None  # None: no price known
    prompt_tokens: int = 0  # the root's last call: how much of the window it used
    retry_until: float = 0.0  # when the root's retry wait ends (0: none)
    watch: str = ""  # the tmux attach command, once a shell ran (no shell ran: nothing to watch)

    @classmethod
    def of(cls, view: SessionView) -> Figures:
        usage = view.usage
        items = view.transcript(ROOT_ID)
        last = items[-1] if items else None
        retry = last.until if isinstance(last, NoticeItem) and last.kind == "retry" else 0.0
        cost = usage.cost if usage.HasField("cost") else None
        watch = view.attach_command if view.shell_ran else ""
        return cls(usage.input_tokens, usage.output_tokens, cost, view.prompt_tokens, retry, watch)


class StatusLine(Widget):
    figures: reactive[Figures | None] = reactive(None)  # None: no session shown yet (the message alone)
    window = reactive(0)  # the model's context window in tokens; 0 while unknown
    message = reactive("")  # a short state: "interrupting…", "closing the session…"
    slots: reactive[dict[str, str]] = reactive(dict)  # e.g. "approval" -> "ask", "sandbox" -> "workspace-write"

    def __init__(self, clock: Callable[[], float], **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.clock = clock
        self._countdown: Timer | None = None

    def set_slot(self, name: str, value: str) -> None:
        slots = {k: v for k, v in self.slots.items() if k != name}
        self.slots = {**slots, name: value} if value else slots

    def watch_figures(self, figures: Figures | None) -> None:
        """A retry's countdown repaints the line each second until it ends."""
        counting = figures is not None and figures.retry_until > self.clock()
        if counting and self._countdown is None:
            self._countdown = self.set_interval(1.0, self._count_down)
        elif not counting and self._countdown is not None:
            self._countdown.stop()
            self._countdown = None

    def _count_down(self) -> None:
        self.refresh()
        self.watch_figures(self.figures)

    def render(self) -> Text:
        figures = self.figures
        if figures is None:
            return Text(self.message, style="dim")  # before a session: what the app is doing
        text = Text(f"{tokens(figures.input_tokens)} in / {tokens(figures.output_tokens)} out")
        if self.window and figures.prompt_tokens:  # unknown window (a model litellm has not mapped): not shown
            text.append(f"  ctx {100 * figures.prompt_tokens / self.window:.0f}%")
        if figures.cost is not None:
            text.append(f"  ${figures.cost:.2f}")
        left = figures.retry_until - self.clock()
        if left > 0.5:
            text.append(f"  retrying in {left:.0f} s", style="bold yellow")
        if self.message:
            text.append(f"  {self.message}", style="italic")
        for name, value in self.slots.items():
            text.append(f"  {name}: {printable(value)}", style="cyan")
        if figures.watch:
            text.append(f"  watch: {printable(figures.watch)}", style="dim")
        return text
