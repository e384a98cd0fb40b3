"""`workbench undo`, `workbench rewind` and `workbench checkpoints`: the person takes back what
the agent did to the workspace (and, for a rewind, to the conversation).

Each shows what it will change and asks; `--yes` answers for scripts. Without a terminal to
ask and without `--yes`, nothing changes and it says so. Exit status: 0 done (or nothing to
change), 1 it cannot be done (an unknown session, one open in another process, nothing to
undo), 2 bad usage, 5 not confirmed (declined, or no terminal and no --yes).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from workbench.config.settings import Settings
from workbench.core.safe_text import printable
from workbench.session.session import Session, SessionError, find_session, newest_session, stored_turns

NOT_CONFIRMED = 5


def undo_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("session", nargs="?", default="", help="the session (default: this workspace's newest)")
    p.add_argument("--yes", action="store_true", help="do it without asking (files changed outside are kept)")


def rewind_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("session", help="the session (an id or a unique prefix)")
    p.add_argument("--to", type=int, required=True, metavar="TURN", help="put back as before this prompt (1-based)")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--code", action="store_const", const="code", dest="what", help="the files only (default)")
    what.add_argument("--conversation", action="store_const", const="conversation", dest="what", help="the conversation only")
    what.add_argument("--both", action="store_const", const="both", dest="what", help="the files and the conversation")
    p.add_argument("--yes", action="store_true", help="do it without asking (files changed outside are kept)")


def checkpoints_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("session", help="the session (an id or a unique prefix)")


def run_undo(settings: Settings, args: argparse.Namespace) -> int:
    return _run(settings, args.session, None, "code", args.yes)


def run_rewind(settings: Settings, args: argparse.Namespace) -> int:
    if args.to < 1:
        print("workbench: --to takes a turn number from 1 (`workbench checkpoints ID` lists them)", file=sys.stderr)
        return 2
    return _run(settings, args.session, args.to, args.what or "code", args.yes)


def _run(settings: Settings, session_id: str, to_turn: int | None, what: str, yes: bool) -> int:
    try:
        info = find_session(settings, session_id) if session_id else newest_session(settings, settings.workspace)
    except SessionError as err:
        print(f"workbench: {err}", file=sys.stderr)
        return 1
    settings.workspace = Path(info.workspace)
    try:
        return asyncio.run(_rewind(settings, info.id, to_turn, what, yes))
    except SessionError as err:
        print(f"workbench: {err}", file=sys.stderr)
        return 1


async def _rewind(settings: Settings, session_id: str, to_turn: int | None, what: str, yes: bool) -> int:
    session = await Session.open(settings, resume=session_id)
    try:
        plan = await session.plan_rewind(
            to_turn, code=what in ("code", "both"), conversation=what in ("conversation", "both")
        )
        verb = "undo" if plan.undo else "rewind"
        parts = [p for p, on in (("files", plan.code), ("conversation", plan.conversation)) if on]
        print(f"{verb} in session {session.id}: the {' and the '.join(parts)} go back {printable(plan.what)}")
        for change in plan.files:
            counts = f"  +{change.added} -{change.removed}" if change.added or change.removed else ""
            print(f"  {change.kind:<8} {printable(change.path)}{counts}")
        if plan.conversation:
            print(f"  the conversation: {plan.messages_dropped} message(s) from that prompt on are left out")
        if plan.code and not plan.files and not plan.conversation:
            print("nothing to change: the files are as they were then")
            return 0
        overwrite = False
        if plan.outside:
            print(f"changed outside Workbench since its last checkpoint ({len(plan.outside)}):")
            for path in plan.outside:
                print(f"  {printable(path)}")
        if not yes:
            if not sys.stdin.isatty():
                print(
                    f"workbench: nothing changed: no terminal to ask; `workbench {verb} ... --yes` does it",
                    file=sys.stderr,
                )
                return NOT_CONFIRMED
            if not _ask("Go ahead?"):
                print("workbench: declined; nothing changed", file=sys.stderr)
                return NOT_CONFIRMED
            if plan.outside:
                overwrite = _ask("Overwrite the files changed outside Workbench too (else they stay as they are)?")
        done = await session.rewind(plan, overwrite_outside=overwrite)
        kept = f"; kept as they are: {len(plan.outside)} changed outside" if plan.outside and not overwrite else ""
        print(f"done: {len(done.files)} path(s) put back{kept}; `workbench undo {session.id}` takes this back")
        return 0
    finally:
        await session.close()


def _ask(question: str) -> bool:
    try:
        answer = input(f"{question} [y/N] ")
    except EOFError:
        return False
    return answer.strip().lower() in ("y", "yes")


def run_checkpoints(settings: Settings, args: argparse.Namespace) -> int:
    try:
        info, turns = stored_turns(settings, args.session)
    except SessionError as err:
        print(f"workbench: {err}", file=sys.stderr)
        return 1
    if not turns:
        print(f"session {info.id} has no checkpoints yet")
        return 0
    for line in checkpoint_lines(turns):
        print(line)
    return 0


def checkpoint_lines(turns: list[Any]) -> list[str]:
    """Each turn, its calls' checkpoints and the files it changed (with +/- lines)."""
    out = []
    for turn in turns:
        prompt = printable(turn.prompt.splitlines()[0] if turn.prompt.strip() else "")[:70]
        out.append(f"turn {turn.number}  {prompt!r}  ({len(turn.files)} path(s) changed)")
        for c in turn.calls:
            changed = f"{c.files_changed} changed before it" if c.files_changed else "nothing changed before it"
            out.append(f"    {c.agent_id:<8} {c.tool:<12} {c.call_id}  ({changed})")
        for f in turn.files:
            counts = f"  +{f.added} -{f.removed}" if f.added or f.removed else ""
            out.append(f"      {f.kind:<8} {printable(f.path)}{counts}")
    return out
