"""A bounded stream of one session's committed events (`Session.stream`): the stored ones, then
live ones, with at most `limit` held in memory; a reader that falls further behind is re-synced
from the store from its last seq, so memory stays bounded and nothing is lost or repeated.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncGenerator

from workbench.engine.store import Store
from workbench.pb import workbench_pb2 as pb

STREAM_LIMIT = 10_000  # events a `stream` reader may fall behind before it is re-synced from the store


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
