"""`workbench run PROMPT`: one task headless; the answer on stdout, progress on stderr."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sqlite3
import sys
from typing import TYPE_CHECKING

from workbench.cli.command import Command, UsageError
from workbench.cli.flags import engine_flags, guard_flags, model_flags, resumed, settings_of
from workbench.config.log_file import setup_logging
from workbench.config.report import flag_help
from workbench.config.settings import Settings
from workbench.core.causes import advice, disk_full
from workbench.core.words import run_status, with_reason
from workbench.pb import workbench_pb2 as pb

if TYPE_CHECKING:
    from workbench.cli.headless import Ended, HeadlessSession, Progress

EXIT_CODES = {
    pb.RUN_STATUS_FINISHED: 0,
    pb.RUN_STATUS_TERMINATED: 0,
    pb.RUN_STATUS_FAILED: 1,
    pb.RUN_STATUS_WAIT_TIMEOUT: 1,
    pb.RUN_STATUS_INTERRUPTED: 1,
    pb.RUN_STATUS_BUDGET_EXHAUSTED: 3,
    pb.RUN_STATUS_STOPPED: 4,  # an agent kept repeating a call and no person could be asked
    pb.RUN_STATUS_CANCELLED: 130,
}
NO_MODEL = (
    "no model configured: give --model PROVIDER/MODEL (e.g. openai/gpt-4.1), set WORKBENCH_MODEL, "
    'or put model = "..." in ~/.config/workbench/config.toml. To try the offline scripted demo: '
    'workbench run --model demo --workspace "$(mktemp -d)" "fix the login check in auth.go"'
)


def flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("prompt", help="the task")
    model_flags(p)
    guard_flags(p)
    p.add_argument("--max-turns", type=int, help=flag_help("max_turns"))
    p.add_argument("--max-tokens", type=int, help=flag_help("max_tokens"))
    p.add_argument("--max-cost", type=float, help=flag_help("max_cost"))
    p.add_argument("--jsonl", action="store_true", help="print every event as one JSON line")
    again = p.add_mutually_exclusive_group()
    again.add_argument("--resume", metavar="ID", help="continue session ID with this prompt")
    again.add_argument("--continue", dest="cont", action="store_true", help="continue this workspace's newest session")
    engine_flags(p)
    p.add_argument(
        "--detach",
        action="store_true",
        help="start the run in the engine, print its session id and return (follow it with `workbench attach ID`)",
    )


def check_model(settings: Settings) -> None:
    """Fail early, in one line, on no model, an unknown model, a missing key or a cost budget without a price."""
    if not settings.model:
        raise UsageError(NO_MODEL)
    from workbench.session.errors import SessionError
    from workbench.session.startup import check_model as check

    try:
        check(settings)
    except SessionError as err:
        raise UsageError(str(err)) from err


def check_demo_workspace(settings: Settings) -> None:
    """The demo plays one scripted scenario: never in a folder that holds anything but its own file."""
    if settings.model != "demo":
        return
    others = sorted(p.name for p in settings.workspace.iterdir() if p.name not in ("auth.go", ".workbench"))
    if others:
        raise UsageError(
            f"the demo model is a script that writes auth.go; {settings.workspace} holds other files "
            f"({', '.join(others[:3])}{', ...' if len(others) > 3 else ''}). Run it in an empty folder: "
            '--workspace "$(mktemp -d)"'
        )


def handle(args: argparse.Namespace) -> int:
    if not args.prompt.strip():
        raise UsageError("the prompt is empty: say what the agent should do")
    settings = settings_of(args)
    if args.detach and args.engine == "off":
        raise UsageError("--detach runs in the engine: not with --no-engine or --engine off")
    if args.detach:
        settings.engine = "require"
    if settings.engine != "off":
        if not settings.workspace.is_dir():
            raise UsageError(f"workspace {settings.workspace} is not a folder")
        if not (args.resume or args.cont):
            check_demo_workspace(settings)
        setup_logging(settings)
        from workbench.cli.hosted import run_hosted

        code = run_hosted(settings, args)
        if code is not None:
            return code
    resume = resumed(settings, args)
    if not settings.workspace.is_dir():
        raise UsageError(f"workspace {settings.workspace} is not a folder")
    if resume is None:
        check_demo_workspace(settings)
    from workbench.session.startup import preload

    preload()  # litellm imports while the store opens
    setup_logging(settings)  # a data folder that cannot be used is said at once, not after the import
    check_model(settings)
    return _run_session(settings, args, resume)


def _run_session(settings: Settings, args: argparse.Namespace, resume: str | None) -> int:
    from workbench.cli.headless import Ended, Progress, in_process, run_headless
    from workbench.session.errors import SessionError, event_log_failure

    ended, progress = Ended(), Progress()
    try:
        outcome, session = asyncio.run(
            run_headless(in_process(settings, resume), args.prompt, jsonl=args.jsonl, ended=ended, progress=progress)
        )
    except KeyboardInterrupt:
        return 130
    except SessionError as err:
        print(f"workbench: {err}", file=sys.stderr)
        return 2
    except (sqlite3.Error, OSError) as err:  # the data folder (disk full, removed, read-only), the open-file limit
        logging.getLogger("workbench").exception("the run stopped on %s", err)
        if isinstance(err, sqlite3.Error) or disk_full(err):
            print(f"workbench: {event_log_failure(settings.data_dir, err)}.", file=sys.stderr)
        else:
            hint = advice(err, "")
            print(
                f"workbench: stopped: {err}{'; ' + hint if hint else ''} (traceback in {settings.log_path})",
                file=sys.stderr,
            )
        return 1
    except Exception as err:  # a bug: one line here, the traceback in the log file
        logging.getLogger("workbench").exception("internal error")
        print(
            f"workbench: internal error: {type(err).__name__}: {err} (traceback in {settings.log_path})",
            file=sys.stderr,
        )
        return 1
    return report_outcome(outcome, session, args, ended, progress)


def report_outcome(
    outcome: pb.RunFinished, session: HeadlessSession, args: argparse.Namespace, ended: Ended, progress: Progress
) -> int:
    """The answer on stdout, how the run ended on stderr, and the exit status (in both modes)."""
    if ended.code == 141:  # stdout is gone: say nothing more there (nor at interpreter exit)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    if session.failure is not None:
        print(f"workbench: {session.failure_text()}", file=sys.stderr)
        return 1
    answered = outcome.status in (pb.RUN_STATUS_FINISHED, pb.RUN_STATUS_TERMINATED)
    if not args.jsonl and answered and outcome.text:
        print(outcome.text)
    if outcome.status == pb.RUN_STATUS_CANCELLED:
        how = {130: "Ctrl-C", 143: "SIGTERM", 129: "a closed terminal (SIGHUP)"}.get(ended.code, "a cancel")
        cut = "; interrupted: " + ", ".join(progress.interrupted) if progress.interrupted else ""
        print(f"workbench: cancelled by {how} after {ended.at:.1f} s{cut}", file=sys.stderr)
    elif outcome.status == pb.RUN_STATUS_STOPPED:
        print(f"workbench: {outcome.reason}", file=sys.stderr)  # "stopped: agent main repeated ..."
    elif not answered:
        note = " (its last message, not an answer, is in the transcript)" if outcome.text else ""
        print(f"workbench: {with_reason(run_status(outcome.status), outcome.reason)}{note}", file=sys.stderr)
    print(
        f"workbench: session {session.id}; continue it with `workbench run --resume {session.id} PROMPT`, "
        f"read it with `workbench export {session.id}`",
        file=sys.stderr,
    )
    return ended.code or EXIT_CODES.get(outcome.status, 1)


COMMAND = Command(
    name="run",
    summary="run one task headless and print the answer",
    description="Run one task headless and print the answer.",
    flags=flags,
    handle=handle,
)
