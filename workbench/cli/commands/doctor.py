"""`workbench doctor`: can bash and tmux run here, in the sandbox the settings ask for."""

from __future__ import annotations

import argparse

from workbench.cli.command import Command
from workbench.cli.flags import settings_of, where_flags


def handle(args: argparse.Namespace) -> int:
    from workbench.session import doctor

    return doctor.main(settings_of(args))


COMMAND = Command(
    name="doctor",
    summary="check tmux, bubblewrap and the sandbox",
    description="Check tmux, bubblewrap and the sandbox here; end what killed sessions left running.",
    flags=where_flags,
    handle=handle,
)
