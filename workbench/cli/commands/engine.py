"""`workbench engine start|stop|status`: the engine that hosts sessions for this data folder."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from workbench.cli.command import Command
from workbench.cli.flags import data_dir_flag, settings_of
from workbench.pb import engine_pb2 as epb
from workbench.service.client import EngineClient, EngineUnavailable
from workbench.service.place import engine_place
from workbench.service.start import connect_engine

STOP_WAIT = 15.0  # seconds `engine stop` waits for the engine to be gone


def flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", choices=("start", "stop", "status"), help="start one, stop it, or say how it stands")
    data_dir_flag(p)


def handle(args: argparse.Namespace) -> int:
    settings = settings_of(args)
    action = {"start": _start, "stop": _stop, "status": _status}[args.action]
    try:
        return asyncio.run(action(settings.data_dir, settings.engine_idle))
    except EngineUnavailable as err:
        print(f"workbench: {err}", file=sys.stderr)
        return 1


def session_line(s: epb.LiveSession) -> str:
    clients = f", {s.clients} client{'s' if s.clients != 1 else ''} attached" if s.clients else ""
    return f"  {s.id}  {s.state}{clients}  {s.model}  {s.workspace}  (pid {s.pid})"


async def _start(data_dir: Path, idle: float) -> int:
    client = await connect_engine(data_dir, start=True, wait=True, idle_minutes=idle)
    status = await client.status()
    await client.close()
    print(f"engine running: pid {status.pid}, Workbench {status.version}, log {status.log}")
    return 0


async def _status(data_dir: Path, idle: float) -> int:
    try:
        client = await EngineClient.connect(engine_place(data_dir).socket)
    except EngineUnavailable:
        print(f"no engine runs for the data folder {data_dir}")
        return 1
    status = await client.status()
    await client.close()
    print(
        f"engine running: pid {status.pid}, Workbench {status.version}, up {status.uptime / 60:.1f} min, "
        f"{status.rss / 2**20:.0f} MB RSS, log {status.log}"
    )
    print(f"{len(status.sessions)} live session(s)" + (":" if status.sessions else ""))
    for session in status.sessions:
        print(session_line(session))
    return 0


async def _stop(data_dir: Path, idle: float) -> int:
    place = engine_place(data_dir)
    try:
        client = await EngineClient.connect(place.socket)
    except EngineUnavailable:
        print(f"no engine runs for the data folder {data_dir}")
        return 0
    await client.stop()
    await client.close()
    for _ in range(int(STOP_WAIT / 0.05)):
        if not place.socket.exists():
            print("engine stopped (its live sessions were closed)")
            return 0
        await asyncio.sleep(0.05)
    print(f"workbench: the engine did not stop within {STOP_WAIT:.0f} s", file=sys.stderr)
    return 1


COMMAND = Command(
    name="engine",
    summary="start, stop or look at the engine that hosts sessions",
    description=(
        "The engine: one process per user and data folder that keeps litellm imported and hosts "
        "sessions that outlive their terminal (`workbench attach`). Used by `workbench run` with "
        "--engine auto or require (setting engine)."
    ),
    flags=flags,
    handle=handle,
)
