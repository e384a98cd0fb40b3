"""The flags several commands share, and the settings they make (flags over env over files)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from workbench.cli.command import UsageError
from workbench.config.choices import APPROVAL_MODES, ENGINE_MODES, FLAG_SETTINGS, SANDBOX_MODES
from workbench.config.load import load
from workbench.config.report import flag_help
from workbench.config.settings import Settings

SETTING_FLAGS = (*FLAG_SETTINGS, "engine")  # the flags whose dest is a setting's name


def data_dir_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data-dir", type=Path, help="where sessions are stored (env WORKBENCH_DATA_DIR)")


def where_flags(p: argparse.ArgumentParser) -> None:
    """The data folder and the sandbox: what every command that starts shells needs."""
    data_dir_flag(p)
    p.add_argument("--sandbox", choices=SANDBOX_MODES, help=flag_help("sandbox"))


def model_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", help="litellm model string, e.g. openai/gpt-4.1, or 'demo' (env WORKBENCH_MODEL)")
    p.add_argument("--api-base", help="API base URL (env WORKBENCH_API_BASE)")
    p.add_argument("--api-key", help="API key (env WORKBENCH_API_KEY or the provider's variable)")
    p.add_argument("--workspace", type=Path, help="the repository to work in (default: current folder)")
    where_flags(p)
    p.add_argument(
        "--allow-net",
        "--sandbox-network",
        dest="sandbox_network",
        action="store_const",
        const=True,
        default=None,
        help="let commands in the sandbox reach the network (setting sandbox_network)",
    )


def engine_flags(p: argparse.ArgumentParser) -> None:
    """Where the session runs: in the engine (setting engine) or in this process."""
    where = p.add_mutually_exclusive_group()
    where.add_argument("--engine", choices=ENGINE_MODES, help=flag_help("engine"))
    where.add_argument("--no-engine", dest="engine", action="store_const", const="off", help="run in this process")


def guard_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--approval", choices=APPROVAL_MODES, help=flag_help("approval"))
    p.add_argument("--guard-model", metavar="MODEL", help=flag_help("guard_model"))


def settings_of(args: argparse.Namespace) -> Settings:
    """The settings in force with these flags; the notes of loading them go to stderr."""
    flags: dict[str, Any] = {key: getattr(args, key, None) for key in SETTING_FLAGS}
    settings, notes = load(flags)
    for note in notes:
        print(f"workbench: {note}", file=sys.stderr)
    return settings


def resumed(settings: Settings, args: argparse.Namespace) -> str | None:
    """The stored session `--resume ID` or `--continue` names; it brings its workspace and model."""
    if not (args.resume or args.cont):
        return None  # before the catalog's import: it brings the engine (a new session's app opens without it)
    from workbench.session.catalog import session_to_resume
    from workbench.session.errors import SessionError

    try:
        return session_to_resume(settings, args.resume, args.cont, args.workspace is not None, args.model is not None)
    except SessionError as err:
        raise UsageError(str(err)) from err
