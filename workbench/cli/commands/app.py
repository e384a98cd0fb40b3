"""`workbench [TASK]`: the TUI, in this folder, on a new session (TASK sent at once) or a stored one."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from workbench import __version__
from workbench.cli.command import Command, UsageError
from workbench.cli.flags import engine_flags, guard_flags, model_flags, resumed, settings_of
from workbench.config.log_file import setup_logging


def flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--version", action="version", version=f"workbench {__version__}")
    p.add_argument("prompt", nargs="?", metavar="TASK", help="a task to send when the app opens")
    model_flags(p)
    guard_flags(p)
    engine_flags(p)
    again = p.add_mutually_exclusive_group()
    again.add_argument(
        "--resume", nargs="?", const="", metavar="ID", help="open a stored session (a picker without ID)"
    )
    again.add_argument("--continue", dest="cont", action="store_true", help="open this workspace's newest session")


def handle(args: argparse.Namespace) -> int:
    """The app: a new session here, one with TASK sent, or a stored one (`--resume [ID]`); with
    stdin or stdout not a terminal, a usage error (exit 2) that names `workbench run`."""
    if args.prompt is not None and not args.prompt.strip():
        raise UsageError("the task is empty: say what the agent should do, or leave it out")
    settings = settings_of(args)
    resume = resumed(settings, args)
    if not settings.workspace.is_dir():
        raise UsageError(f"workspace {settings.workspace} is not a folder")
    if settings.api_base and not settings.api_key:
        settings.api_key = "unused"  # a local OpenAI-compatible server needs no key, the SDK wants one
    if missing := not_terminals():  # the app would draw into a file and wait for keys that never come
        raise UsageError(
            f"the app needs a terminal, and {missing}; without one, run a task with `workbench run PROMPT`"
        )
    setup_logging(settings)
    from workbench.tui.run import run_app

    return run_app(settings, args.prompt, resume, pick=args.resume == "")


WEB_DRIVER = "textual.drivers.web_driver:WebDriver"  # what textual-serve runs a tab's app with (`workbench web`)


def not_terminals() -> str:
    """Which of stdin and stdout is not a terminal, in words ('' when both are, or when the app
    draws for a browser tab: textual-serve's pipes carry its frames and keys)."""
    if os.environ.get("TEXTUAL_DRIVER") == WEB_DRIVER:
        return ""
    names = [name for name in ("stdin", "stdout") if not _is_terminal(getattr(sys, name))]
    return f"{' and '.join(names)} {'is' if len(names) == 1 else 'are'} not one" if names else ""


def _is_terminal(stream: Any) -> bool:
    try:
        return stream is not None and bool(stream.isatty())
    except (OSError, ValueError):  # closed
        return False


APP = Command(
    name="",
    summary="the app",
    description="A terminal agent workbench: opens the app in this folder (with TASK, sent at once).",
    flags=flags,
    handle=handle,
)
