"""One session hosted by the engine, in a process of its own.

The engine forks it from a process that has litellm imported and warmed (`engine.py`), so the
first model request does not wait for the import. The fork is what keeps sessions apart: the
process takes the client's environment and folder before anything reads them, so its settings,
provider keys, shells and MCP servers are the client's, exactly as in-process, and a crash ends
one session only. It listens on its own socket in the engine's folder; every client of the
session (the one that opened it, `workbench attach`) speaks to it there.

It ends when its session is idle (no run, no review waiting) and no client has been attached
for GRACE seconds, closing the session as `Session.close` does (its tmux server ends).
SIGTERM and SIGHUP close it the same way at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import os
import signal
import time
from collections.abc import Mapping
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from workbench.config.load import load
from workbench.config.log_file import setup_logging
from workbench.config.mcp_servers import ServerConfigError, parse_server
from workbench.config.settings import ConfigError, Settings
from workbench.pb import engine_pb2 as epb
from workbench.pb import workbench_pb2 as pb
from workbench.service.convert import plan_to_pb, turns_to_pb
from workbench.service.frames import FrameError, frame, greet, read_frame
from workbench.service.place import peer_uid
from workbench.session.catalog import session_to_resume
from workbench.session.errors import NotWaiting, SessionError
from workbench.session.rewind import RewindPlan, RewindRefused
from workbench.session.session import Session
from workbench.session.startup import check_model

log = logging.getLogger("workbench")
PLANS_KEPT = 8  # rewind plans held for clients at once
GRACE = 2.0  # seconds an idle session with no client stays, for a client that reattaches
WRITE_BUFFER_MAX = 64 * 1024 * 1024  # a client this far behind is dropped (it can reattach from its seq)
PATH_FLAGS = ("workspace", "data_dir")


def flags_of(request: epb.OpenSession) -> dict[str, Any]:
    """The client's flags as `config.load` takes them."""
    flags: dict[str, Any] = {}
    for name, value in request.flags.items():
        which = value.WhichOneof("value")
        raw = getattr(value, which) if which else None
        flags[name] = Path(raw) if name in PATH_FLAGS and isinstance(raw, str) else raw
    return flags


def host(request_bytes: bytes, socket_path: str, ready: Connection) -> None:
    """The forked process's entry: take the client's environment and folder, open, serve, end."""
    request = epb.OpenSession.FromString(request_bytes)
    os.environ.clear()
    os.environ.update(request.environ)
    os.umask(0o077)
    for signum in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
        signal.signal(signum, signal.SIG_DFL)
    try:
        os.chdir(request.cwd)
    except OSError as err:
        ready.send(("usage", f"cannot enter the folder {request.cwd}: {err.strerror or err}"))
        os._exit(0)
    try:
        asyncio.run(SessionHost(request, Path(socket_path), ready).serve())
    finally:
        with contextlib.suppress(OSError):
            os.unlink(socket_path)
    os._exit(0)  # the forked interpreter's exit handlers belong to the engine


async def open_hosted(request: epb.OpenSession) -> Session:
    """The session the client asked for, with its settings worked out here from its flags and
    environment; SessionError or ConfigError (said to the client) when it cannot open."""
    flags = flags_of(request)
    given = {k: v for k, v in flags.items() if k not in ("continue",)}
    settings, _notes = load(given)  # the client said them as it loaded the same settings
    settings = with_client_servers(settings, request.mcp_servers)
    resume = session_to_resume(
        settings, request.resume or None, bool(flags.get("continue")), "workspace" in given, "model" in given
    )
    await asyncio.to_thread(check_model, settings)
    setup_logging(settings)
    return await Session.open(settings, resume, interactive=request.interactive, answerable=request.answerable)


def with_client_servers(settings: Settings, tables: Mapping[str, str]) -> Settings:
    """The settings with the servers the client adds (OpenSession.mcp_servers: name -> table as JSON)."""
    if not tables:
        return settings
    servers = dict(settings.mcp_servers)
    for name, table in tables.items():
        try:
            servers[name] = parse_server(name, json.loads(table))
        except (ServerConfigError, ValueError) as err:
            raise ConfigError(f"MCP server {name!r} from the client: {err}") from err
    return dataclasses.replace(settings, mcp_servers=servers)


class SessionHost:
    """The session's socket: each client's requests, and the committed events to every subscriber."""

    def __init__(self, request: epb.OpenSession, socket_path: Path, ready: Connection):
        self.request, self.socket_path, self.ready = request, socket_path, ready
        self.session: Session | None = None
        self.session_closed = False
        self.plans: dict[int, RewindPlan] = {}  # rewind plans made for clients, by number
        self.plan_numbers = 0
        self.clients = 0
        self.last_client = time.monotonic()
        self.closing = asyncio.Event()

    async def serve(self) -> None:
        try:
            self.session = await open_hosted(self.request)
        except (SessionError, ConfigError) as err:
            self.ready.send(("usage", str(err)))
            return
        except Exception as err:  # a bug: the client says it in one line; the traceback is logged
            log.exception("the hosted session could not open")
            self.ready.send(("internal", f"{type(err).__name__}: {err}"))
            return
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            loop.add_signal_handler(signum, self.closing.set)
        server = await asyncio.start_unix_server(self._client, path=str(self.socket_path))
        try:
            self.ready.send(("ok", self.described().SerializeToString()))
            self.ready.close()
            await self._until_done()
        finally:
            server.close()
            await self._close_session()

    async def _close_session(self) -> None:
        if self.session is not None and not self.session_closed:
            self.session_closed = True
            await self.session.close()

    async def _until_done(self) -> None:
        session = self.session
        assert session is not None
        while not self.closing.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.closing.wait(), 0.5)
            idle = not session.busy and not session.pending_reviews()
            if idle and self.clients == 0 and time.monotonic() - self.last_client > GRACE:
                return

    def _keep_plan(self, plan: RewindPlan) -> int:
        """Hold a plan a client may apply; the oldest go past PLANS_KEPT."""
        self.plan_numbers += 1
        self.plans[self.plan_numbers] = plan
        for old in sorted(self.plans)[:-PLANS_KEPT]:
            del self.plans[old]
        return self.plan_numbers

    def described(self) -> epb.LiveSession:
        session = self.session
        assert session is not None
        if session.pending_reviews():
            state = "needs you"
        else:
            state = "running" if session.busy else "idle"
        settings: Settings = session.settings
        return epb.LiveSession(
            id=session.id,
            socket=str(self.socket_path),
            workspace=str(settings.workspace),
            model=settings.model,
            data_dir=str(settings.data_dir),
            sandbox=session.sandbox,
            mcp_servers=session.mcp_servers,
            state=state,
            pid=os.getpid(),
            clients=self.clients,
            approval=session.approval,
            busy=session.busy,
        )

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        if sock is None or peer_uid(sock) != os.getuid():
            writer.close()
            return
        self.clients += 1
        unsubscribe: list[Any] = []
        waits: set[asyncio.Task[None]] = set()
        try:
            if not await greet(reader, writer):
                return
            while (message := await read_frame(reader, epb.ClientMessage)) is not None:
                kind = message.WhichOneof("kind")
                if kind == "detach":
                    writer.write(frame(epb.EngineMessage(id=message.id, done=epb.Done())))
                    return
                if kind == "close":
                    await self._close_session()  # its last notices reach the subscribers first
                    self.closing.set()
                    writer.write(frame(epb.EngineMessage(id=message.id, done=epb.Done())))
                    await writer.drain()
                    return
                if kind == "wait":
                    task = asyncio.create_task(self._wait(message.id, writer))
                    waits.add(task)
                    task.add_done_callback(waits.discard)
                    continue
                if kind == "subscribe":
                    unsubscribe.append(self._subscribe(message.subscribe.after, writer))
                    writer.write(frame(epb.EngineMessage(id=message.id, done=epb.Done())))
                    continue
                writer.write(frame(await self._answer(message)))
        except (FrameError, ConnectionError) as err:
            log.info("a client of session %s went away: %s", self.session.id if self.session else "?", err)
        finally:
            for task in waits:
                task.cancel()
            for stop in unsubscribe:
                stop()
            self.clients -= 1
            self.last_client = time.monotonic()
            with contextlib.suppress(ConnectionError, RuntimeError):
                writer.close()

    def _subscribe(self, after: int, writer: asyncio.StreamWriter) -> Any:
        session = self.session
        assert session is not None
        if after < 0:  # from now on
            after = max((e.seq for e in session.events()), default=0)

        def deliver(event: pb.Event) -> None:
            if writer.is_closing():
                return
            if writer.transport.get_write_buffer_size() > WRITE_BUFFER_MAX:
                log.warning("a client of session %s fell %d bytes behind: dropped", session.id, WRITE_BUFFER_MAX)
                writer.close()
                return
            writer.write(frame(epb.EngineMessage(event=event)))

        return session.subscribe(deliver, after=after)

    async def _wait(self, request_id: int, writer: asyncio.StreamWriter) -> None:
        session = self.session
        assert session is not None
        outcome = await session.wait()
        if session.failure is not None:
            reply = epb.EngineMessage(id=request_id, refused=epb.Refusal(message=session.failure_text(), kind="store"))
        else:
            reply = epb.EngineMessage(id=request_id, finished=outcome)
        if not writer.is_closing():
            writer.write(frame(reply))

    async def _answer(self, message: epb.ClientMessage) -> epb.EngineMessage:
        session = self.session
        assert session is not None
        kind = message.WhichOneof("kind")
        try:
            if kind == "send":
                session.send(message.send.prompt, message.send.agent_id or None)
            elif kind == "cancel":
                await session.cancel(message.cancel.agent_id or None)
            elif kind == "decide":
                d = message.decide
                session.decide(d.call_id, d.approve, d.reason, d.remember)
            elif kind == "pending":
                return epb.EngineMessage(id=message.id, reviews=epb.Reviews(reviews=session.pending_reviews()))
            elif kind == "attach":
                return epb.EngineMessage(id=message.id, session=self.described())
            elif kind == "context_window":
                window = epb.ContextWindowIs(tokens=await session.context_window())
                return epb.EngineMessage(id=message.id, context_window=window)
            elif kind == "cycle_approval":
                return epb.EngineMessage(id=message.id, approval=epb.ApprovalIs(mode=session.cycle_approval()))
            elif kind == "compact":
                await session.compact()
            elif kind == "restore_file":
                return epb.EngineMessage(id=message.id, rewound=await session.restore_file(message.restore_file.path))
            elif kind == "turns":
                return epb.EngineMessage(id=message.id, turns=turns_to_pb(await session.turns()))
            elif kind == "plan_rewind":
                asked = message.plan_rewind
                plan = await session.plan_rewind(
                    asked.to_turn or None, code=asked.code, conversation=asked.conversation
                )
                number = self._keep_plan(plan)
                return epb.EngineMessage(id=message.id, plan=plan_to_pb(plan, number))
            elif kind == "rewind":
                kept = self.plans.get(message.rewind.plan)
                if kept is None:
                    gone = "that rewind plan is no longer held by the session: make it again"
                    return epb.EngineMessage(id=message.id, refused=epb.Refusal(message=gone, kind="rewind"))
                done = await session.rewind(kept, overwrite_outside=message.rewind.overwrite_outside)
                return epb.EngineMessage(id=message.id, rewound=done)
            else:
                refusal = epb.Refusal(message=f"a session does not answer {kind}", kind="usage")
                return epb.EngineMessage(id=message.id, refused=refusal)
        except NotWaiting as err:
            return epb.EngineMessage(id=message.id, refused=epb.Refusal(message=str(err), kind="not_waiting"))
        except RewindRefused as err:
            return epb.EngineMessage(id=message.id, refused=epb.Refusal(message=str(err), kind="rewind"))
        except SessionError as err:
            return epb.EngineMessage(id=message.id, refused=epb.Refusal(message=str(err), kind="session"))
        return epb.EngineMessage(id=message.id, done=epb.Done())
