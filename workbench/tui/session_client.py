"""The app's connection to its session (`SessionClient`, held by the app as `app.client`): open
one (or resume), close it, queue its committed events for the app, send, cancel.

The client holds the session by its interface (`SessionPort`, session/port.py), the calls the
engine-service work puts behind a socket; nothing here reaches into the loop, the tree or the
store, and nothing here draws: the app shows what the client gives it. The engine is imported
in a thread after the first frame (`open_session`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from workbench.config.settings import Settings
from workbench.pb import workbench_pb2 as pb
from workbench.session.errors import SessionError
from workbench.tui.text import printable

if TYPE_CHECKING:
    from workbench.session.port import SessionPort

log = logging.getLogger("workbench")


class OpenRefused(Exception):
    """The session could not open: one line for the person (said in the prompt area)."""


class SessionClient:
    """One app's session at a time, and its events on their way to the app.

    The session's subscriber only queues an event and calls `on_arrival` once per batch (the app
    posts itself one message), so no UI code runs inside a commit hook; the app takes the batch
    with `take_events`.
    """

    def __init__(self, on_arrival: Callable[[], object]) -> None:
        self.session: SessionPort | None = None
        self.session_id = ""  # the last session opened (said on the way out)
        self.litellm_import: threading.Thread | None = None  # litellm's import, started after the first frame
        self._on_arrival = on_arrival  # the app posts itself one message
        self._opening: SessionPort | None = None  # opened, not shown yet
        self._open_done = asyncio.Event()  # cleared while a session opens
        self._open_done.set()
        self._pending: list[pb.Event] = []
        self._posted = False
        self._unsubscribe: Callable[[], None] | None = None

    async def open(self, settings: Settings, resume: str | None) -> SessionPort | None:
        """Close the session shown, open another; None when the app quit (or another opened)
        meanwhile, which closed it. Raises OpenRefused with the words for the person."""
        import sqlite3  # what is needed once a session opens loads after the first frame

        await self.close()
        self._open_done.clear()  # a quit meanwhile waits for it, to close it and say its id
        hosted = False
        try:
            try:
                session = await _in_engine(settings, resume) if settings.engine != "off" else None
                hosted = session is not None
                if session is None:
                    if self.litellm_import is None and settings.engine != "off":  # no engine after all (auto):
                        from workbench.tui.engine import start_litellm_import  # litellm imports here, in a thread

                        self.litellm_import = start_litellm_import()
                    opener = await asyncio.to_thread(_opener)
                    session = await opener(settings, resume, interactive=True)
            except SessionError as err:  # unknown id, another workspace, held elsewhere, corrupt
                raise OpenRefused(f"cannot open the session: {err}") from err
            except (OSError, sqlite3.Error) as err:  # the data folder: missing rights, disk full
                raise OpenRefused(
                    f"cannot open the session in {settings.data_dir}: {err}; choose another --data-dir"
                ) from err
            self.session_id, self._opening = session.id, session  # closed by a quit meanwhile
        finally:
            self._open_done.set()
        if self.litellm_import is not None and not hosted:  # the run's first model call would wait for it on
            await asyncio.to_thread(self.litellm_import.join)  # this loop, frozen (4 s): it waits here, in a thread
        if self._opening is not session:
            return None
        self._opening = None
        self.session = session
        return session

    def follow(self, session: SessionPort) -> None:
        """Queue the session's committed events from its first on."""
        self._unsubscribe = session.subscribe(self.queue, after=0)

    def queue(self, event: pb.Event) -> None:
        """The subscriber: queue the event; the first of a batch tells the app."""
        self._pending.append(event)
        if not self._posted:
            self._posted = True
            self._on_arrival()

    def take_events(self) -> list[pb.Event]:
        """The events queued since the last take (the next one tells the app again)."""
        self._posted = False
        batch, self._pending = self._pending, []
        return batch

    async def close(self) -> None:
        """Stop following, close the session shown and one still opening."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        sessions = [s for s in (self.session, self._opening) if s is not None]  # _opening: waits for litellm
        self.session = self._opening = None
        self._pending.clear()
        for session in sessions:
            await session.close()

    async def detach(self) -> str:
        """Leave the session running in the engine and let it go here; '' or why it cannot be left."""
        from workbench.service.client import RemoteSession

        session = self.session
        if not isinstance(session, RemoteSession):
            return "this session runs in this process and ends with it; open it with --engine require to detach"
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        self.session = None
        self._pending.clear()
        await session.detach()
        return ""

    @property
    def opening(self) -> bool:
        """A session is opening (a quit waits for it, to close it and say its id)."""
        return not self._open_done.is_set()

    async def wait_opening(self, timeout: float) -> None:
        """Wait (at most `timeout` s) for a session that is opening (a quit right after the first frame)."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._open_done.wait(), timeout)

    def send(self, text: str, agent_id: str | None) -> str:
        """Send a prompt (to the root, or to steer `agent_id`); '' or why the session refused it."""
        if self.session is None:
            return "no session is open"
        try:
            self.session.send(text, agent_id)
        except Exception as err:  # SessionError: one line a person can act on (anything else is logged too)
            log.info("send refused", exc_info=True)
            return printable(str(err))
        return ""

    async def cancel(self, agent_id: str | None) -> str:
        """Cancel the run (None) or one agent's subtree; '' or why the session refused it."""
        if self.session is None:
            return ""
        try:
            await self.session.cancel(agent_id)
        except Exception as err:  # SessionError: an agent that is gone (anything else is logged too)
            log.info("cancel refused", exc_info=True)
            return printable(str(err))
        return ""


async def _in_engine(settings: Settings, resume: str | None) -> SessionPort | None:
    """The session in the engine (a live one by id first: attach); None to open it here (`auto`
    and no engine answers). The client side only: litellm and the engine stay in the engine."""
    from workbench.config.choices import FLAG_SETTINGS
    from workbench.service.attach import open_in_engine, open_request

    flags = {name: getattr(settings, name) for name in FLAG_SETTINGS}
    request = open_request(flags, resume, interactive=True, answerable=True)
    return await open_in_engine(settings, request, attach=resume or "")


def _opener() -> Callable[..., Awaitable[SessionPort]]:
    """How a session opens; the engine behind it is imported here (the app calls this in a thread)."""
    import workbench.session.session  # noqa: F401  (the engine, loaded off the event loop)
    from workbench.session.port import open_session

    return open_session


def list_sessions(settings: Settings) -> list[pb.SessionInfo]:
    """The stored sessions (for the resume picker; call it in a thread)."""
    from workbench.session.catalog import list_sessions as stored

    return stored(settings)
