"""What a server sent that answered nothing: a line that is not a JSON-RPC message, or a reply to a
request it was never asked (or was asked and had answered already).

The SDK drops such a reply quietly and turns such a line into a lost connection, so a call
waited for its timeout and said "did not answer within 15 s", or said the server "exited" when
it was still running. The transport's two streams are watched (`watched`): the ids of the
requests Workbench sent, and each message the server sent, so a failed call can say what the
server answered instead.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from workbench.core.safe_text import printable

SHOWN_CHARS = 200  # of what a server sent, in an error


class StrayReplies:
    """The last thing a server sent that answered no request, and when."""

    def __init__(self) -> None:
        self.asked: set[str] = set()  # ids of requests sent and not answered yet
        self.text = ""
        self.at = 0.0  # time.monotonic() of `text`

    def sent(self, message: Any) -> None:
        inner = getattr(message, "message", None)
        ident = getattr(inner, "id", None)
        if getattr(inner, "method", None) is not None and ident is not None:
            self.asked.add(str(ident))

    def received(self, item: Any) -> None:
        if isinstance(item, Exception):
            if is_unreadable_line(item):
                self._note(line_of(item))
            return
        inner = getattr(item, "message", None)
        if getattr(inner, "method", None) is not None:
            return  # a request or notification of the server's own
        key = str(getattr(inner, "id", None))
        if key in self.asked:
            self.asked.discard(key)
        elif inner is not None:
            self._note(inner.model_dump_json(by_alias=True, exclude_unset=True))

    def since(self, began: float) -> str:
        """What the server sent that answered nothing since `began` (a time.monotonic()), shown; or ''."""
        return shown(self.text) if self.text and self.at >= began else ""

    def _note(self, text: str) -> None:
        self.text, self.at = text, time.monotonic()


def shown(text: str) -> str:
    cut = text[:SHOWN_CHARS] + ("…" if len(text) > SHOWN_CHARS else "")
    return printable(repr(cut))


def is_unreadable_line(err: BaseException) -> bool:
    """Is this the SDK's error for a line that is not JSON-RPC (pydantic's ValidationError)?"""
    return isinstance(err, ValueError) and callable(getattr(err, "errors", None))


def line_of(err: Exception) -> str:
    """The line a parse error was about (pydantic's ValidationError keeps it), else the error's text."""
    try:
        found = err.errors()[0]["input"]  # type: ignore[attr-defined]
    except (AttributeError, IndexError, KeyError, TypeError):
        found = None
    if found is None:
        return str(err).splitlines()[0] if str(err) else type(err).__name__
    return found if isinstance(found, str) else json.dumps(found, default=str)


class _Receive:
    """The transport's read stream, with each item shown to `stray` on its way to the SDK."""

    def __init__(self, stream: Any, stray: StrayReplies):
        self._stream, self._stray = stream, stray

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)

    async def __aenter__(self) -> _Receive:
        await self._stream.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> Any:
        return await self._stream.__aexit__(*exc)

    def __aiter__(self) -> _Receive:
        return self

    async def __anext__(self) -> Any:
        item = await self._stream.__anext__()
        self._stray.received(item)
        return item

    async def receive(self) -> Any:
        item = await self._stream.receive()
        self._stray.received(item)
        return item


class _Send:
    """The transport's write stream, with each request's id noted in `stray`."""

    def __init__(self, stream: Any, stray: StrayReplies):
        self._stream, self._stray = stream, stray

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)

    async def __aenter__(self) -> _Send:
        await self._stream.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> Any:
        return await self._stream.__aexit__(*exc)

    async def send(self, message: Any) -> None:
        self._stray.sent(message)
        await self._stream.send(message)


@asynccontextmanager
async def watched(transport: AbstractAsyncContextManager[Any], stray: StrayReplies) -> AsyncIterator[Any]:
    """`transport` (the SDK's stdio or HTTP transport), its streams watched by `stray`."""
    async with transport as (read_stream, write_stream):
        yield _Receive(read_stream, stray), _Send(write_stream, stray)
