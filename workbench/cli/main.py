"""The command line: `workbench COMMAND ...` runs a registered command; anything else opens the app.

`workbench run PROMPT` runs headless; `workbench sessions` lists (and prunes) stored sessions;
`workbench export ID` writes a transcript; `workbench config` and `workbench doctor` check the
setup; `workbench [TASK]` opens the TUI. Each command is a module of `workbench/cli/commands/`
(its flags and its handler) registered in COMMANDS; its handler opens a Session, prints, and
returns the exit status. No engine wiring lives here.
"""

from __future__ import annotations

import argparse
import sys

from workbench.cli.command import Command, Parser, UsageError
from workbench.cli.commands import checkpoints, config, doctor, export, mcp, rewind, run, sessions, undo
from workbench.cli.commands.app import APP
from workbench.config.settings import ConfigError

COMMANDS: tuple[Command, ...] = (
    run.COMMAND,
    sessions.COMMAND,
    export.COMMAND,
    config.COMMAND,
    doctor.COMMAND,
    mcp.COMMAND,
    undo.COMMAND,
    rewind.COMMAND,
    checkpoints.COMMAND,
)


def command_parser() -> Parser:
    """`workbench COMMAND ...`: one argparse subcommand per registered command."""
    top = Parser(prog="workbench")
    sub = top.add_subparsers(dest="command", metavar="COMMAND", required=True, parser_class=Parser)
    for command in COMMANDS:
        parser = sub.add_parser(command.name, help=command.summary, description=command.description)
        command.flags(parser)
        parser.set_defaults(handle=command.handle)
    return top


def app_parser() -> Parser:
    """`workbench [TASK]`: the app, the default when the first word names no command."""
    listed = "\n".join(f"  {c.name:<10}{c.summary}" for c in COMMANDS)
    p = Parser(
        prog="workbench",
        description=APP.description,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=f"commands (`workbench COMMAND --help` for each):\n{listed}\n\n"
        "A TASK that is exactly a command's name goes after `--`: workbench -- run",
    )
    APP.flags(p)
    p.set_defaults(handle=APP.handle)
    return p


def parse(argv: list[str]) -> argparse.Namespace:
    """The parsed flags, with `handle` set to the handler of the command they name."""
    if argv and argv[0] in {c.name for c in COMMANDS}:
        return command_parser().parse_args(argv)
    return app_parser().parse_args(argv)


def parsers() -> list[argparse.ArgumentParser]:
    """Every parser of the command line (docs/CONFIG.md names the flag of each setting from them)."""
    return [app_parser(), command_parser()]


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = parse(argv)
        code: int = args.handle(args)
        return code
    except (UsageError, ConfigError) as err:
        print(f"workbench: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # `python -m workbench.cli.main` ends as the console script does
    from workbench.cli.launch import entry

    entry()
