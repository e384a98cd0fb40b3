"""The command line: parse flags, open a Session, print. No engine wiring lives here.

`workbench run PROMPT` runs headless; `workbench sessions` lists (and prunes) stored sessions;
`workbench export ID` writes a transcript; `workbench` alone will open the TUI.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sqlite3
import sys
from pathlib import Path
from typing import Any, NoReturn

from workbench import __version__
from workbench.config.report import flag_help
from workbench.config.settings import APPROVAL_MODES, SANDBOX_MODES, ConfigError, Settings, load
from workbench.core.words import run_status
from workbench.pb import workbench_pb2 as pb

EXIT_CODES = {
    pb.RUN_STATUS_FINISHED: 0,
    pb.RUN_STATUS_TERMINATED: 0,
    pb.RUN_STATUS_FAILED: 1,
    pb.RUN_STATUS_WAIT_TIMEOUT: 1,
    pb.RUN_STATUS_INTERRUPTED: 1,
    pb.RUN_STATUS_BUDGET_EXHAUSTED: 3,
    pb.RUN_STATUS_STOPPED: 4,  # an agent kept repeating a call and no person could be asked
    pb.RUN_STATUS_CANCELLED: 130,
}
COMMANDS = ("run", "sessions", "export", "config", "doctor")
NO_MODEL = (
    "no model configured: give --model PROVIDER/MODEL (e.g. openai/gpt-4.1), set WORKBENCH_MODEL, "
    'or put model = "..." in ~/.config/workbench/config.toml. To try the offline scripted demo: '
    'workbench run --model demo --workspace "$(mktemp -d)" "fix the login check in auth.go"'
)


class UsageError(Exception):
    """Bad usage: a one-line message and exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        raise UsageError(message)


def _data_dir_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data-dir", type=Path, help="where sessions are stored (env WORKBENCH_DATA_DIR)")


def _where_flags(p: argparse.ArgumentParser) -> None:
    """The data folder and the sandbox: what every command that starts shells needs."""
    _data_dir_flag(p)
    p.add_argument("--sandbox", choices=SANDBOX_MODES, help=flag_help("sandbox"))


def _model_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", help="litellm model string, e.g. openai/gpt-4.1, or 'demo' (env WORKBENCH_MODEL)")
    p.add_argument("--api-base", help="API base URL (env WORKBENCH_API_BASE)")
    p.add_argument("--api-key", help="API key (env WORKBENCH_API_KEY or the provider's variable)")
    p.add_argument("--workspace", type=Path, help="the repository to work in (default: current folder)")
    _where_flags(p)
    p.add_argument(
        "--allow-net",
        "--sandbox-network",
        dest="sandbox_network",
        action="store_const",
        const=True,
        default=None,
        help="let commands in the sandbox reach the network (setting sandbox_network)",
    )


def _guard_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--approval", choices=APPROVAL_MODES, help=flag_help("approval"))
    p.add_argument("--guard-model", metavar="MODEL", help=flag_help("guard_model"))


def run_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="workbench run", description="Run one task headless and print the answer.")
    p.add_argument("prompt", help="the task")
    _model_flags(p)
    _guard_flags(p)
    p.add_argument("--max-turns", type=int, help=flag_help("max_turns"))
    p.add_argument("--max-tokens", type=int, help=flag_help("max_tokens"))
    p.add_argument("--max-cost", type=float, help=flag_help("max_cost"))
    p.add_argument("--jsonl", action="store_true", help="print every event as one JSON line")
    again = p.add_mutually_exclusive_group()
    again.add_argument("--resume", metavar="ID", help="continue session ID with this prompt")
    again.add_argument("--continue", dest="cont", action="store_true", help="continue this workspace's newest session")
    return p


def sessions_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="workbench sessions", description="List stored sessions, newest first.")
    _data_dir_flag(p)
    p.add_argument("--json", action="store_true", help="one JSON array (protobuf JSON names)")
    p.add_argument("--prune", action="store_true", help="delete sessions older than --older-than")
    p.add_argument("--older-than", metavar="AGE", help="with --prune: 30d, 12h, 90m, 2w")
    return p


def export_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="workbench export", description="Write a session's transcript to stdout.")
    p.add_argument("id", help="the session (an id or a unique prefix; `workbench sessions` lists them)")
    p.add_argument("--format", choices=("md", "jsonl"), default="md", help="Markdown (default) or every event")
    _data_dir_flag(p)
    return p


def doctor_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="workbench doctor",
        description="Check tmux, bubblewrap and the sandbox here; end what killed sessions left running.",
    )
    _where_flags(p)
    return p


def config_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="workbench config", description="Print the settings in force and where each came from.")
    p.add_argument("--workspace", type=Path, help="the repository whose .workbench/config.toml counts")
    return p


def top_parser() -> argparse.ArgumentParser:
    """`workbench [TASK]`: the TUI; the commands have parsers of their own."""
    p = _Parser(
        prog="workbench",
        description="A terminal agent workbench: opens the app in this folder (with TASK, sent at once).",
        epilog="commands: run (headless), sessions, export, config, doctor; `workbench COMMAND --help` for each",
    )
    p.add_argument("--version", action="version", version=f"workbench {__version__}")
    p.add_argument("prompt", nargs="?", metavar="TASK", help="a task to send when the app opens")
    _model_flags(p)
    _guard_flags(p)
    again = p.add_mutually_exclusive_group()
    again.add_argument(
        "--resume", nargs="?", const="", metavar="ID", help="open a stored session (a picker without ID)"
    )
    again.add_argument("--continue", dest="cont", action="store_true", help="open this workspace's newest session")
    return p


def parsers() -> list[argparse.ArgumentParser]:
    """Every parser of the command line (docs/CONFIG.md names the flag of each setting from them)."""
    return [top_parser(), run_parser(), sessions_parser(), export_parser(), config_parser(), doctor_parser()]


def check_model(settings: Settings) -> None:
    """Fail early, in one line, on no model, an unknown model, a missing key or a cost budget without a price."""
    if not settings.model:
        raise UsageError(NO_MODEL)
    from workbench.model.gateway import ModelSpec, has_price, litellm

    lm = litellm()
    if settings.max_cost and not has_price(ModelSpec(settings.model).wire_model):
        raise UsageError(
            f"--max-cost needs the model's price and litellm has none for {settings.model!r}; use --max-tokens instead"
        )
    if settings.model == "demo":
        return
    try:
        lm.get_llm_provider(settings.model, api_base=settings.api_base or None)
    except Exception as err:
        raise UsageError(
            f"unknown model {settings.model!r}: give provider/model, e.g. openai/gpt-4.1 ({str(err).splitlines()[0]})"
        ) from err
    if settings.api_key:
        return
    if settings.api_base:
        settings.api_key = "unused"  # a local OpenAI-compatible server needs no key, the SDK wants one
        return
    env = lm.validate_environment(model=settings.model)
    missing = env.get("missing_keys") or []
    if missing:
        raise UsageError(
            f"no API key for {settings.model}: set {' or '.join(missing)} (or WORKBENCH_API_KEY, or --api-key)"
        )


def check_demo_workspace(settings: Settings) -> None:
    """The demo plays one scripted scenario: never in a folder that holds anything but its own file."""
    if settings.model != "demo":
        return
    others = sorted(p.name for p in settings.workspace.iterdir() if p.name not in ("auth.go", ".workbench"))
    if others:
        raise UsageError(
            f"the demo model is a script that writes auth.go; {settings.workspace} holds other files "
            f"({', '.join(others[:3])}{', ...' if len(others) > 3 else ''}). Run it in an empty folder: "
            '--workspace "$(mktemp -d)"'
        )


class _Redact(logging.Filter):
    def __init__(self, secrets: list[str]):
        super().__init__()
        self.secrets = secrets

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        if any(s in text for s in self.secrets):
            for s in self.secrets:
                text = text.replace(s, "[redacted]")
            record.msg, record.args = text, None
        return True


def setup_logging(settings: Settings) -> None:
    from workbench.config.secrets import secrets_of

    try:
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        handler = logging.FileHandler(settings.log_path, encoding="utf-8")
    except OSError as err:
        raise UsageError(
            f"cannot use the data folder {settings.data_dir}: {err.strerror or err}; "
            "choose another with --data-dir or WORKBENCH_DATA_DIR"
        ) from err
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(_Redact(secrets_of(settings)))
    logging.raiseExceptions = False  # a log file on a full disk must not print its own tracebacks
    log = logging.getLogger("workbench")
    log.addHandler(handler)
    log.setLevel(logging.INFO)


def _settings(args: argparse.Namespace) -> Settings:
    flags: dict[str, Any] = {
        key: getattr(args, key, None)
        for key in (
            "model",
            "api_base",
            "api_key",
            "workspace",
            "max_turns",
            "max_tokens",
            "max_cost",
            "data_dir",
            "sandbox",
            "sandbox_network",
            "approval",
            "guard_model",
        )
    }
    settings, notes = load(flags)
    for note in notes:
        print(f"workbench: {note}", file=sys.stderr)
    return settings


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] in COMMANDS:
            command, rest = argv[0], argv[1:]
            if command == "run":
                return _run(run_parser().parse_args(rest))
            from workbench.cli import sessions as cli_sessions

            if command == "sessions":
                return _sessions(sessions_parser().parse_args(rest), cli_sessions)
            if command == "config":
                return _config(config_parser().parse_args(rest))
            if command == "doctor":
                from workbench.session import doctor

                return doctor.main(_settings(doctor_parser().parse_args(rest)))
            return _export(export_parser().parse_args(rest), cli_sessions)
        return _tui(top_parser().parse_args(argv))
    except (UsageError, ConfigError) as err:
        print(f"workbench: {err}", file=sys.stderr)
        return 2


def _config(args: argparse.Namespace) -> int:
    from workbench.config.load import load_with_sources
    from workbench.config.report import render

    print(render(load_with_sources({"workspace": args.workspace})), end="")
    return 0


def _sessions(args: argparse.Namespace, cli_sessions: Any) -> int:
    from workbench.session.session import SessionError, list_sessions

    settings = _settings(args)
    try:
        if args.prune:
            if not args.older_than:
                raise UsageError("--prune needs --older-than AGE (e.g. 30d)")
            try:
                age = cli_sessions.parse_age(args.older_than)
            except ValueError as err:
                raise UsageError(str(err)) from err
            gone = cli_sessions.prune(settings, age)
            print(f"workbench: deleted {len(gone)} session(s) older than {args.older_than}", file=sys.stderr)
            from workbench.session.upkeep import prune_checkpoints

            print(f"workbench: {prune_checkpoints(settings)}", file=sys.stderr)
            return 0
        if args.older_than:
            raise UsageError("--older-than goes with --prune")
        found = list_sessions(settings)
    except SessionError as err:
        print(f"workbench: {err}", file=sys.stderr)
        return 1
    if args.json:
        print(cli_sessions.sessions_json(found))
    elif not found:
        print(f"workbench: no sessions in {settings.data_dir} yet", file=sys.stderr)
    else:
        for line in cli_sessions.sessions_table(found):
            print(line)
    return 0


def _export(args: argparse.Namespace, cli_sessions: Any) -> int:
    from workbench.session.session import SessionError

    settings = _settings(args)
    try:
        for chunk in cli_sessions.export(settings, args.id, args.format):
            print(chunk)
    except SessionError as err:
        print(f"workbench: {err}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    return 0


def _resumed(settings: Settings, args: argparse.Namespace) -> str | None:
    """The stored session `--resume ID` or `--continue` names; it brings its workspace and model."""
    from workbench.session.session import SessionError, find_session, newest_session

    if not (args.resume or args.cont):
        return None
    try:
        info = find_session(settings, args.resume) if args.resume else newest_session(settings, settings.workspace)
    except SessionError as err:
        raise UsageError(str(err)) from err
    if args.workspace is None:
        settings.workspace = Path(info.workspace)
    if args.model is None:
        settings.model = info.model
    return info.id


def _tui(args: argparse.Namespace) -> int:
    """The app: a new session here, one with TASK sent, or a stored one (`--resume [ID]`)."""
    if args.prompt is not None and not args.prompt.strip():
        raise UsageError("the task is empty: say what the agent should do, or leave it out")
    settings = _settings(args)
    resume = _resumed(settings, args)
    if not settings.workspace.is_dir():
        raise UsageError(f"workspace {settings.workspace} is not a folder")
    if settings.api_base and not settings.api_key:
        settings.api_key = "unused"  # a local OpenAI-compatible server needs no key, the SDK wants one
    setup_logging(settings)
    from workbench.tui.app import run_app

    return run_app(settings, args.prompt, resume, pick=args.resume == "")


def _run(args: argparse.Namespace) -> int:
    if not args.prompt.strip():
        raise UsageError("the prompt is empty: say what the agent should do")
    settings = _settings(args)
    resume = _resumed(settings, args)
    if not settings.workspace.is_dir():
        raise UsageError(f"workspace {settings.workspace} is not a folder")
    if resume is None:
        check_demo_workspace(settings)
    from workbench.model.gateway import preload

    preload()  # litellm imports while the store opens
    setup_logging(settings)  # a data folder that cannot be used is said at once, not after the import
    check_model(settings)
    return _run_session(settings, args, resume)


def _run_session(settings: Settings, args: argparse.Namespace, resume: str | None) -> int:
    from workbench.cli.run import Ended, Progress, run_headless
    from workbench.session.session import SessionError

    ended, progress = Ended(), Progress()
    try:
        outcome, session = asyncio.run(
            run_headless(settings, args.prompt, jsonl=args.jsonl, resume=resume, ended=ended, progress=progress)
        )
    except KeyboardInterrupt:
        return 130
    except SessionError as err:
        print(f"workbench: {err}", file=sys.stderr)
        return 2
    except (sqlite3.Error, OSError) as err:  # the data folder: disk full, removed, read-only
        logging.getLogger("workbench").exception("cannot write the event log")
        print(
            f"workbench: cannot write the event log in {settings.data_dir}: {err}; what was committed before "
            "is kept there. Free some space or choose another --data-dir.",
            file=sys.stderr,
        )
        return 1
    except Exception as err:  # a bug: one line here, the traceback in the log file
        logging.getLogger("workbench").exception("internal error")
        print(
            f"workbench: internal error: {type(err).__name__}: {err} (traceback in {settings.log_path})",
            file=sys.stderr,
        )
        return 1
    if ended.code == 141:  # stdout is gone: say nothing more there (nor at interpreter exit)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    if session.failure is not None:
        print(f"workbench: {session.failure_text()}", file=sys.stderr)
        return 1
    answered = outcome.status in (pb.RUN_STATUS_FINISHED, pb.RUN_STATUS_TERMINATED)
    if not args.jsonl and answered and outcome.text:
        print(outcome.text)
    if outcome.status == pb.RUN_STATUS_CANCELLED:
        how = {130: "Ctrl-C", 143: "SIGTERM"}.get(ended.code, "a cancel")
        cut = "; interrupted: " + ", ".join(progress.interrupted) if progress.interrupted else ""
        print(f"workbench: cancelled by {how} after {ended.at:.1f} s{cut}", file=sys.stderr)
    elif outcome.status == pb.RUN_STATUS_STOPPED:
        print(f"workbench: {outcome.reason}", file=sys.stderr)  # "stopped: agent main repeated ..."
    elif not answered:
        note = " (its last message, not an answer, is in the transcript)" if outcome.text else ""
        print(f"workbench: {run_status(outcome.status)}: {outcome.reason}{note}", file=sys.stderr)
    print(
        f"workbench: session {session.id}; continue it with `workbench run --resume {session.id} PROMPT`, "
        f"read it with `workbench export {session.id}`",
        file=sys.stderr,
    )
    return ended.code or EXIT_CODES.get(outcome.status, 1)


if __name__ == "__main__":  # `python -m workbench.cli.main` ends as the console script does
    from workbench.cli.launch import entry

    entry()
