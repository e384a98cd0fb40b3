"""`workbench run` through the engine: the session hosted there, this process its client.

With `engine = auto` a run uses the engine when one answers; when none does, one is started for
the next run and this one runs in-process (None: the caller goes on as without an engine).
With `require` the run waits for a new engine, and a failure to get one is said in one line.
The run itself is the in-process run's code (`headless.run_headless`) over a RemoteSession.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys

from workbench.cli.command import UsageError
from workbench.cli.flags import SETTING_FLAGS
from workbench.cli.headless import Ended, Opened, Progress, header, run_headless
from workbench.config.settings import Settings
from workbench.pb import engine_pb2 as epb
from workbench.pb import workbench_pb2 as pb
from workbench.service.client import EngineGone, EngineUnavailable, Refused, RemoteSession
from workbench.service.start import connect_engine

log = logging.getLogger("workbench")


def open_request(args: argparse.Namespace, answerable: bool) -> epb.OpenSession:
    """What the engine needs to work out this run's settings as this process would."""
    request = epb.OpenSession(
        environ=dict(os.environ), cwd=os.getcwd(), resume=args.resume or "", answerable=answerable
    )
    for name in SETTING_FLAGS:
        value = getattr(args, name, None)
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
    if args.cont:
        request.flags["continue"].flag = True
    return request


def run_hosted(settings: Settings, args: argparse.Namespace) -> int | None:
    """Run `args.prompt` in the engine; None when this run goes in-process after all."""
    from workbench.cli.commands.run import report_outcome

    ended, progress = Ended(), Progress()
    try:
        ran = asyncio.run(_run(settings, args, ended, progress))
    except KeyboardInterrupt:
        return 130
    except Refused as err:
        print(f"workbench: {err}", file=sys.stderr)
        return 2 if err.kind in ("usage", "session", "version") else 1
    if ran is None:
        return None
    if ran == "detached":
        return 0
    if isinstance(ran, str):
        print(f"workbench: {ran}", file=sys.stderr)
        return ENGINE_LOST
    outcome, session = ran
    return report_outcome(outcome, session, args, ended, progress)


ENGINE_LOST = 75  # the session's process in the engine ended mid-run (EX_TEMPFAIL): resume it


async def _run(
    settings: Settings, args: argparse.Namespace, ended: Ended, progress: Progress
) -> tuple[pb.RunFinished, RemoteSession] | str | None:
    try:
        client = await connect_engine(
            settings.data_dir, start=True, wait=settings.engine == "require", idle_minutes=settings.engine_idle
        )
    except EngineUnavailable as err:
        if settings.engine == "require":
            raise UsageError(f"engine = require, and no engine can serve: {err}") from err
        log.info("running in-process: %s", err)
        return None
    opened: list[RemoteSession] = []

    async def open_hosted(answerable: bool) -> Opened:
        described = await client.open(open_request(args, answerable))
        session = await RemoteSession.attach(described)
        opened.append(session)
        first = header(described.id, described.model, described.data_dir, described.sandbox, described.mcp_servers)
        return Opened(session, first, -1)

    if args.detach:
        described = await client.open(open_request(args, answerable=True))  # a person answers by attaching
        await client.close()
        session = await RemoteSession.attach(described)
        session.send(args.prompt)
        await session.close(end=False)
        print(described.id)
        return "detached"
    try:
        ran = await run_headless(open_hosted, args.prompt, jsonl=args.jsonl, ended=ended, progress=progress)
    except EngineGone as err:
        session_id = opened[0].id if opened else "?"
        return (
            f"the engine's process for session {session_id} ended mid-run ({err}); what it committed is kept: "
            f"continue it with `workbench run --resume {session_id} PROMPT`"
        )
    finally:
        await client.close()
    outcome, hosted = ran
    assert isinstance(hosted, RemoteSession)
    return outcome, hosted
