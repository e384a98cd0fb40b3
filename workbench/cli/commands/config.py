"""`workbench config`: the settings in force and where each came from."""

from __future__ import annotations

import argparse
from pathlib import Path

from workbench.cli.command import Command


def flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--workspace", type=Path, help="the repository whose .workbench/config.toml counts")


def handle(args: argparse.Namespace) -> int:
    from workbench.config.load import load_with_sources
    from workbench.config.report import render

    print(render(load_with_sources({"workspace": args.workspace})), end="")
    return 0


COMMAND = Command(
    name="config",
    summary="the settings in force and their sources",
    description="Print the settings in force and where each came from.",
    flags=flags,
    handle=handle,
)
