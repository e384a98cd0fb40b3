"""`workbench checkpoints ID`: a session's rewind points: each prompt (a turn), the checkpoint
taken before each of its tool calls, and the files the turn changed with +/- lines."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from workbench.cli.command import Command
from workbench.cli.flags import data_dir_flag, settings_of
from workbench.core.safe_text import printable

if TYPE_CHECKING:
    from workbench.session.rewind import TurnSummary


def flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("id", help="the session (an id or a unique prefix)")
    data_dir_flag(p)


def handle(args: argparse.Namespace) -> int:
    from workbench.session.catalog import stored_turns
    from workbench.session.errors import SessionError

    try:
        info, turns = stored_turns(settings_of(args), args.id)
    except SessionError as err:
        print(f"workbench: {err}", file=sys.stderr)
        return 1
    if not turns:
        print(f"session {info.id} has no checkpoints yet")
    for line in lines(turns):
        print(line)
    return 0


def lines(turns: list[TurnSummary]) -> list[str]:
    out = []
    for turn in turns:
        prompt = printable(turn.prompt.strip().splitlines()[0] if turn.prompt.strip() else "")[:70]
        out.append(f"turn {turn.number}  {prompt!r}  ({len(turn.files)} path(s) changed)")
        for c in turn.calls:
            if c.changed_by_it < 0:
                effect = "what it changed is not checkpointed yet"
            else:
                effect = f"changed {c.changed_by_it} path(s)" if c.changed_by_it else "changed nothing"
            out.append(f"    {c.agent_id:<8} {c.tool:<12} {c.call_id}  ({effect})")
        for f in turn.files:
            counts = f"  +{f.added} -{f.removed}" if f.added or f.removed else ""
            out.append(f"      {f.kind:<8} {printable(f.path)}{counts}")
    return out


COMMAND = Command(
    name="checkpoints",
    summary="a session's turns, the checkpoints of their calls, the files they changed",
    description="List a session's rewind points: each prompt, the checkpoint before each tool call (and the "
    "agent that made it), and the files the turn changed with lines added and removed.",
    flags=flags,
    handle=handle,
)
