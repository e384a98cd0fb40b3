"""`workbench run` (headless) and the command line; `workbench` alone will open the TUI."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

from workbench import __version__
from workbench.config import ConfigError, Settings, load
from workbench.pb import workbench_pb2 as pb

EXIT_CODES = {
    pb.RUN_STATUS_FINISHED: 0,
    pb.RUN_STATUS_TERMINATED: 0,
    pb.RUN_STATUS_FAILED: 1,
    pb.RUN_STATUS_WAIT_TIMEOUT: 1,
    pb.RUN_STATUS_BUDGET_EXHAUSTED: 3,
    pb.RUN_STATUS_CANCELLED: 130,
}


class UsageError(Exception):
    """Bad usage: a one-line message and exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        raise UsageError(message)


def parser() -> argparse.ArgumentParser:
    top = _Parser(prog="workbench", description="A terminal agent workbench.")
    top.add_argument("--version", action="version", version=f"workbench {__version__}")
    sub = top.add_subparsers(dest="command", parser_class=_Parser)
    run = sub.add_parser("run", help="run one task headless and print the answer")
    run.add_argument("prompt", help="the task")
    run.add_argument("--model", help="litellm model string, or 'demo' (env WORKBENCH_MODEL)")
    run.add_argument("--api-base", help="API base URL (env WORKBENCH_API_BASE)")
    run.add_argument("--api-key", help="API key (env WORKBENCH_API_KEY or the provider's variable)")
    run.add_argument("--workspace", type=Path, help="the repository to work in (default: current folder)")
    run.add_argument("--max-turns", type=int, help="model calls of this agent (default 100)")
    run.add_argument("--max-tokens", type=int, help="token budget of the session")
    run.add_argument("--max-cost", type=float, help="cost budget of the session in USD")
    run.add_argument("--data-dir", type=Path, help="where sessions are stored (env WORKBENCH_DATA_DIR)")
    run.add_argument("--jsonl", action="store_true", help="print every event as one JSON line")
    return top


def check_model(settings: Settings) -> None:
    """Fail early, in one line, on an unknown model, a missing key or a cost budget without a price."""
    from workbench.model import ModelSpec, has_price, litellm

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


def _progress(event: pb.Event) -> None:
    """The plain headless printer: tool calls and problems on stderr, one line each."""
    kind = event.WhichOneof("kind")
    who = "" if event.agent_id == "main" else f"[{event.agent_id}] "
    if kind == "tool_call_started":
        call = event.tool_call_started.call
        print(f"{who}> {call.name} {call.arguments[:100]}", file=sys.stderr)
    elif kind == "tool_call_finished":
        result = event.tool_call_finished.result
        mark = f"x {result.error.splitlines()[0][:160]}" if result.is_error else "ok"
        print(f"{who}  {mark} ({result.duration:.2f} s)", file=sys.stderr)
    elif kind == "retry_wait":
        wait = event.retry_wait
        print(f"{who}retrying in {wait.seconds:.1f} s ({wait.reason})", file=sys.stderr)
    elif kind == "defect":
        print(f"{who}defect in {event.defect.where}: {event.defect.message}", file=sys.stderr)
    elif kind == "message" and event.message.role == pb.ROLE_ASSISTANT and event.message.text:
        if event.message.tool_calls:
            print(f"{who}{event.message.text}", file=sys.stderr)
    elif kind == "terminal_ready":
        print(f"watch the shell: {event.terminal_ready.attach_command}", file=sys.stderr)
    elif kind == "agent_spawned" and event.agent_spawned.agent.parent_id:
        agent = event.agent_spawned.agent
        mode = pb.SpawnMode.Name(agent.mode).removeprefix("SPAWN_MODE_").lower()
        print(f"{who}started subagent {agent.name} ({mode}): {agent.prompt[:100]}", file=sys.stderr)
    elif kind == "agent_finished" and event.agent_id != "main":
        done = event.agent_finished
        status = pb.AgentStatus.Name(done.status).removeprefix("AGENT_STATUS_").lower()
        print(f"{who}subagent {status}{': ' + done.cause if done.cause else ''}", file=sys.stderr)
    elif kind == "stream_discarded":
        print(f"{who}the model's reply broke off; asking again", file=sys.stderr)
    elif kind == "compaction":
        c = event.compaction
        print(f"{who}compacted the conversation: {c.messages_before} -> {c.messages_after} messages", file=sys.stderr)


def _setup_logging(settings: Settings) -> None:
    try:
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        handler = logging.FileHandler(settings.log_path, encoding="utf-8")
    except OSError as err:
        raise UsageError(
            f"cannot use the data folder {settings.data_dir}: {err.strerror or err}; "
            "choose another with --data-dir or WORKBENCH_DATA_DIR"
        ) from err
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    log = logging.getLogger("workbench")
    log.addHandler(handler)
    log.setLevel(logging.INFO)


def terminal_host(store: Any, session_id: str, settings: Settings | None = None) -> Any:
    """The session's private tmux server; it starts on the first bash or tmux call."""
    from workbench.store import Recorder
    from workbench.tools.terminal import TerminalHost

    return TerminalHost(
        f"workbench-{session_id}",
        Recorder(store, session_id, "main").emit,
        env_passthrough=tuple(settings.shell_env_passthrough) if settings is not None else (),
        data_dir=settings.data_dir if settings is not None else None,
        session_id=session_id,
    )


class _Ended:
    """Why the run was stopped from outside: the signal's exit status (or a closed stdout)."""

    code = 0


def _printer(print_line: Callable[[pb.Event], None], stop: Callable[[int], None]) -> Callable[[pb.Event], None]:
    """A subscriber that stops the run when its reader went away (stdout closed: `| head`)."""

    def deliver(event: pb.Event) -> None:
        try:
            print_line(event)
        except BrokenPipeError:
            stop(141)  # 128 + SIGPIPE, as a shell pipeline reports it

    return deliver


async def run_headless(settings: Settings, prompt: str, jsonl: bool, ended: _Ended) -> pb.RunFinished:
    from workbench.agents import AgentTree
    from workbench.store import Store, to_json

    task = asyncio.current_task()
    assert task is not None
    loop = asyncio.get_running_loop()

    def stop(code: int) -> None:
        if not ended.code:
            ended.code = code
            task.cancel()

    store = Store(settings.db_path)
    session_id = store.create_session(settings.workspace, settings.model, prompt)
    if jsonl:
        store.subscribe(_printer(lambda e: print(to_json(e), flush=True), stop), session_id)
    else:
        store.subscribe(_printer(_progress, stop), session_id)
    tree = AgentTree(settings, store, session_id, terminal=terminal_host(store, session_id, settings))
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop, 128 + signum)
    try:
        return await tree.run_root(prompt)
    except asyncio.CancelledError:
        return pb.RunFinished(status=pb.RUN_STATUS_CANCELLED, reason="cancelled")
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
        await tree.close()  # the session's tmux server ends with it, also on SIGTERM
        store.close()


def main(argv: list[str] | None = None) -> int:
    try:
        args = parser().parse_args(argv)
        if args.command is None:
            parser().print_help()
            print("\nThe TUI is not built yet; use `workbench run PROMPT`.", file=sys.stderr)
            return 0
        flags: dict[str, Any] = {
            "model": args.model,
            "api_base": args.api_base,
            "api_key": args.api_key,
            "workspace": args.workspace,
            "max_turns": args.max_turns,
            "max_tokens": args.max_tokens,
            "max_cost": args.max_cost,
            "data_dir": args.data_dir,
        }
        settings, notes = load(flags)
        for note in notes:
            print(f"workbench: {note}", file=sys.stderr)
        if not settings.workspace.is_dir():
            raise UsageError(f"workspace {settings.workspace} is not a folder")
        if settings.max_turns < 1:
            raise UsageError("--max-turns must be at least 1")
        from workbench.model import preload

        preload()  # litellm imports while the store opens
        check_model(settings)
        _setup_logging(settings)
    except (UsageError, ConfigError) as err:
        print(f"workbench: {err}", file=sys.stderr)
        return 2
    try:
        ended = _Ended()
        outcome = asyncio.run(run_headless(settings, args.prompt, args.jsonl, ended))
    except KeyboardInterrupt:
        return 130
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
    if not args.jsonl:
        if outcome.text and outcome.status != pb.RUN_STATUS_CANCELLED:
            print(outcome.text)
        if outcome.status not in (pb.RUN_STATUS_FINISHED, pb.RUN_STATUS_TERMINATED):
            print(
                f"workbench: {pb.RunStatus.Name(outcome.status)[11:].lower()}: {outcome.reason}",
                file=sys.stderr,
            )
    return ended.code or EXIT_CODES.get(outcome.status, 1)


if __name__ == "__main__":
    sys.exit(main())
