"""`workbench acp`: Workbench as an ACP agent on stdin/stdout, for editors (Zed, JetBrains,
Neovim), Toad and Harbor. It takes `workbench run`'s model and guard flags; each session's
workspace is the `cwd` the client sends."""

from __future__ import annotations

import argparse
import asyncio
import gc
from pathlib import Path

from workbench.cli.command import Command
from workbench.cli.flags import engine_flags, guard_flags, model_flags, settings_of
from workbench.config.log_file import setup_logging
from workbench.config.report import flag_help
from workbench.config.settings import Settings


def flags(p: argparse.ArgumentParser) -> None:
    model_flags(p)
    guard_flags(p)
    engine_flags(p)
    p.add_argument("--max-turns", type=int, help=flag_help("max_turns"))
    p.add_argument("--max-tokens", type=int, help=flag_help("max_tokens"))
    p.add_argument("--max-cost", type=float, help=flag_help("max_cost"))


def handle(args: argparse.Namespace) -> int:
    gc.disable()  # the SDK's schema: thousands of pydantic classes, few freed (as litellm's import, DECISIONS)
    from workbench.acp.server import serve, take_stdout

    gc.enable()

    protocol_out = take_stdout()  # first: nothing below may write to the protocol's stdout
    settings = settings_of(args)  # a bad flag or config file is said now, on stderr
    setup_logging(settings)

    def settings_for(cwd: Path) -> Settings:
        """The settings for a session in `cwd` (its project config applies); the client's cwd wins."""
        return settings_of(argparse.Namespace(**{**vars(args), "workspace": cwd}))

    asyncio.run(serve(settings_for, protocol_out, preload=settings.engine == "off"))
    return 0


COMMAND = Command(
    name="acp",
    summary="serve the Agent Client Protocol on stdin/stdout (for editors)",
    description=(
        "Run Workbench as an ACP agent (Agent Client Protocol, JSON-RPC on stdin/stdout) for editors "
        "such as Zed, and for Toad and Harbor. Each session works in the folder the client names (its cwd); "
        "the model, approval and budget flags are those of `workbench run`. stdout carries only the protocol: the log "
        "is the data folder's workbench.log, and anything else printed goes to stderr. With --engine auto|require "
        "each session runs in the engine, where `workbench attach ID` follows it and where it runs on when the "
        "editor goes away."
    ),
    flags=flags,
    handle=handle,
)
