"""`workbench attach ID`: a session the engine hosts, from its first event, live.

On a terminal it is the app on that session (the same as `workbench --resume ID --engine
require`: its transcript, its reviews, steering, cancel, rewind; Ctrl+\\ leaves it running).
With --jsonl, or without a terminal, it follows headless: every event as JSONL (or progress on
stderr as `workbench run` prints it), the answer on stdout, and the exit status of its run, when
that run ends; an idle session is replayed and left at once. Ctrl-C or SIGTERM cancels its run;
closing the terminal leaves it running.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from pathlib import Path

from workbench.cli.command import Command
from workbench.cli.flags import data_dir_flag, settings_of
from workbench.cli.headless import Ended, Progress, guarded
from workbench.cli.hosted import ENGINE_LOST, engine_lost
from workbench.pb import workbench_pb2 as pb
from workbench.service.client import EngineGone, EngineUnavailable, Refused, RemoteSession
from workbench.service.start import connect_engine
from workbench.session.catalog import event_json
from workbench.session.terminal_review import TerminalReviewer


def flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("id", help="the session (its id, as `workbench engine status` lists it)")
    p.add_argument("--jsonl", action="store_true", help="print every event as one JSON line")
    data_dir_flag(p)


def handle(args: argparse.Namespace) -> int:
    from workbench.cli.commands.app import not_terminals
    from workbench.cli.commands.run import report_outcome

    settings = settings_of(args)
    if not args.jsonl and not not_terminals():  # the app, attached
        from workbench.config.log_file import setup_logging
        from workbench.tui.run import run_app

        setup_logging(settings)
        settings.engine = "require"
        return run_app(settings, None, args.id, pick=False)
    ended, progress = Ended(), Progress()
    try:
        outcome, session = asyncio.run(_follow(settings.data_dir, args, ended, progress))
    except (EngineUnavailable, Refused) as err:
        print(f"workbench: {err}", file=sys.stderr)
        return 1
    except EngineGone as err:
        print(f"workbench: {engine_lost(args.id, err)}", file=sys.stderr)
        return ENGINE_LOST
    return report_outcome(outcome, session, args, ended, progress)


async def _follow(
    data_dir: Path, args: argparse.Namespace, ended: Ended, progress: Progress
) -> tuple[pb.RunFinished, RemoteSession]:
    client = await connect_engine(data_dir, start=False, wait=False)
    try:
        described = await client.attach(args.id)
    finally:
        await client.close()
    session = await RemoteSession.attach(described)
    loop = asyncio.get_running_loop()

    cancels: list[asyncio.Task[None]] = []

    def stop(code: int) -> None:
        if not ended.code:
            ended.code = code
            cancels.append(loop.create_task(session.cancel()))

    printer = (lambda e: print(event_json(e), flush=True)) if args.jsonl else progress
    session.subscribe(guarded(printer, stop), after=0)
    prompting = None
    if sys.stdin.isatty() and sys.stderr.isatty():
        reviewer = TerminalReviewer(session.decide, session.pending_reviews, stdin=sys.stdin, stderr=sys.stderr)
        session.subscribe(reviewer.on_event)
        prompting = loop.create_task(reviewer.run(), name="review prompt")
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop, 128 + signum)
    try:
        outcome = await session.wait()
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
        if prompting is not None:
            prompting.cancel()
        await session.close(end=False)
    return outcome, session


COMMAND = Command(
    name="attach",
    summary="follow a session the engine hosts, live",
    description="Follow a session the engine hosts: its events from the first, live, until its run ends.",
    flags=flags,
    handle=handle,
)
