"""The tmux control-mode client (`tmux -C attach`): the terminal host's hot-path channel to tmux."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
from collections import deque


class ServerGone(Exception):
    """The tmux server (or our control client of it) is no longer there."""


class ServerStalled(ServerGone):
    """The tmux server did not answer within its time bound; it was killed."""


class TmuxError(Exception):
    """A tmux command failed; the message is tmux's."""


class ControlClient:
    """A persistent `tmux -C attach` client: a command is one line written to a pipe."""

    def __init__(self, proc: asyncio.subprocess.Process):
        self.proc = proc
        self.pending: deque[asyncio.Future[list[str]]] = deque()
        self.gone: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.reader = asyncio.create_task(self._read())

    @classmethod
    async def start(cls, argv: list[str], env: dict[str, str]) -> ControlClient:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
            limit=1 << 20,
        )
        return cls(proc)

    @property
    def closed(self) -> bool:
        return self.gone.done()

    def send(self, line: str) -> asyncio.Future[list[str]]:
        fut: asyncio.Future[list[str]] = asyncio.get_running_loop().create_future()
        if self.closed or self.proc.stdin is None:
            fut.set_exception(ServerGone("tmux control client is closed"))
            return fut
        try:
            self.proc.stdin.write(line.encode() + b"\n")
        except (BrokenPipeError, ConnectionResetError, RuntimeError) as err:
            fut.set_exception(ServerGone(str(err)))
            return fut
        self.pending.append(fut)
        return fut

    async def command(self, line: str) -> list[str]:
        return await self.send(line)

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        block: list[str] | None = None
        ours = False
        try:
            while raw := await self.proc.stdout.readline():
                line = raw.decode(errors="replace").rstrip("\n")
                if block is None:
                    if line.startswith("%begin "):
                        parts = line.split()
                        ours = len(parts) > 3 and int(parts[3]) & 1 == 1
                        block = []
                elif line.startswith(("%end ", "%error ")):
                    if ours and self.pending:
                        fut = self.pending.popleft()
                        if not fut.done():
                            if line.startswith("%error"):
                                fut.set_exception(TmuxError("\n".join(block) or "tmux command failed"))
                            else:
                                fut.set_result(block)
                    block = None
                else:
                    block.append(line)
        except (OSError, ValueError):
            pass
        finally:
            while self.pending:
                waiting = self.pending.popleft()
                if not waiting.done():
                    waiting.set_exception(ServerGone("the tmux server went away"))
            if not self.gone.done():
                self.gone.set_result(None)

    async def close(self) -> None:
        if self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()
            with contextlib.suppress(Exception):
                await self.proc.wait()
        self.reader.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self.reader
