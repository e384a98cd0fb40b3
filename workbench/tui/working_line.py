"""The working line above the prompt while an agent works: a spinner, what the root agent is doing,
the run's elapsed time, tokens up and down with the cost, and the key that interrupts.

While a reply streams, output tokens are an estimate (about 4 characters a token, marked `~`)
until the provider's usage arrives. Before the session is open it says the engine is starting.

Its state is reactive: the app sets `work` (what it shows of a busy session's view model, None
when idle), `starting` and `reviews`; the line shows itself while there is something to say,
repaints itself when one changes (a streamed reply moves the token estimate: a repaint of one
row, never a layout), and turns its spinner on a timer of its own while it shows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from textual.content import Content
from textual.reactive import reactive
from textual.timer import Timer
from textual.widget import Widget

from workbench.tui.text import duration, tokens
from workbench.tui.view import ROOT, SessionView

SPINNER = "◐◓◑◒"  # in every terminal font (braille dots are missing from some)
FRAME = 0.15  # seconds between spinner frames
CHARS_PER_TOKEN = 4


@dataclass(frozen=True)
class Work:
    """What the working line shows of a busy session (equal work: nothing to repaint)."""

    phase: str  # what the root agent does now
    run_started: float
    input_tokens: int
    output_tokens: int
    streamed_chars: int  # text streamed since the last usage report: the estimate of output tokens
    cost: float | None  # None: no price known

    @classmethod
    def of(cls, view: SessionView) -> Work | None:
        """None while the session is idle."""
        if not view.busy:
            return None
        usage = view.usage
        cost = usage.cost if usage.HasField("cost") else None
        phase = view.phase(ROOT)
        return cls(phase, view.run_started, usage.input_tokens, usage.output_tokens, view.streamed_chars, cost)


def working_text(work: Work, now: float, frame: int, reviews: int = 0) -> Content:
    """`⠹ running bash: pytest -q · 12s · ↑12.3k ↓~1.2k · $0.04 · esc to interrupt` (data escaped)."""
    phase = f"{reviews} waiting for your review" if reviews else work.phase
    parts: list[str | tuple[str, str]] = [(SPINNER[frame % len(SPINNER)] + " ", "bold $accent"), (phase, "bold")]
    if work.run_started:
        parts.append(f" · {duration(now - work.run_started)}")
    estimate = work.streamed_chars // CHARS_PER_TOKEN
    down = f"~{tokens(work.output_tokens + estimate)}" if estimate else tokens(work.output_tokens)
    parts.append(f" · ↑{tokens(work.input_tokens)} ↓{down}")
    if work.cost is not None:
        parts.append(f" · ${work.cost:.2f}")
    parts.append((" · esc to interrupt" if reviews == 0 else " · ctrl+r shows the next one", "dim"))
    return Content.assemble(*parts)


class WorkingLine(Widget):
    """Shown while the session is busy (or starting); the spinner turns only while it is shown."""

    work: reactive[Work | None] = reactive(None, init=False)  # None: the session is idle
    starting = reactive("", init=False)  # before the session: "starting the engine…"
    reviews = reactive(0)  # calls waiting for the person's approval

    def __init__(self, clock: Callable[[], float], **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.clock = clock
        self._timer: Timer | None = None

    def on_mount(self) -> None:
        self.display = False

    def watch_work(self) -> None:
        self._show()

    def watch_starting(self) -> None:
        self._show()

    def _show(self) -> None:
        busy = bool(self.starting) or self.work is not None
        if busy != self.display:
            self.display = busy
            if busy and self._timer is None:
                self._timer = self.set_interval(FRAME, self.refresh)
            elif not busy and self._timer is not None:
                self._timer.stop()
                self._timer = None

    def render(self) -> Content:
        now = self.clock()
        frame = int(now / FRAME)  # from the clock: a fixed clock draws a fixed frame
        if self.work is not None:
            return working_text(self.work, now, frame, self.reviews)
        spinner = SPINNER[frame % len(SPINNER)] + " "
        return Content.assemble((spinner, "bold $accent"), (self.starting, "bold"))
