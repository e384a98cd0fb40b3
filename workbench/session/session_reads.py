"""What a client reads of a session (`SessionReads`, the base class of `Session`): the session as
stored, its sandbox and MCP servers in words, the model's window, whether a run goes, the
committed events (a list, a subscription, a stream) and the agents.

`Session` (`session/session.py`) sets the attributes declared here as it opens.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncGenerator, Callable, Iterator

from workbench.config.settings import Settings
from workbench.engine.store import Store
from workbench.mcp.manager import McpManager
from workbench.model.gateway import ModelSpec, context_window
from workbench.pb import workbench_pb2 as pb
from workbench.terminal.sandbox import describe

STREAM_LIMIT = 10_000  # events a `stream` reader may fall behind before it is re-synced from the store


class SessionReads:
    """The reading half of the Session's API: nothing here changes the session."""

    settings: Settings
    store: Store
    id: str
    mcp: McpManager
    _closed: pb.SessionInfo | None  # the session as it was at `close`
    _run_task: asyncio.Task[pb.RunFinished] | None

    @property
    def info(self) -> pb.SessionInfo:
        """The session as stored now (as it was at `close`, after it)."""
        if self._closed is None:
            return self.store.sessions(self.id)[0]
        return self._closed

    @property
    def sandbox(self) -> str:
        """The sandbox in force, in words: `workspace-write, network off`, or `off`."""
        return describe(self.settings)

    @property
    def mcp_servers(self) -> str:
        """The enabled MCP servers in words, those without their sandbox marked: `probe, docker (sandbox off)`."""
        return self.mcp.summary()

    async def context_window(self) -> int:
        """The model's input window in tokens (0: unknown), looked up in a thread (it needs litellm)."""
        return await asyncio.to_thread(context_window, ModelSpec(self.settings.model).wire_model)

    @property
    def busy(self) -> bool:
        """A run of the root agent is going."""
        return self._run_task is not None and not self._run_task.done()

    def events(self, after: int = 0) -> Iterator[pb.Event]:
        """The committed events with seq > `after`, in order."""
        self.store.flush()
        return self.store.events(self.id, after=after)

    def agents(self) -> list[pb.AgentInfo]:
        """Every agent of the session as committed, parents before their children."""
        return self.store.agents(self.id)

    def subscribe(self, fn: Callable[[pb.Event], None], after: int = 0) -> Callable[[], None]:
        """`fn(event)` for every committed event with seq > `after`: stored ones, then live ones.

        No gap and no duplicate. `fn` runs on the event loop right after COMMIT: keep it cheap.
        Returns the function that ends the subscription.
        """
        return self.store.subscribe(fn, self.id, after=after)

    def stream(self, after: int = 0, limit: int = STREAM_LIMIT) -> AsyncGenerator[pb.Event, None]:
        """The committed events with seq > `after`, then live ones, with at most `limit` held in memory.

        A reader that falls further behind is re-synced from the store from its last seq:
        memory stays bounded and nothing is lost or repeated.
        """
        return bounded_stream(self.store, self.id, after, limit)


async def bounded_stream(store: Store, session_id: str, after: int, limit: int) -> AsyncGenerator[pb.Event, None]:
    """The committed events of `session_id` with seq > `after`, then live ones, at most `limit` held."""
    queue: deque[pb.Event] = deque()
    arrived = asyncio.Event()
    behind = True  # replay from the store first

    def on_event(event: pb.Event) -> None:
        nonlocal behind
        if behind:
            return  # the replay reads it from the store
        if len(queue) >= limit:
            queue.clear()
            behind = True
        else:
            queue.append(event)
        arrived.set()

    last = after
    unsubscribe = store.subscribe(on_event, session_id)
    try:
        while True:
            if behind:
                behind = False  # events committed from now on are queued; older ones are read
                for event in store.events(session_id, after=last):
                    last = event.seq
                    yield event
                continue
            while queue:
                event = queue.popleft()
                if event.seq > last:
                    last = event.seq
                    yield event
                if behind:
                    break
            if not behind and not queue:
                arrived.clear()
                await arrived.wait()
    finally:
        unsubscribe()
