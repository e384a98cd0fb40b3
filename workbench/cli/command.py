"""What a command of the `workbench` line is: a name, its flags and its handler.

A new command is one module under `workbench/cli/commands/` that defines a `Command` named
COMMAND, and its name in `workbench/cli/main.py`'s `COMMANDS`. A handler gets the parsed flags and returns the
exit status; bad usage is a `UsageError` (one line, exit status 2).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NoReturn


class UsageError(Exception):
    """Bad usage: a one-line message and exit status 2."""


class Parser(argparse.ArgumentParser):
    """A parser whose errors are a usage line and a `UsageError` (main prints it, exit status 2).

    A word it does not know is its own error, also as a command's parser (argparse would hand it
    up to `workbench`'s, whose usage line does not name the command's flags)."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        raise UsageError(message)

    def parse_known_args(  # type: ignore[override]  # one signature for typeshed's overloads
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        parsed, extra = super().parse_known_args(args, namespace)
        if extra:
            self.error(f"unrecognized arguments: {' '.join(extra)}")
        return parsed, extra


Handler = Callable[[argparse.Namespace], int]  # the parsed flags -> the exit status


@dataclass(frozen=True)
class Command:
    """`workbench NAME ...`: `flags` declares its arguments on its parser, `handle` runs it."""

    name: str
    summary: str  # its line in `workbench --help`
    description: str  # the head of `workbench NAME --help`
    flags: Callable[[argparse.ArgumentParser], None]
    handle: Handler
