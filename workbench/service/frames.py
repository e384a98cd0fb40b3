"""The wire of the engine service: length-delimited protobuf frames over a Unix socket.

A frame is a 4-byte big-endian length and one serialized message (`engine.proto`: a client
sends ClientMessage, the engine EngineMessage). A frame over MAX_FRAME, a torn frame or bytes
that do not parse end the connection with FrameError: nothing is read without a bound.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import os
import struct
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from google.protobuf.message import DecodeError, Message

import workbench
from workbench.pb import engine_pb2 as epb

MAX_FRAME = 64 * 1024 * 1024  # a whole event with a large tool output fits; more is not a frame
HEADER = struct.Struct(">I")
M = TypeVar("M", bound=Message)


class FrameError(Exception):
    """The other side sent what is not a frame of this protocol, or went away mid-frame."""


async def read_frame(reader: asyncio.StreamReader, kind: type[M]) -> M | None:
    """The next message, or None at a clean end of the stream (between frames)."""
    try:
        header = await reader.readexactly(HEADER.size)
    except asyncio.IncompleteReadError as err:
        if not err.partial:
            return None
        raise FrameError("the connection ended inside a frame's length") from err
    (size,) = HEADER.unpack(header)
    if size > MAX_FRAME:
        raise FrameError(f"a frame of {size} bytes is over the limit of {MAX_FRAME}")
    try:
        body = await reader.readexactly(size)
    except asyncio.IncompleteReadError as err:
        raise FrameError(f"the connection ended inside a frame ({len(err.partial)} of {size} bytes)") from err
    message = kind()
    try:
        message.ParseFromString(body)
    except DecodeError as err:
        raise FrameError(f"a frame is not a {kind.__name__}: {err}") from err
    return message


def frame(message: Message) -> bytes:
    body = message.SerializeToString()
    return HEADER.pack(len(body)) + body


async def write_frame(writer: asyncio.StreamWriter, message: Message) -> None:
    writer.write(frame(message))
    await writer.drain()


@functools.cache
def version() -> str:
    """Workbench's version and a fingerprint of its code: an engine runs only what its clients run
    (an upgrade, or a checkout's edit, makes them refuse each other and the engine be replaced)."""
    digest = hashlib.sha256()
    root = Path(workbench.__file__).parent
    for path in sorted(root.rglob("*.py")):
        try:
            st = os.stat(path)
        except OSError:
            continue
        digest.update(f"{path.relative_to(root)}:{st.st_size}:{st.st_mtime_ns}\n".encode())
    return f"{workbench.__version__}+{digest.hexdigest()[:10]}"


async def greet(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, on_refusal: Callable[[], str] = lambda: ""
) -> bool:
    """The serving side's hello: True when the client's version is this one (the hello answered);
    else the client is told why in one line (with what `on_refusal` adds) and False."""
    hello = await read_frame(reader, epb.ClientMessage)
    if hello is None or hello.WhichOneof("kind") != "hello":
        return False
    if hello.hello.version != version():
        text = f"the engine runs Workbench {version()}, this client {hello.hello.version}{on_refusal()}"
        writer.write(frame(epb.EngineMessage(id=hello.id, refused=epb.Refusal(message=text, kind="version"))))
        return False
    writer.write(frame(epb.EngineMessage(id=hello.id, hello=epb.EngineHello(version=version(), pid=os.getpid()))))
    return True
