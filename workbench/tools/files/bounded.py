"""Keeping the event loop free: a file tool's work runs on the loop while it stays quick, and
moves to a worker thread as soon as it reaches work that can take long.

A worker thread costs about half of what reading a small file takes (docs/DECISIONS.md), so the
common case (a short path, a small file) stays on the loop. Work that can take long calls
`may_take_long()` first: a long path to resolve, a "did you mean" scan of the tree, a file
over a megabyte to read or write, a lock another call holds. On the loop that raises
`_MovesOffLoop` (a BaseException, so no `except Exception` in a tool swallows it), and
`run_bounded` runs the whole body again from the start in a thread. So a body must change
nothing (write no file, record no state) before its last possible `may_take_long()`.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

LONG_BYTES = 1024 * 1024  # reading or writing more than this is done off the loop
LONG_PATH_PARTS = 64  # resolving a path of more components is done off the loop

_here = threading.local()


class _MovesOffLoop(BaseException):
    """Raised on the event loop by `may_take_long`; `run_bounded` reruns the body in a thread."""


def may_take_long() -> None:
    """Say that what follows can take long: on the event loop, the call moves to a worker thread."""
    if getattr(_here, "on_loop", False):
        raise _MovesOffLoop


async def run_bounded(body: Callable[[], T]) -> T:
    """Run `body` on the loop; if it reaches `may_take_long()` there, run it again in a thread."""
    _here.on_loop = True
    try:
        return body()
    except _MovesOffLoop:
        pass
    finally:
        _here.on_loop = False
    return await asyncio.to_thread(body)


_locks: dict[str, threading.Lock] = {}


class path_lock:
    """One change of a file at a time (read, compare with what the agent saw, write), across the
    calls running on the loop and in threads. On the loop a held lock is not waited for: the call
    moves to a thread, which waits."""

    def __init__(self, key: str):
        self.lock = _locks.setdefault(key, threading.Lock())

    def __enter__(self) -> None:
        if not self.lock.acquire(blocking=False):
            may_take_long()
            self.lock.acquire()

    def __exit__(self, *exc: object) -> None:
        self.lock.release()


__all__ = ["LONG_BYTES", "LONG_PATH_PARTS", "may_take_long", "path_lock", "run_bounded"]
