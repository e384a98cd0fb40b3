"""How one transcript item draws itself: its lines (Strips) at a width, and the search's highlights.

An `ItemView` holds what the screen adds to an item (open or closed, folded, its traceback
shown) and turns the item into a Rich renderable; the transcript (transcript.py) renders it to
lines at its width, keeps them while neither the item nor the view changed, and draws only the
rows in view. Text from the model or a tool reaches these lines through `printable`/`plain`
(text.py): it is never markup, and the search matches it as it reads, character for character.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator

from rich.console import Console, RenderableType
from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

from workbench.tui.items import Item


class ItemView:
    """The screen's side of one item. Subclasses give `renderable`; `state` is what else it draws from."""

    margin_top = 0  # blank rows above the item (no background)
    component = ""  # the transcript's component class for the item's rows ("" for none)
    can_open = False  # Enter (or a click) opens and closes it

    def __init__(self, item: Item) -> None:
        self.item = item

    def shown(self) -> bool:
        """False for an item drawn as nothing (an empty or discarded answer): navigation skips it."""
        return True

    def state(self) -> Hashable:
        """What the drawing depends on besides the item's version and the width."""
        return ()

    def renderable(self, width: int) -> RenderableType:
        raise NotImplementedError

    def failed(self) -> bool:
        """Marked with the error bar in the transcript's gutter."""
        return False

    def ticking(self) -> bool:
        """True while the drawing changes with the clock (a retry's countdown)."""
        return False

    def toggle(self) -> None:
        """Enter or a click on the item."""

    def show_defect(self) -> bool:
        """`t`: show or hide a defect's traceback; False when the item has none."""
        return False

    def reveal_text(self, needle: str, occurrence: int) -> bool:
        """Open what hides the `occurrence`-th match of `needle` (a closed or folded output) so its
        line is drawn; True when it opened something (the search closes it again when it moves on)."""
        return False

    def conceal(self) -> None:
        """Close again what `reveal_text` opened."""


def render_strips(console: Console, renderable: RenderableType, width: int) -> list[Strip]:
    """`renderable` as lines of exactly `width` cells (padded), no markup read, no highlighting."""
    options = console.options.update(width=width, min_width=width, max_width=width, highlight=False, markup=False)
    lines = console.render_lines(renderable, options, pad=True)
    return [Strip(line, width) for line in lines]


# --- search highlights --------------------------------------------------------------------


def fold(text: str) -> str:
    """Case-insensitive matching that keeps character positions (`lower` when it keeps the length)."""
    lowered = text.lower()
    return lowered if len(lowered) == len(text) else text


def occurrences(text: str, needle: str) -> Iterator[int]:
    """Start offsets of `needle` in `text` (both already folded), left to right, not overlapping."""
    if not needle:
        return
    start = text.find(needle)
    while start >= 0:
        yield start
        start = text.find(needle, start + len(needle))


def highlight(strip: Strip, spans: list[tuple[int, int, Style]]) -> Strip:
    """`strip` with the characters in each (start, end, style) span restyled (the style on top).

    Spans are character offsets into `strip.text`, sorted and not overlapping; cut by
    characters (not cells), so wide characters stay whole.
    """
    if not spans:
        return strip
    segments: list[Segment] = []
    position = 0
    spans_left = list(spans)
    for text, style, control in strip:
        if control:
            segments.append(Segment(text, style, control))
            continue
        end = position + len(text)
        cut = 0  # offset in `text` of what is not yet emitted
        while spans_left and spans_left[0][0] < end:
            start, stop, over = spans_left[0]
            lo, hi = max(start, position) - position, min(stop, end) - position
            if lo > cut:
                segments.append(Segment(text[cut:lo], style))
            if hi > lo:
                segments.append(Segment(text[lo:hi], (style + over) if style else over))
                cut = max(cut, hi)
            if stop <= end:
                spans_left.pop(0)
            else:
                break
        if cut < len(text):
            segments.append(Segment(text[cut:], style))
        position = end
    return Strip(segments, strip.cell_length)


def mark_matches(
    lines: list[Strip], needle: str, match: Style, current: Style, current_index: int
) -> tuple[list[Strip], int]:
    """Every occurrence of `needle` in `lines` in `match`, the `current_index`-th (counted top to
    bottom, -1: none) in `current`; and the line of that current one (-1 when it is not drawn)."""
    folded = fold(needle)
    marked: list[Strip] = []
    count, current_line = 0, -1
    for number, strip in enumerate(lines):
        spans: list[tuple[int, int, Style]] = []
        for start in occurrences(fold(strip.text), folded):
            is_current = count == current_index
            spans.append((start, start + len(needle), current if is_current else match))
            if is_current:
                current_line = number
            count += 1
        marked.append(highlight(strip, spans))
    return marked, current_line
