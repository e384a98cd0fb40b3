"""`workbench web [ID] [--host H] [--port P]`: the Workbench app in the browser (workbench/web/).

Each browser tab runs `workbench` with the flags given here, as its own process under Textual's
web driver. Safe by default: 127.0.0.1, a random token in the printed URL, the token never in a
log or a child's environment; any other address is said with --host and gets one line of warning.
"""

from __future__ import annotations

import argparse
import ipaddress
import logging
import secrets
import socket
import sys
from pathlib import Path

from workbench.cli.command import Command, UsageError
from workbench.cli.flags import engine_flags, guard_flags, model_flags, settings_of
from workbench.config.log_file import setup_logging
from workbench.config.settings import Settings

DEFAULT_PORT = 8000


def flags(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "session",
        nargs="?",
        metavar="ID",
        help="the session each tab opens (a new session in each tab without it)",
    )
    p.add_argument(
        "--host", default="127.0.0.1", help="the address to listen on (default 127.0.0.1: this machine only)"
    )
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"the port (default {DEFAULT_PORT}; 0: any free one)")
    model_flags(p)
    guard_flags(p)
    engine_flags(p)


def tab_argv(args: argparse.Namespace, session: str | None) -> list[str]:
    """The `workbench` line each tab runs: the TUI's flags as given here (paths made absolute).

    With ID, each tab attaches to that session in the engine (`--resume ID --engine require`, what
    `workbench attach ID` runs): the first tab opens it there if no engine holds it yet, and every
    tab is a client of the one live session, which goes on when a tab closes. With --no-engine, a
    tab opens it in its own process (a second tab is told it is open elsewhere)."""
    line = [sys.executable, "-m", "workbench.cli.main"]
    engine = args.engine
    if session is not None and engine != "off":
        engine = "require"
    for flag, value in (
        ("--model", args.model),
        ("--api-base", args.api_base),
        ("--workspace", args.workspace and args.workspace.resolve()),
        ("--data-dir", args.data_dir and args.data_dir.resolve()),
        ("--sandbox", args.sandbox),
        ("--approval", args.approval),
        ("--guard-model", args.guard_model),
        ("--engine", engine),
        ("--resume", session),
    ):
        if value is not None:
            line += [flag, str(value)]
    if args.sandbox_network:
        line.append("--allow-net")
    return line


def tab_env(args: argparse.Namespace) -> dict[str, str]:
    """What each tab's process gets beside this process's environment: --api-key, never on a command line."""
    return {"WORKBENCH_API_KEY": args.api_key} if args.api_key else {}


def listens_beyond_this_machine(listener: socket.socket) -> bool:
    address = listener.getsockname()[0]
    return not ipaddress.ip_address(address.split("%", 1)[0]).is_loopback


def url(listener: socket.socket, token: str) -> str:
    """The address to open: the bound one, or this machine's name for a wildcard address."""
    address, port = listener.getsockname()[:2]
    host = socket.gethostname() if ipaddress.ip_address(address.split("%", 1)[0]).is_unspecified else address
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}/?token={token}"


def handle(args: argparse.Namespace) -> int:
    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port {args.port} is not a port (0 to 65535)")
    settings = settings_of(args)  # a bad flag or config file is a usage error here, not in each tab
    if not settings.workspace.is_dir():
        raise UsageError(f"workspace {settings.workspace} is not a folder")
    session = _session(args, settings)
    setup_logging(settings)
    from workbench.web.server import PortBusy, WebServer, bind, serve

    try:
        listener = bind(args.host, args.port)
    except PortBusy as err:
        raise UsageError(str(err)) from None
    except OSError as err:
        raise UsageError(str(err)) from None
    token = secrets.token_urlsafe(24)
    port = listener.getsockname()[1]
    if listens_beyond_this_machine(listener):
        print(
            f"workbench: warning: listening on {args.host}, reachable from other machines, without TLS (the "
            "token crosses the network in clear): prefer the default 127.0.0.1 with SSH port forwarding "
            f"(ssh -L {port}:127.0.0.1:{port} HOST) or a reverse proxy with TLS",
            file=sys.stderr,
        )
    server = WebServer(
        tab_argv(args, session), token, port, env=tab_env(args), title=f"workbench {Path(settings.workspace).name}"
    )
    logging.getLogger("workbench.web").info("serving %s:%d to the browser (the token is not logged)", args.host, port)

    def ready() -> None:
        print(f"workbench web: open {url(listener, token)}", flush=True)
        print("workbench web: each tab runs its own app; Ctrl-C stops the server", file=sys.stderr, flush=True)

    serve(server, listener, ready)
    return 0


def _session(args: argparse.Namespace, settings: Settings) -> str | None:
    """The stored session ID names (a usage error when there is none such)."""
    if args.session is None:
        return None
    from workbench.cli.flags import resumed

    args.resume, args.cont = args.session, False
    return resumed(settings, args)


COMMAND = Command(
    name="web",
    summary="the app in the browser: each tab a Workbench app (127.0.0.1, a token in the URL)",
    description=(
        "Serves the Workbench app to the browser with textual-serve: open the printed URL (its token is "
        "needed; it is kept in a cookie). Listens on 127.0.0.1 unless --host says otherwise."
    ),
    flags=flags,
    handle=handle,
)
