"""`workbench acp`'s process: the ACP agent on the process's stdin and stdout.

stdout is the protocol and nothing else may reach it: before anything runs, the process's file
descriptor 1 is moved to a private one that only the protocol writes, and fd 1 (and
`sys.stdout`) become stderr. A stray print, a library's banner, a child process (tmux, an MCP
server) all land on stderr, which the editor logs.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import BinaryIO, cast

from acp import Agent, run_agent

from workbench.acp.agent import SettingsFor, WorkbenchAgent

LINE_LIMIT = 50 * 1024 * 1024  # one JSON-RPC message may be this long (an embedded file, a long prompt)


def take_stdout() -> BinaryIO:
    """The process's stdout, for the protocol alone; fd 1 and `sys.stdout` now write to stderr."""
    sys.stdout.flush()
    protocol = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return protocol


async def serve(settings_for: SettingsFor, protocol_out: BinaryIO, *, preload: bool = True) -> None:
    """Answer the client on stdin / `protocol_out` until it closes stdin; then every session ends."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    # a StreamReaderProtocol is also the write side's flow control (drain), as asyncio's own streams use it
    transport, protocol = await loop.connect_write_pipe(
        lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()), protocol_out
    )
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    agent = WorkbenchAgent(settings_for, preload=preload)
    try:
        # the SDK routes the methods the agent has; the ones it lacks answer "method not found"
        await run_agent(cast(Agent, agent), writer, reader)
    finally:
        await agent.close_all()
