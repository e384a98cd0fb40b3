"""The client side of the engine service: what `workbench run`, `attach` and `engine` speak.

Light on purpose: protobuf, asyncio and the frames, never litellm nor the session stack, so a
client starts in tens of milliseconds. `EngineClient` talks to the engine (open, attach, list,
status, stop); `RemoteSession` to one hosted session, with the members of the Session that a
headless client drives (send, cancel, decide, pending_reviews, subscribe, wait, close), so the
CLI has one code path over two transports.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.config.choices import APPROVAL_CYCLE
from workbench.config.settings import Settings
from workbench.core.words import ROOT_ID
from workbench.pb import engine_pb2 as epb
from workbench.pb import workbench_pb2 as pb
from workbench.service.frames import FrameError, frame, read_frame, version
from workbench.session.errors import NotWaiting, SessionError

if TYPE_CHECKING:
    from workbench.session.rewind import RewindPlan, TurnSummary


CONNECT_TIMEOUT = 2.0  # seconds for an engine to accept and say hello


class EngineUnavailable(Exception):
    """No engine answers there (none runs, a stale socket, a refused version): one line."""


class Refused(Exception):
    """The engine or the session refused a request; `kind` says what the client does with it."""

    def __init__(self, refusal: epb.Refusal):
        super().__init__(refusal.message)
        self.kind = refusal.kind


class EngineGone(Exception):
    """The connection ended while the client still needed it: the engine or the session's process died."""


class Connection:
    """One socket to the engine or a session: requests with their replies, pushed events aside."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.reader, self.writer = reader, writer
        self.ids = itertools.count(1)
        self.pending: dict[int, asyncio.Future[epb.EngineMessage]] = {}
        self.on_event: Callable[[pb.Event], None] = lambda event: None
        self.lost: str = ""
        self.peer_pid = 0
        self._reading: asyncio.Task[None] | None = None

    @classmethod
    async def open(cls, path: Path, timeout: float = CONNECT_TIMEOUT) -> Connection:
        """Connect and say hello; EngineUnavailable when nothing (of this version) answers."""
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_unix_connection(str(path)), timeout)
        except (OSError, TimeoutError) as err:
            raise EngineUnavailable(f"no engine answers at {path}: {getattr(err, 'strerror', None) or err}") from err
        connection = cls(reader, writer)
        writer.write(frame(epb.ClientMessage(id=0, hello=epb.ClientHello(version=version()))))
        try:
            hello = await asyncio.wait_for(read_frame(reader, epb.EngineMessage), timeout)
        except (FrameError, OSError, TimeoutError) as err:
            writer.close()
            raise EngineUnavailable(f"the engine at {path} did not say hello: {err}") from err
        if hello is None or hello.WhichOneof("kind") != "hello":
            writer.close()
            why = hello.refused.message if hello is not None and hello.WhichOneof("kind") == "refused" else "it hung up"
            raise EngineUnavailable(why)
        connection.peer_pid = hello.hello.pid
        connection._reading = asyncio.create_task(connection._read(), name="engine connection")
        return connection

    async def _read(self) -> None:
        try:
            while (message := await read_frame(self.reader, epb.EngineMessage)) is not None:
                if message.id == 0 and message.WhichOneof("kind") == "event":
                    self.on_event(message.event)
                elif (waiting := self.pending.pop(message.id, None)) is not None and not waiting.done():
                    waiting.set_result(message)
            self.lost = "it closed the connection"
        except (FrameError, OSError) as err:
            self.lost = str(err) or type(err).__name__
        finally:
            for waiting in self.pending.values():
                if not waiting.done():
                    waiting.set_exception(EngineGone(self.lost))
            self.pending.clear()

    async def request(self, message: epb.ClientMessage) -> epb.EngineMessage:
        """Send `message` and wait for its reply; Refused or EngineGone."""
        if self._reading is None or self._reading.done():
            raise EngineGone(self.lost or "not connected")
        message.id = next(self.ids)
        reply: asyncio.Future[epb.EngineMessage] = asyncio.get_running_loop().create_future()
        self.pending[message.id] = reply
        try:
            self.writer.write(frame(message))
            await self.writer.drain()
        except OSError as err:
            self.pending.pop(message.id, None)
            raise EngineGone(str(err)) from err
        answer = await reply
        if answer.WhichOneof("kind") == "refused":
            raise Refused(answer.refused)
        return answer

    async def close(self) -> None:
        with contextlib.suppress(OSError, RuntimeError):
            self.writer.close()
        if self._reading is not None:
            self._reading.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reading


class EngineClient:
    """Requests to the engine itself."""

    def __init__(self, connection: Connection):
        self.connection = connection

    @classmethod
    async def connect(cls, socket: Path, timeout: float = CONNECT_TIMEOUT) -> EngineClient:
        return cls(await Connection.open(socket, timeout))

    async def open(self, request: epb.OpenSession) -> epb.LiveSession:
        return (await self.connection.request(epb.ClientMessage(open=request))).session

    async def attach(self, session_id: str) -> epb.LiveSession:
        return (await self.connection.request(epb.ClientMessage(attach=epb.AttachSession(id=session_id)))).session

    async def sessions(self) -> list[epb.LiveSession]:
        return list((await self.connection.request(epb.ClientMessage(list=epb.ListSessions()))).sessions.sessions)

    async def status(self) -> epb.EngineStatus:
        return (await self.connection.request(epb.ClientMessage(status=epb.EngineStatus()))).status

    async def stop(self) -> None:
        await self.connection.request(epb.ClientMessage(stop=epb.StopEngine()))

    async def close(self) -> None:
        await self.connection.close()


class RemoteSession:
    """A session hosted by the engine, driven as the in-process Session is: the members of
    `session.port.SessionPort` (the app) and of `cli.headless.HeadlessSession` (a run)."""

    def __init__(self, described: epb.LiveSession, connection: Connection, settings: Settings | None = None):
        self.described, self.connection = described, connection
        self.id = described.id
        self.failure: str | None = None  # the session's event log could not be written
        self._settings = dataclasses.replace(
            settings or Settings(),
            model=described.model,
            workspace=Path(described.workspace),
            data_dir=Path(described.data_dir),
        )
        self._approval = described.approval
        self._busy = described.busy
        self._subscribers: list[Callable[[pb.Event], None]] = []
        self._reviews: dict[str, pb.GuardDecision] = {}
        self._sent: list[asyncio.Task[epb.EngineMessage]] = []
        connection.on_event = self._deliver

    @classmethod
    async def attach(cls, described: epb.LiveSession, settings: Settings | None = None) -> RemoteSession:
        return cls(described, await Connection.open(Path(described.socket)), settings)

    @property
    def settings(self) -> Settings:
        """The client's settings with the session's model, workspace and data folder."""
        return self._settings

    @property
    def busy(self) -> bool:
        return self._busy

    @property
    def approval(self) -> str:
        return self._approval

    async def _ask(self, message: epb.ClientMessage) -> epb.EngineMessage:
        """A request whose refusal is raised as the in-process Session raises it."""
        try:
            return await self.connection.request(message)
        except Refused as err:
            if err.kind == "rewind":
                from workbench.session.rewind import RewindRefused

                raise RewindRefused(str(err)) from err
            if err.kind == "not_waiting":
                raise NotWaiting(str(err)) from err
            raise SessionError(str(err)) from err

    async def context_window(self) -> int:
        return (await self._ask(epb.ClientMessage(context_window=epb.ContextWindow()))).context_window.tokens

    def cycle_approval(self) -> str:
        """The next mode at once (the session's answer corrects it if another client moved it)."""
        cycle = APPROVAL_CYCLE
        self._approval = cycle[(cycle.index(self._approval) + 1) % len(cycle)] if self._approval in cycle else cycle[0]
        task = asyncio.create_task(self.connection.request(epb.ClientMessage(cycle_approval=epb.CycleApproval())))
        task.add_done_callback(self._approval_answered)
        self._sent.append(task)
        return self._approval

    def _approval_answered(self, task: asyncio.Task[epb.EngineMessage]) -> None:
        if not task.cancelled() and task.exception() is None:
            self._approval = task.result().approval.mode

    async def compact(self) -> None:
        await self._ask(epb.ClientMessage(compact=epb.Compact()))

    async def restore_file(self, path: str) -> pb.Rewind:
        return (await self._ask(epb.ClientMessage(restore_file=epb.RestoreFile(path=path)))).rewound

    async def turns(self) -> list[TurnSummary]:
        from workbench.service.convert import turns_from_pb

        return turns_from_pb((await self._ask(epb.ClientMessage(turns=epb.ListTurns()))).turns)

    async def plan_rewind(
        self, to_turn: int | None = None, *, code: bool = True, conversation: bool = False
    ) -> RewindPlan:
        from workbench.service.convert import plan_from_pb

        asked = epb.PlanRewind(to_turn=to_turn or 0, code=code, conversation=conversation)
        return plan_from_pb((await self._ask(epb.ClientMessage(plan_rewind=asked))).plan)

    async def rewind(self, plan: RewindPlan, *, overwrite_outside: bool = False) -> pb.Rewind:
        from workbench.service.convert import plan_number

        apply = epb.ApplyRewind(plan=plan_number(plan), overwrite_outside=overwrite_outside)
        return (await self._ask(epb.ClientMessage(rewind=apply))).rewound

    @property
    def pid(self) -> int:
        return self.connection.peer_pid or os.getpid()

    def _deliver(self, event: pb.Event) -> None:
        kind = event.WhichOneof("kind")
        if event.agent_id == ROOT_ID and kind in ("run_started", "run_finished"):
            self._busy = kind == "run_started"
        if kind == "guard_decision" and event.guard_decision.verdict == pb.GUARD_VERDICT_REVIEW:
            self._reviews[event.guard_decision.call_id] = event.guard_decision
        elif kind == "review_decided":
            self._reviews.pop(event.review_decided.call_id, None)
        elif kind == "tool_call_finished":
            self._reviews.pop(event.tool_call_finished.result.call_id, None)
        for subscriber in list(self._subscribers):
            subscriber(event)

    def subscribe(self, fn: Callable[[pb.Event], None], after: int = -1) -> Callable[[], None]:
        """`fn` gets every committed event after seq `after` (-1: from now on), in order. The
        session's stream is asked for once, by the first subscriber, with its `after`."""
        self._subscribers.append(fn)
        if len(self._subscribers) == 1:
            self._request(epb.ClientMessage(subscribe=epb.Subscribe(after=after)))
        return lambda: self._subscribers.remove(fn) if fn in self._subscribers else None

    def _request(self, message: epb.ClientMessage) -> None:
        """A request whose answer `wait` collects (a refusal is raised there)."""
        self._sent.append(asyncio.create_task(self.connection.request(message)))

    def send(self, prompt: str, agent_id: str | None = None) -> None:
        self._request(epb.ClientMessage(send=epb.SendPrompt(prompt=prompt, agent_id=agent_id or "")))

    async def cancel(self, agent_id: str | None = None) -> None:
        await self.connection.request(epb.ClientMessage(cancel=epb.CancelRun(agent_id=agent_id or "")))

    def pending_reviews(self) -> list[pb.GuardDecision]:
        return list(self._reviews.values())

    def decide(self, call_id: str, approve: bool, reason: str = "", remember: bool = False) -> None:
        decision = epb.DecideReview(call_id=call_id, approve=approve, reason=reason, remember=remember)
        self._request(epb.ClientMessage(decide=decision))

    async def wait(self) -> pb.RunFinished:
        """The run's outcome; what a send was refused for is raised here (Refused)."""
        await self._settle(strict=True)
        try:
            return (await self.connection.request(epb.ClientMessage(wait=epb.WaitRun()))).finished
        except Refused as err:
            if err.kind != "store":
                raise
            self.failure = str(err)
            return pb.RunFinished(status=pb.RUN_STATUS_FAILED, reason=str(err))

    def failure_text(self) -> str:
        return self.failure or ""

    async def _settle(self, *, strict: bool) -> None:
        """Wait for the requests sent without waiting (send, decide, subscribe). `strict`: a
        refusal is raised (but a decision that came too late, which is nothing to say)."""
        sent, self._sent = self._sent, []
        for request in sent:
            try:
                await request
            except (EngineGone, Refused) as err:
                if strict and not (isinstance(err, Refused) and err.kind == "not_waiting"):
                    raise

    async def detach(self) -> None:
        """Leave the session running in the engine (`workbench attach ID` comes back to it)."""
        await self.close(end=False)

    async def close(self, end: bool = True) -> None:
        """End the session (`end`) or leave it running (detach); then hang up."""
        await self._settle(strict=False)  # what was sent before goes first
        with contextlib.suppress(EngineGone, Refused):
            message = epb.ClientMessage(close=epb.CloseSession()) if end else epb.ClientMessage(detach=epb.Detach())
            await self.connection.request(message)
        await self.connection.close()
