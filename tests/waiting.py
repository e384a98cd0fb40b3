"""Waiting in tests, always with a deadline: for a condition, for an event, for the screen.

A test never sleeps a fixed time when something it can watch (an event, a file, a state) says
the moment has come, and never waits without a bound: a wait that runs out fails naming what it
waited for. The bounds are generous because the machine is shared; a wait that succeeds returns
as soon as its condition holds, so they cost nothing on a fast run.

Also here: the sleep tool tests give a model (registered per test through the `register_tool`
fixture of conftest.py, never into the registry for good), and helpers that pick events by kind.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from workbench.pb import workbench_pb2 as pb
from workbench.tools.registry import ToolContext

TIMEOUT = 30.0  # seconds: long enough for a loaded 2-core machine, short enough to fail a hang
STEP = 0.01  # seconds between two looks at a condition nothing can signal


def _described(what: str | Callable[[], str], condition: object) -> str:
    return (what() if callable(what) else what) or getattr(condition, "__name__", repr(condition))


async def until(
    condition: Callable[[], object],
    timeout: float = TIMEOUT,
    what: str | Callable[[], str] = "",
    pause: Callable[[float], Awaitable[object]] = asyncio.sleep,
) -> None:
    """Wait until `condition()` is true; after `timeout` seconds fail naming `what`.

    For a state another task or process brings about with nothing to wait on; an event log has
    `EventLog.until`, which wakes on each event instead. `pause` is how to let the rest run
    between two looks (a Textual pilot's `pause` lets the app redraw).
    """
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {_described(what, condition)}")
        await pause(STEP)


async def until_true(
    condition: Callable[[], Awaitable[object]], timeout: float = TIMEOUT, what: str | Callable[[], str] = ""
) -> None:
    """`until` for a condition that must itself be awaited (a tmux query, a subprocess)."""
    deadline = time.monotonic() + timeout
    while not await condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {_described(what, condition)}")
        await asyncio.sleep(STEP)


def until_blocking(condition: Callable[[], object], timeout: float = TIMEOUT, what: str = "") -> None:
    """`until` for a test that is not async (a subprocess, a terminal read)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {_described(what, condition)}")
        time.sleep(STEP)


async def on_screen(
    pilot: Any, condition: Callable[[], object], timeout: float = 60.0, what: str | Callable[[], str] = ""
) -> None:
    """Wait for `condition` while a Textual app runs under `pilot` (its pause lets the app redraw)."""
    await until(condition, timeout, what, pause=lambda _: pilot.pause(0.05))


# --- events -------------------------------------------------------------------------------------


def kind(event: pb.Event) -> str:
    """The name of the member of the Event's oneof that is set ("tool_call_started", ...)."""
    return str(event.WhichOneof("kind"))


def of_kind(events: Sequence[pb.Event], name: str, agent: str | None = None) -> list[pb.Event]:
    """The events of one kind, of one agent when `agent` is given, in order."""
    return [e for e in events if kind(e) == name and (agent is None or e.agent_id == agent)]


class EventLog:
    """Committed events as a subscriber receives them, with a wait that wakes on each new one.

    Pass the log itself as the subscriber: `session.subscribe(log)`, `store.subscribe(log, id)`.
    """

    def __init__(self) -> None:
        self.events: list[pb.Event] = []
        self._arrived = asyncio.Event()

    def __call__(self, event: pb.Event) -> None:
        self.events.append(event)
        self._arrived.set()

    def of(self, name: str, agent: str | None = None) -> list[pb.Event]:
        return of_kind(self.events, name, agent)

    def kinds(self) -> list[str]:
        return [kind(e) for e in self.events]

    async def until(self, predicate: Callable[[list[pb.Event]], object], timeout: float = TIMEOUT) -> None:
        """Wait until `predicate(events)` holds, looking again at each event that arrives."""
        try:
            async with asyncio.timeout(timeout):
                while not predicate(self.events):
                    self._arrived.clear()
                    await self._arrived.wait()
        except TimeoutError:
            raise AssertionError(
                f"timed out after {timeout:g} s waiting for {getattr(predicate, '__name__', predicate)}; "
                f"events: {self.kinds()}"
            ) from None

    async def until_kind(self, name: str, agent: str | None = None, timeout: float = TIMEOUT) -> pb.Event:
        """Wait for the first event of a kind (of one agent) and return it."""
        await self.until(lambda events: of_kind(events, name, agent), timeout)
        return of_kind(self.events, name, agent)[0]


# --- the sleep tool -----------------------------------------------------------------------------

SLEEPS: list[tuple[str, float, float]] = []  # (call id, start, end) of each sleep tool call that ended


async def sleep(seconds: float, ctx: ToolContext) -> str:
    """Sleep.

    Args:
        seconds: how long
    """
    start = time.monotonic()
    await asyncio.sleep(seconds)
    SLEEPS.append((ctx.call_id, start, time.monotonic()))
    return f"slept {seconds}"
