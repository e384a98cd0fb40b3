"""`workbench rewind ID --to TURN [--code|--conversation|--both] [--yes]`: the files, the
conversation, or both, as they were before the person's prompt TURN (see undo.py for the asking
and the exit status; 5: not confirmed)."""

from __future__ import annotations

import argparse

from workbench.cli.command import Command, UsageError
from workbench.cli.commands.undo import put_back, yes_flag
from workbench.cli.flags import data_dir_flag, settings_of


def flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("id", help="the session (an id or a unique prefix)")
    p.add_argument(
        "--to", type=int, required=True, metavar="TURN", help="before this prompt (`workbench checkpoints ID`)"
    )
    what = p.add_mutually_exclusive_group()
    what.add_argument("--code", action="store_const", const="code", dest="what", help="the files only (the default)")
    what.add_argument(
        "--conversation", action="store_const", const="conversation", dest="what", help="the conversation only"
    )
    what.add_argument("--both", action="store_const", const="both", dest="what", help="the files and the conversation")
    yes_flag(p)
    data_dir_flag(p)


def handle(args: argparse.Namespace) -> int:
    if args.to < 1:
        raise UsageError("--to takes a turn number from 1 (`workbench checkpoints ID` lists them)")
    return put_back(settings_of(args), args.id, args.to, args.what or "code", args.yes)


COMMAND = Command(
    name="rewind",
    summary="put the files and/or the conversation back to before a turn",
    description="Put a session's files (--code, the default), its conversation (--conversation) or both "
    "(--both) back as they were before the person's prompt TURN. Shows what changes and asks; exit status 5 "
    "when not confirmed. A rewind can be undone with `workbench undo ID`.",
    flags=flags,
    handle=handle,
)
