"""The working line above the prompt while an agent works: a spinner, what the root agent is doing,
the run's elapsed time, tokens up and down with the cost, and the key that interrupts.

While a reply streams, output tokens are an estimate (about 4 characters a token, marked `~`)
until the provider's usage arrives. Before the session is open it says the engine is starting.
"""

from __future__ import annotations

from collections.abc import Callable

from textual.content import Content
from textual.timer import Timer
from textual.widgets import Static

from workbench.tui.text import duration, tokens
from workbench.tui.view import ROOT, SessionView

SPINNER = "◐◓◑◒"  # in every terminal font (braille dots are missing from some)
FRAME = 0.15  # seconds between spinner frames
CHARS_PER_TOKEN = 4


def working_text(view: SessionView, now: float, frame: int, reviews: int = 0) -> Content:
    """`⠹ running bash: pytest -q · 12s · ↑12.3k ↓~1.2k · $0.04 · esc to interrupt` (data escaped)."""
    phase = f"{reviews} waiting for your review" if reviews else view.phase(ROOT)
    parts: list[str | tuple[str, str]] = [(SPINNER[frame % len(SPINNER)] + " ", "bold $accent"), (phase, "bold")]
    if view.run_started:
        parts.append(f" · {duration(now - view.run_started)}")
    usage = view.usage
    estimate = view.streamed_chars // CHARS_PER_TOKEN
    down = f"~{tokens(usage.output_tokens + estimate)}" if estimate else tokens(usage.output_tokens)
    parts.append(f" · ↑{tokens(usage.input_tokens)} ↓{down}")
    if usage.HasField("cost"):
        parts.append(f" · ${usage.cost:.2f}")
    parts.append((" · esc to interrupt" if reviews == 0 else " · ctrl+r shows the next one", "dim"))
    return Content.assemble(*parts)


class WorkingLine(Static):
    """Shown while the session is busy; the spinner turns only while it is shown."""

    def __init__(self, clock: Callable[[], float], **kwargs: object) -> None:
        super().__init__(markup=False, **kwargs)  # type: ignore[arg-type]
        self.clock = clock
        self.view: SessionView | None = None
        self.starting = ""  # before the session: "starting the engine…"
        self.reviews = 0  # calls waiting for the person's approval
        self.frame = 0
        self._timer: Timer | None = None

    def on_mount(self) -> None:
        self.display = False

    def sync(self) -> None:
        view = self.view
        busy = bool(self.starting) or (view is not None and view.busy)
        if busy != self.display:
            self.display = busy
            if busy and self._timer is None:
                self._timer = self.set_interval(FRAME, self._turn)
            elif not busy and self._timer is not None:
                self._timer.stop()
                self._timer = None
        if busy:
            self._draw()

    def _turn(self) -> None:
        self.frame = int(self.clock() / FRAME)  # from the clock: a fixed clock draws a fixed frame
        self._draw()

    def _draw(self) -> None:
        self.frame = int(self.clock() / FRAME)
        if self.view is not None and self.view.busy:
            self.update(working_text(self.view, self.clock(), self.frame, self.reviews))
        else:
            spinner = SPINNER[self.frame % len(SPINNER)] + " "
            self.update(Content.assemble((spinner, "bold $accent"), (self.starting, "bold")))
