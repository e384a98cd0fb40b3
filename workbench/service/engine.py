"""The engine: one process per user and data folder that hosts sessions for its clients.

`python -m workbench.service.engine --data-dir D` (started by `workbench engine start`, or on
demand by a client: `start.py`). It holds a lock (`engine.lock`, flock) so that two clients
starting it at once get one engine, replaces a socket left by a crashed one, listens on
`engine.sock` (0600 in a 0700 folder, `place.py`) and refuses any peer of another uid
(SO_PEERCRED). Nothing listens on TCP.

Each session runs in a process of its own (`worker.py`), forked by a fork server that imported
and warmed litellm once (multiprocessing's forkserver with a preload): a session starts warm,
takes its client's environment and folder, and a crash of one ends only that one. The engine
itself answers: open (fork a session), attach (where a live session is), list, status, stop.
It exits after `engine_idle` minutes with no session and no client, and on SIGTERM, ending its
sessions as their own SIGTERM does.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import fcntl
import logging
import multiprocessing
import multiprocessing.forkserver
import os
import resource
import signal
import sys
import time
from dataclasses import dataclass
from multiprocessing.context import ForkServerContext
from multiprocessing.process import BaseProcess
from pathlib import Path

from workbench.pb import engine_pb2 as epb
from workbench.service.frames import FrameError, frame, greet, read_frame, version
from workbench.service.place import EnginePlace, PlaceError, engine_place, ensure_folder, peer_uid

log = logging.getLogger("workbench")
OPEN_TIMEOUT = 120.0  # seconds for a session to open (an MCP server's start is not waited for)
ASK_TIMEOUT = 2.0  # seconds for a session process to say how it stands
WARM_MODULE = "workbench.service.warm"
LOCK_WAIT = 5.0  # seconds a new engine waits for one that stops (replaced after a version change)


@dataclass
class Hosted:
    described: epb.LiveSession
    process: BaseProcess | None = None  # None: adopted from an engine that ended before its sessions

    @property
    def pid(self) -> int:
        return (self.process.pid if self.process is not None else 0) or self.described.pid

    def alive(self) -> bool:
        if self.process is not None:
            return self.process.is_alive()
        try:
            os.kill(self.described.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return Path(self.described.socket).exists()


class Engine:
    def __init__(self, place: EnginePlace, idle_minutes: float):
        self.place, self.idle = place, idle_minutes * 60
        self.started = time.monotonic()
        self.sessions: dict[str, Hosted] = {}
        self.clients = 0
        self.last_busy = time.monotonic()
        self.stopping = asyncio.Event()
        self.context: ForkServerContext = multiprocessing.get_context("forkserver")
        self.context.set_forkserver_preload([WARM_MODULE])

    async def serve(self) -> None:
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            loop.add_signal_handler(signum, self.stopping.set)
        with contextlib.suppress(FileNotFoundError):
            self.place.socket.unlink()  # a crashed engine's: the lock says none runs
        await self._adopt()
        server = await asyncio.start_unix_server(self._client, path=str(self.place.socket))
        os.chmod(self.place.socket, 0o600)
        log.info("engine %s (pid %d) listening on %s", version(), os.getpid(), self.place.socket)
        warming = asyncio.create_task(asyncio.to_thread(multiprocessing.forkserver.ensure_running))
        try:
            while not self.stopping.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.stopping.wait(), 1.0)
                self._reap()
                if self.sessions or self.clients:
                    self.last_busy = time.monotonic()
                elif time.monotonic() - self.last_busy > self.idle:
                    log.info("engine idle for %.0f minutes: exiting", self.idle / 60)
                    break
        finally:
            server.close()
            with contextlib.suppress(FileNotFoundError):
                self.place.socket.unlink()
            await self._end_sessions()
            warming.cancel()

    def _find(self, session_id: str) -> Hosted | None:
        """A live session by its id or a unique prefix of it."""
        found = [h for i, h in self.sessions.items() if i.startswith(session_id)] if session_id else []
        return found[0] if len(found) == 1 else None

    def _make_way(self) -> str:
        """A client of another version: an idle engine stops, so that one of its version starts."""
        if self.sessions:
            return ""
        self.stopping.set()
        return "; it was idle and stops"

    def _reap(self) -> None:
        for session_id, hosted in list(self.sessions.items()):
            if not hosted.alive():
                if hosted.process is not None:
                    hosted.process.join(0)
                del self.sessions[session_id]
                log.info("session %s ended", session_id)

    async def _adopt(self) -> None:
        """The sessions an engine that ended (a crash, kill -9) left running: each still listens on
        its socket in this folder and is hosted again; a socket nobody answers on is removed."""
        for socket_path in sorted(self.place.folder.glob("s-*.sock")):
            described = await _ask(socket_path)
            if described is None:
                with contextlib.suppress(OSError):
                    socket_path.unlink()
                continue
            self.sessions[described.id] = Hosted(described)
            log.info("session %s (pid %d) adopted from an engine that ended", described.id, described.pid)

    async def _end_sessions(self) -> None:
        for hosted in self.sessions.values():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                if hosted.pid:
                    os.kill(hosted.pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        while any(h.alive() for h in self.sessions.values()) and time.monotonic() < deadline:  # noqa: ASYNC110
            await asyncio.sleep(0.05)  # a forked process's end is no event of this loop
        for hosted in self.sessions.values():
            if hosted.alive() and hosted.pid:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(hosted.pid, signal.SIGKILL)

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        if sock is None or peer_uid(sock) != os.getuid():
            log.warning("a connection from uid %s refused", peer_uid(sock) if sock is not None else "?")
            writer.close()
            return
        self.clients += 1
        try:
            if not await greet(reader, writer, self._make_way):
                return
            while (message := await read_frame(reader, epb.ClientMessage)) is not None:
                writer.write(frame(await self._answer(message)))
                await writer.drain()
        except (FrameError, ConnectionError) as err:
            log.info("a client went away: %s", err)
        finally:
            self.clients -= 1
            with contextlib.suppress(ConnectionError, RuntimeError):
                writer.close()

    async def _answer(self, message: epb.ClientMessage) -> epb.EngineMessage:
        kind = message.WhichOneof("kind")
        reply = epb.EngineMessage(id=message.id)
        if kind == "open":
            opened = await self._open(message.open)
            if isinstance(opened, epb.Refusal):
                reply.refused.CopyFrom(opened)
            else:
                reply.session.CopyFrom(opened)
        elif kind == "attach":
            self._reap()
            hosted = self._find(message.attach.id)
            if hosted is None:
                text = (
                    f"session {message.attach.id} is not running in the engine "
                    "(`workbench engine status` lists those that are)"
                )
                reply.refused.CopyFrom(epb.Refusal(message=text, kind="session"))
            else:
                reply.session.CopyFrom(await _fresh(hosted))
        elif kind == "list":
            self._reap()
            reply.sessions.CopyFrom(epb.LiveSessions(sessions=[await _fresh(h) for h in self.sessions.values()]))
        elif kind == "status":
            self._reap()
            reply.status.CopyFrom(self.status([await _fresh(h) for h in self.sessions.values()]))
        elif kind == "stop":
            self.stopping.set()
            reply.done.CopyFrom(epb.Done())
        else:
            reply.refused.CopyFrom(epb.Refusal(message=f"the engine does not answer {kind}", kind="usage"))
        return reply

    def status(self, sessions: list[epb.LiveSession]) -> epb.EngineStatus:
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        return epb.EngineStatus(
            version=version(),
            pid=os.getpid(),
            uptime=time.monotonic() - self.started,
            rss=rss,
            sessions=sessions,
            log=str(self.place.log),
        )

    async def _open(self, request: epb.OpenSession) -> epb.LiveSession | epb.Refusal:
        """Fork a session process for `request`; what it says once open (or why it did not)."""
        from workbench.service.worker import host

        name = f"{os.getpid()}-{len(self.sessions)}-{time.monotonic_ns()}"
        socket_path = self.place.folder / f"s-{name}.sock"
        began = time.monotonic()
        receive, send = self.context.Pipe(duplex=False)
        process = self.context.Process(
            target=host, args=(request.SerializeToString(), str(socket_path), send), name="workbench-session"
        )
        await asyncio.to_thread(process.start)
        send.close()
        try:
            answer = await asyncio.wait_for(asyncio.to_thread(_receive, receive), OPEN_TIMEOUT)
        except (TimeoutError, EOFError, OSError) as err:
            with contextlib.suppress(ProcessLookupError, TypeError):
                os.kill(process.pid or 0, signal.SIGKILL)
            return epb.Refusal(message=f"the session's process did not open it: {err or 'it ended'}", kind="internal")
        finally:
            receive.close()
        if answer[0] != "ok":
            process.join(5)
            return epb.Refusal(message=answer[1], kind=answer[0])
        described = epb.LiveSession.FromString(answer[1])
        self.sessions[described.id] = Hosted(described, process)
        took = (time.monotonic() - began) * 1000
        log.info("session %s opened in %.0f ms (pid %d)", described.id, took, described.pid)
        return described


async def _ask(socket_path: Path) -> epb.LiveSession | None:
    """How the session listening at `socket_path` stands (its state, its clients but this
    question's own connection); None when nothing answers within ASK_TIMEOUT."""
    from workbench.service.client import Connection, EngineGone, EngineUnavailable, Refused

    try:
        connection = await Connection.open(socket_path, ASK_TIMEOUT)
    except EngineUnavailable:
        return None
    try:
        ask = epb.ClientMessage(attach=epb.AttachSession())
        described = (await asyncio.wait_for(connection.request(ask), ASK_TIMEOUT)).session
    except (EngineGone, Refused, TimeoutError):
        return None
    finally:
        await connection.close()
    described.clients = max(0, described.clients - 1)
    return described


async def _fresh(hosted: Hosted) -> epb.LiveSession:
    """How a hosted session stands now; what it said last when it does not answer."""
    described = await _ask(Path(hosted.described.socket))
    if described is not None:
        hosted.described = described
    return hosted.described


def _receive(connection: multiprocessing.connection.Connection) -> tuple[str, ...]:
    answer: tuple[str, ...] = connection.recv()
    return answer


def _take_lock(lock: int) -> bool:
    """The engine's lock, waiting LOCK_WAIT seconds for an engine that is stopping to release it."""
    deadline = time.monotonic() + LOCK_WAIT
    while True:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)


def run_engine(data_dir: Path, idle_minutes: float) -> int:
    """The engine's process: take the lock or leave (another engine has it), then serve."""
    place = engine_place(data_dir)
    try:
        ensure_folder(place)
        data_dir.mkdir(parents=True, exist_ok=True)
    except (PlaceError, OSError) as err:
        print(f"workbench engine: {err}", file=sys.stderr)
        return 2
    lock = os.open(place.lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    if not _take_lock(lock):
        return 0  # another engine holds it: that one serves
    os.ftruncate(lock, 0)
    os.write(lock, f"{os.getpid()}\n".encode())
    handler = logging.FileHandler(place.log, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(process)d %(name)s: %(message)s"))
    logging.getLogger("workbench").addHandler(handler)
    logging.getLogger("workbench").setLevel(logging.INFO)
    try:
        asyncio.run(Engine(place, idle_minutes).serve())
    finally:
        os.close(lock)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m workbench.service.engine")
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--idle-minutes", type=float, default=30.0)
    args = parser.parse_args(argv)
    return run_engine(args.data_dir.expanduser().resolve(), args.idle_minutes)


if __name__ == "__main__":
    sys.exit(main())
