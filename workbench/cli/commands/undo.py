"""`workbench undo [ID]`: put back what the last turn changed (again: take that undo back).

It shows what will change and asks; `--yes` answers for scripts. Without a terminal to ask and
without `--yes`, nothing changes and it says so. Exit status: 0 done (or nothing to change), 1 it
cannot be done (an unknown session, one open in another process, nothing to undo), 2 bad usage,
5 not confirmed (declined, or no terminal and no --yes). `workbench rewind` shares all of this.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.cli.command import Command
from workbench.cli.flags import data_dir_flag, settings_of
from workbench.config.settings import Settings
from workbench.core.safe_text import printable

if TYPE_CHECKING:
    from workbench.session.rewind import RewindPlan

NOT_CONFIRMED = 5  # the person declined, or could not be asked (no terminal, no --yes)


def flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("id", nargs="?", default="", help="the session (default: this workspace's newest)")
    p.add_argument("--workspace", type=Path, help="with no ID: whose newest session (default: current folder)")
    yes_flag(p)
    data_dir_flag(p)


def yes_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("--yes", action="store_true", help="do it without asking (files changed outside are kept)")


def handle(args: argparse.Namespace) -> int:
    return put_back(settings_of(args), args.id, None, "code", args.yes)


def put_back(settings: Settings, session_id: str, to_turn: int | None, what: str, yes: bool) -> int:
    """Undo (`to_turn` None) or rewind the session; the exit status."""
    from workbench.session.catalog import find_session, newest_session
    from workbench.session.errors import SessionError

    try:
        info = find_session(settings, session_id) if session_id else newest_session(settings, settings.workspace)
        settings.workspace = Path(info.workspace)
        return asyncio.run(_put_back(settings, info.id, to_turn, what, yes))
    except SessionError as err:
        print(f"workbench: {err}", file=sys.stderr)
        return 1


async def _put_back(settings: Settings, session_id: str, to_turn: int | None, what: str, yes: bool) -> int:
    from workbench.session.session import Session

    session = await Session.open(settings, resume=session_id)
    try:
        plan = await session.plan_rewind(
            to_turn, code=what in ("code", "both"), conversation=what in ("conversation", "both")
        )
        verb = "undo" if plan.undo else "rewind"
        show(session.id, plan)
        if plan.code and not plan.files and not plan.conversation:
            print("nothing to change: the files are as they were then")
            return 0
        overwrite = False
        if not yes:
            if not sys.stdin.isatty():
                print(
                    f"workbench: nothing changed: no terminal to ask; `workbench {verb} ... --yes` does it",
                    file=sys.stderr,
                )
                return NOT_CONFIRMED
            if not ask("Go ahead?"):
                print("workbench: declined; nothing changed", file=sys.stderr)
                return NOT_CONFIRMED
            if plan.outside:
                overwrite = ask("Overwrite the files changed outside Workbench too (else they stay as they are)?")
        done = await session.rewind(plan, overwrite_outside=overwrite)
        kept = f"; kept as they are: {len(plan.outside)} changed outside" if plan.outside and not overwrite else ""
        print(f"done: {len(done.files)} path(s) put back{kept}; `workbench undo {session.id}` takes this back")
        return 0
    finally:
        await session.close()


def show(session_id: str, plan: RewindPlan) -> None:
    """What the plan changes: the files with +/- lines, the conversation, what changed outside."""
    verb = "undo" if plan.undo else "rewind"
    parts = [p for p, on in (("files", plan.code), ("conversation", plan.conversation)) if on]
    print(f"{verb} in session {session_id}: the {' and the '.join(parts)} go back {printable(plan.what)}")
    for change in plan.files:
        counts = f"  +{change.added} -{change.removed}" if change.added or change.removed else ""
        print(f"  {change.kind:<8} {printable(change.path)}{counts}")
    if plan.conversation:
        print(f"  the conversation: {plan.messages_dropped} message(s) from that prompt on are left out")
    if plan.outside:
        print(f"changed outside Workbench since its last checkpoint ({len(plan.outside)}):")
        for path in plan.outside:
            print(f"  {printable(path)}")


def ask(question: str) -> bool:
    try:
        answer = input(f"{question} [y/N] ")
    except EOFError:
        return False
    return answer.strip().lower() in ("y", "yes")


COMMAND = Command(
    name="undo",
    summary="put back what the last turn changed in the workspace",
    description="Put the workspace's files back as they were before the last turn of a session (or take "
    "back the last undo or rewind). Shows what changes and asks; exit status 5 when not confirmed.",
    flags=flags,
    handle=handle,
)
