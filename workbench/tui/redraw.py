"""When the view model's changes reach the screen (`Redraws`, held by the app as `app.redraws`):
events are folded into the view model as they arrive, and drawn at most every RENDER_INTERVAL
seconds while they stream (a burst of commits is one redraw, not one per event).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from textual.timer import Timer

from workbench.pb import workbench_pb2 as pb
from workbench.tui.view import Changes, SessionView

RENDER_INTERVAL = 0.1  # seconds between redraws while events stream in (10 a second)


class Redraws:
    """The changes applied to the view model and not drawn yet, and the timer of their redraw."""

    def __init__(self, set_timer: Callable[[float, Callable[[], None]], Timer], draw: Callable[[Changes], None]):
        self._set_timer = set_timer  # the app's: a timer that ends with it
        self._draw = draw
        self.pending: Changes | None = None  # applied to the view model, not drawn yet
        self.timer: Timer | None = None  # the next redraw, while it waits for its interval
        self._last = 0.0

    def apply(self, view: SessionView, batch: list[pb.Event]) -> None:
        """Fold `batch` into `view`; its changes join those not drawn yet."""
        self.pending = view.apply(batch, self.pending)

    def request(self) -> None:
        """Draw now, or at the end of the interval since the last redraw."""
        wait = self._last + RENDER_INTERVAL - time.monotonic()
        if wait <= 0:
            self.draw_pending()
        elif self.timer is None:
            self.timer = self._set_timer(wait, self.draw_pending)

    def draw_pending(self) -> None:
        self.timer = None
        changes, self.pending = self.pending, None
        self._last = time.monotonic()
        if changes is not None:
            self._draw(changes)

    def drop(self) -> None:
        """The session closed: what it changed and was not drawn is not drawn."""
        self.pending = None
