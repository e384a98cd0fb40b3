"""`workbench run` through the engine: the session hosted there, this process its client.

With `engine = auto` a run uses the engine when one answers; when none does, one is started for
the next run and this one runs in-process (None: the caller goes on as without an engine).
With `require` the run waits for a new engine, and a failure to get one is said in one line.
The run itself is the in-process run's code (`headless.run_headless`) over a RemoteSession.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from workbench.cli.headless import Ended, Opened, Progress, header, run_headless
from workbench.config.choices import FLAG_SETTINGS
from workbench.config.settings import Settings
from workbench.pb import engine_pb2 as epb
from workbench.pb import workbench_pb2 as pb
from workbench.service.attach import open_in_engine, open_request
from workbench.service.client import EngineGone, RemoteSession
from workbench.session.errors import SessionError

HANGUP = 129  # 128 + SIGHUP: the terminal closed and `engine_hangup = cancel` cancelled the run
ENGINE_LOST = 75  # the session's process in the engine ended mid-run (EX_TEMPFAIL): resume it


def engine_lost(session_id: str, err: Exception) -> str:
    """The one line when a session's process in the engine died under its client (exit ENGINE_LOST)."""
    return (
        f"the engine's process for session {session_id} ended mid-run ({err}); what it committed is kept: "
        f"continue it with `workbench run --resume {session_id} PROMPT`"
    )


class _RunHere(Exception):
    """No engine answers (`auto`): this run goes in-process."""


def request_of(args: argparse.Namespace, answerable: bool) -> epb.OpenSession:
    """The engine's open request for this command line (the flags given, by setting)."""
    flags = {name: getattr(args, name, None) for name in FLAG_SETTINGS}
    return open_request(flags, args.resume, newest=args.cont, interactive=False, answerable=answerable)


def run_hosted(settings: Settings, args: argparse.Namespace) -> int | None:
    """Run `args.prompt` in the engine; None when this run goes in-process after all."""
    from workbench.cli.commands.run import report_outcome

    ended, progress = Ended(), Progress()
    try:
        ran = asyncio.run(_detach(settings, args) if args.detach else _run(settings, args, ended, progress))
    except KeyboardInterrupt:
        return 130
    except _RunHere:
        return None
    except SessionError as err:
        print(f"workbench: {err}", file=sys.stderr)
        return 2
    if isinstance(ran, str):
        print(f"workbench: {ran}", file=sys.stderr)
        return ENGINE_LOST
    if ran is None:
        return 0  # detached: the id is printed
    outcome, session = ran
    try:
        return report_outcome(outcome, session, args, ended, progress)
    except OSError:
        if ended.code == HANGUP:
            return HANGUP  # the terminal is gone: nowhere to say it
        raise


async def _hosted(settings: Settings, args: argparse.Namespace, answerable: bool) -> RemoteSession:
    session = await open_in_engine(settings, request_of(args, answerable))
    if session is None:
        raise _RunHere
    return session


async def _detach(settings: Settings, args: argparse.Namespace) -> None:
    """Start the run in the engine, print the session's id, leave it running. A review waits
    for a person (`workbench attach ID`)."""
    session = await _hosted(settings, args, answerable=True)
    session.send(args.prompt)
    await session.detach()
    print(session.id)


async def _run(
    settings: Settings, args: argparse.Namespace, ended: Ended, progress: Progress
) -> tuple[pb.RunFinished, RemoteSession] | str:
    opened: list[RemoteSession] = []

    async def open_hosted(answerable: bool) -> Opened:
        session = await _hosted(settings, args, answerable)
        opened.append(session)
        d = session.described
        return Opened(session, header(d.id, d.model, d.data_dir, d.sandbox, d.mcp_servers), -1)

    try:
        outcome, _ = await run_headless(
            open_hosted,
            args.prompt,
            jsonl=args.jsonl,
            ended=ended,
            progress=progress,
            hangup=settings.engine_hangup == "cancel",
        )
    except EngineGone as err:
        return engine_lost(opened[0].id if opened else "?", err)
    return outcome, opened[0]
