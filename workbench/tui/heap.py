"""The cyclic garbage collector and a long history the app holds.

A resumed session's stored events arrive in one batch (the subscription replays them at once);
the view model and the app's state built from them live as long as the session is shown. A full
collection walks every tracked object: 25-200 ms with 10,000 items, a pause a key press waits
for. `gc.freeze()` moves what exists then out of the collector's generations, so later
collections walk only what came after (docs/DECISIONS.md, 2026-12-01).
Frozen objects are still freed by their reference counts when a session closes (the view model
holds no reference cycles); only cycles that were garbage already stay until the process ends.
"""

from __future__ import annotations

import gc

LONG_BATCH = 1_000  # events applied at once: a history, not a live session's burst


def freeze_after(events: int) -> bool:
    """Freeze what exists when `events` applied at once make a long history; whether it did."""
    if events < LONG_BATCH:
        return False
    gc.freeze()
    return True
