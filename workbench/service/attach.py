"""A client's session in the engine: a live one by its id (attach), else a new or stored one
opened there. `None` when the client should run the session in its own process (`auto` and no
engine answers: one is started for next time)."""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Mapping
from typing import Any

from workbench.config.settings import Settings
from workbench.pb import engine_pb2 as epb
from workbench.service.client import EngineUnavailable, Refused, RemoteSession
from workbench.service.start import connect_engine
from workbench.session.errors import SessionError

log = logging.getLogger("workbench")


def open_request(
    flags: Mapping[str, Any], resume: str | None, *, newest: bool = False, interactive: bool, answerable: bool
) -> epb.OpenSession:
    """What the engine needs to work out a session's settings as this process would: its
    environment, folder and flags (by the setting's name; None: not given)."""
    request = epb.OpenSession(environ=dict(os.environ), cwd=os.getcwd(), resume=resume or "")
    request.interactive, request.answerable = interactive, answerable
    for name, value in flags.items():
        if value is None or name == "engine":
            continue
        flag = request.flags[name]
        if isinstance(value, bool):
            flag.flag = value
        elif isinstance(value, int):
            flag.integer = value
        elif isinstance(value, float):
            flag.number = value
        else:
            flag.text = str(value)
    if newest:
        request.flags["continue"].flag = True
    return request


async def open_in_engine(settings: Settings, request: epb.OpenSession, attach: str = "") -> RemoteSession | None:
    """The session in the engine (`attach`: a live one by id first). SessionError with one line
    when the engine refuses it, or when `engine = require` and none can serve; None with `auto`
    and no engine."""
    try:
        client = await connect_engine(
            settings.data_dir, start=True, wait=settings.engine == "require", idle_minutes=settings.engine_idle
        )
    except EngineUnavailable as err:
        if settings.engine == "require":
            raise SessionError(f"engine = require, and no engine can serve: {err}") from err
        log.info("running in-process: %s", err)
        return None
    try:
        described = None
        if attach:
            with contextlib.suppress(Refused):  # not live: opened from the store below
                described = await client.attach(attach)
        if described is None:
            described = await client.open(request)
    except Refused as err:
        raise SessionError(str(err)) from err
    finally:
        await client.close()
    return await RemoteSession.attach(described, settings)
