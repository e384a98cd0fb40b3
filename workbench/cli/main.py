"""The command line: `workbench COMMAND ...` runs a registered command; anything else opens the app.

`workbench run PROMPT` runs headless; `workbench sessions` lists (and prunes) stored sessions;
`workbench export ID` writes a transcript; `workbench config` and `workbench doctor` check the
setup; `workbench [TASK]` opens the TUI. Each command is a module of `workbench/cli/commands/`
(its flags and its handler) named in COMMANDS; its handler opens a Session, prints, and
returns the exit status. No engine wiring lives here. A command's module loads only when its
name is on the line (or `--help` lists them): the app's start loads none of them.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import sys

from workbench.cli.command import Command, Parser, UsageError
from workbench.cli.commands.app import APP
from workbench.config.settings import ConfigError

COMMANDS: tuple[str, ...] = (  # each the name of its module in workbench/cli/commands/
    "run",
    "sessions",
    "export",
    "config",
    "doctor",
    "mcp",
    "undo",
    "rewind",
    "checkpoints",
    "acp",
    "engine",
    "attach",
    "web",
)


def command(name: str) -> Command:
    """The registered command `name` (its module's COMMAND)."""
    loaded = importlib.import_module(f"workbench.cli.commands.{name}").COMMAND
    assert isinstance(loaded, Command) and loaded.name == name
    return loaded


def commands() -> list[Command]:
    return [command(name) for name in COMMANDS]


class AppParser(Parser):
    """`workbench [TASK]`'s parser: its help lists every command (their modules load for it)."""

    def format_help(self) -> str:
        width = max(len(c.name) for c in commands())  # the summaries in one column, apart from every name
        listed = "\n".join(f"  {c.name:<{width}}  {c.summary}" for c in commands())
        self.epilog = (
            f"commands (`workbench COMMAND --help` for each):\n{listed}\n\n"
            "A TASK that is exactly a command's name goes after `--`: workbench -- run"
        )
        return super().format_help()


def command_parser(only: str | None = None) -> Parser:
    """`workbench COMMAND ...`: one argparse subcommand per registered command, or for the one
    named `only` (the line names it: no other command's module loads, ~0.1 s for `run`)."""
    top = Parser(prog="workbench")
    sub = top.add_subparsers(dest="command", metavar="COMMAND", required=True, parser_class=Parser)
    for registered in [command(only)] if only else commands():
        parser = sub.add_parser(registered.name, help=registered.summary, description=registered.description)
        registered.flags(parser)
        parser.set_defaults(handle=registered.handle)
    return top


def app_parser() -> Parser:
    """`workbench [TASK]`: the app, the default when the first word names no command."""
    p = AppParser(prog="workbench", description=APP.description, formatter_class=argparse.RawDescriptionHelpFormatter)
    APP.flags(p)
    p.set_defaults(handle=APP.handle)
    return p


def parse(argv: list[str]) -> argparse.Namespace:
    """The parsed flags, with `handle` set to the handler of the command they name."""
    if argv and argv[0] in COMMANDS:
        return command_parser(argv[0]).parse_args(argv)
    return app_parser().parse_args(argv)


def parsers() -> list[argparse.ArgumentParser]:
    """Every parser of the command line (docs/CONFIG.md names the flag of each setting from them)."""
    return [app_parser(), command_parser()]


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = parse(argv)
        if args.handle is not APP.handle:
            gc.enable()  # the console script leaves it off for the app's first frame only (launch.py)
        code: int = args.handle(args)
        return code
    except (UsageError, ConfigError) as err:
        print(f"workbench: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # `python -m workbench.cli.main` ends as the console script does
    from workbench.cli.launch import entry

    entry()
