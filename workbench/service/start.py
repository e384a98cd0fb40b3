"""Finding the engine, and starting one when a client wants it.

The engine is started as its own detached process (a new session, stdio closed, its stderr to
its log in the data folder) with the client's environment less every secret (the rule of
`config.secrets`): the engine holds no key; each session gets its client's environment.
Two clients that start it at once start two processes, and the lock lets one serve.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

from workbench.config.secrets import is_secret
from workbench.service.client import EngineClient, EngineUnavailable
from workbench.service.place import EnginePlace, PlaceError, engine_place, ensure_folder

START_WAIT = 30.0  # seconds a client that requires the engine waits for a new one to answer


def engine_environment() -> dict[str, str]:
    return {name: value for name, value in os.environ.items() if not is_secret(name)}


def spawn_engine(place: EnginePlace, idle_minutes: float) -> None:
    """Start an engine for `place` in the background; it outlives this process."""
    place.data_dir.mkdir(parents=True, exist_ok=True)
    with open(place.log, "ab") as log:
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "workbench.service.engine",
                "--data-dir",
                str(place.data_dir),
                "--idle-minutes",
                str(idle_minutes),
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
            cwd="/",
            env=engine_environment(),
            start_new_session=True,
        )


async def connect_engine(data_dir: Path, *, start: bool, wait: bool, idle_minutes: float = 30.0) -> EngineClient:
    """The engine for `data_dir`. With `start`, one is started when none answers; with `wait`,
    this waits for it to answer, else EngineUnavailable says one is starting (for next time)."""
    place = engine_place(data_dir)
    try:
        ensure_folder(place)
    except PlaceError as err:
        raise EngineUnavailable(str(err)) from err
    try:
        return await EngineClient.connect(place.socket)
    except EngineUnavailable as err:
        if not start:
            raise
        reason = str(err)
    try:
        spawn_engine(place, idle_minutes)
    except OSError as err:
        raise EngineUnavailable(f"cannot start an engine: {err.strerror or err}") from err
    if not wait:
        raise EngineUnavailable(f"{reason}; one is starting for the next run")
    deadline = time.monotonic() + START_WAIT
    while True:
        await asyncio.sleep(0.05)
        try:
            return await EngineClient.connect(place.socket)
        except EngineUnavailable as err:
            if time.monotonic() > deadline:
                raise EngineUnavailable(f"the engine did not answer within {START_WAIT:.0f} s: {err}") from err
