"""What a client calls on an open session (`SessionPort`): the one interface the TUI (and any other
client) holds a session by. `Session` (`session/session.py`) is the in-process implementation;
the engine-service work puts this same interface behind a socket, so a client written against
it needs no change. Everything here goes in and comes out as proto messages, plain values and
the rewind's plain dataclasses: never a live engine object.

`open_session` opens one (the TUI imports the engine behind it in a thread, after its first frame).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from workbench.config.settings import Settings
from workbench.pb import workbench_pb2 as pb

if TYPE_CHECKING:
    from workbench.session.rewind import RewindPlan, TurnSummary


class SessionPort(Protocol):
    """An open session as its client sees it (each call is documented on `Session`)."""

    @property
    def id(self) -> str: ...

    @property
    def settings(self) -> Settings: ...

    @property
    def busy(self) -> bool: ...

    @property
    def approval(self) -> str: ...

    # reads
    def subscribe(self, fn: Callable[[pb.Event], None], after: int = 0) -> Callable[[], None]: ...

    async def context_window(self) -> int: ...

    def pending_reviews(self) -> list[pb.GuardDecision]: ...

    async def turns(self) -> list[TurnSummary]: ...

    # what the client does
    def send(self, prompt: str, agent_id: str | None = None) -> None: ...

    async def cancel(self, agent_id: str | None = None) -> None: ...

    async def wait(self) -> pb.RunFinished: ...

    def decide(self, call_id: str, approve: bool, reason: str = "", remember: bool = False) -> None: ...

    def cycle_approval(self) -> str: ...

    async def compact(self) -> None: ...

    async def restore_file(self, path: str) -> pb.Rewind: ...

    async def plan_rewind(
        self, to_turn: int | None = None, *, code: bool = True, conversation: bool = False
    ) -> RewindPlan: ...

    async def rewind(self, plan: RewindPlan, *, overwrite_outside: bool = False) -> pb.Rewind: ...

    async def close(self) -> None: ...


async def open_session(settings: Settings, resume: str | None = None, *, interactive: bool = False) -> SessionPort:
    """A new session (`resume=None`) or a stored one, in this process (`Session.open`); raises
    SessionError (one line a person can act on), OSError or sqlite3.Error (the data folder)."""
    from workbench.session.session import Session  # the engine: imported when a session opens

    return await Session.open(settings, resume=resume, interactive=interactive)
