"""The ACP client side for the tests: the SDK's own client connection to `workbench acp` started
as a real process (its stdin and stdout are the protocol), recording what the agent sends."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp import RequestError, spawn_agent_process
from acp.client.connection import ClientSideConnection
from acp.schema import AllowedOutcome, DeniedOutcome, RequestPermissionResponse

Answer = Callable[[Any, list[Any]], RequestPermissionResponse]  # (tool_call, options) -> the response


def allow_once(tool_call: Any, options: list[Any]) -> RequestPermissionResponse:
    return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id="allow_once"))


def always(tool_call: Any, options: list[Any]) -> RequestPermissionResponse:
    return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id="allow_always"))


def no_permissions(tool_call: Any, options: list[Any]) -> RequestPermissionResponse:
    raise RequestError.method_not_found("session/request_permission")  # a client without it


def reject(reason: str, option: str = "reject_once") -> Answer:
    def answer(tool_call: Any, options: list[Any]) -> RequestPermissionResponse:
        outcome = AllowedOutcome(outcome="selected", option_id=option)
        outcome.field_meta = {"reason": reason}
        return RequestPermissionResponse(outcome=outcome)

    return answer


@dataclass
class Recorder:
    """The client: every update in order, every permission request; answers with `answer`."""

    answer: Answer = allow_once
    updates: list[Any] = field(default_factory=list)
    asked: list[Any] = field(default_factory=list)
    hold: asyncio.Event | None = None  # set: permission requests wait for it (a person who has not answered)

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> RequestPermissionResponse:
        self.asked.append((tool_call, options))
        if self.hold is not None:
            await self.hold.wait()
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return self.answer(tool_call, options)

    def on_connect(self, conn: Any) -> None:
        pass

    def of(self, kind: str) -> list[Any]:
        return [u for u in self.updates if u.session_update == kind]

    def text(self) -> str:
        return "".join(u.content.text for u in self.of("agent_message_chunk"))


def command(data_dir: Path, *flags: str) -> list[str]:
    return [sys.executable, "-m", "workbench.cli.main", "acp", "--data-dir", str(data_dir), *flags]


@asynccontextmanager
async def agent(
    client: Recorder, data_dir: Path, *flags: str, stderr_to: Path | None = None
) -> AsyncIterator[tuple[ClientSideConnection, asyncio.subprocess.Process]]:
    """`workbench acp FLAGS` as a process, connected; its stderr goes to a file (read it on failure)."""
    log = (stderr_to or data_dir.parent / "acp-stderr.txt").open("ab")
    try:
        async with spawn_agent_process(
            client,
            *command(data_dir, *flags),
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
            transport_kwargs={"stderr": log.fileno(), "shutdown_timeout": 10.0},
        ) as (conn, proc):
            yield conn, proc
    finally:
        log.close()


async def timed(awaitable: Any) -> tuple[Any, float]:
    started = time.monotonic()
    result = await awaitable
    return result, time.monotonic() - started
