"""`workbench sessions`: the stored sessions, newest first (a table or JSON); `--prune` deletes old ones."""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

from google.protobuf import json_format

from workbench.cli.command import Command, UsageError
from workbench.cli.flags import data_dir_flag, settings_of
from workbench.core.safe_text import printable
from workbench.core.words import agent_status, run_status
from workbench.pb import workbench_pb2 as pb

DURATION = re.compile(r"^(\d+(?:\.\d+)?)([smhdw])$")
UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("id", nargs="?", help="a session (an id or a unique prefix): its agents and the total")
    data_dir_flag(p)
    p.add_argument("--json", action="store_true", help="one JSON array (protobuf JSON names)")
    p.add_argument("--prune", action="store_true", help="delete sessions older than --older-than")
    p.add_argument("--older-than", metavar="AGE", help="with --prune: 30d, 12h, 90m, 2w")


def handle(args: argparse.Namespace) -> int:
    from workbench.session import catalog
    from workbench.session.errors import SessionError

    settings = settings_of(args)
    try:
        if args.prune:
            if not args.older_than:
                raise UsageError("--prune needs --older-than AGE (e.g. 30d)")
            try:
                age = parse_age(args.older_than)
            except ValueError as err:
                raise UsageError(str(err)) from err
            gone = catalog.prune(settings, age)
            print(f"workbench: deleted {len(gone)} session(s) older than {args.older_than}", file=sys.stderr)
            from workbench.session.upkeep import prune_checkpoints

            print(f"workbench: {prune_checkpoints(settings)}", file=sys.stderr)
            return 0
        if args.older_than:
            raise UsageError("--older-than goes with --prune")
        if args.id:
            info, agents = catalog.agents_of(settings, args.id)
            for line in [agents_json(agents)] if args.json else agents_table(info, agents):
                print(line)
            return 0
        found = catalog.list_sessions(settings)
    except SessionError as err:
        print(f"workbench: {err}", file=sys.stderr)
        return 1
    if args.json:
        print(sessions_json(found))
    elif not found:
        print(f"workbench: no sessions in {settings.data_dir} yet", file=sys.stderr)
    else:
        states = engine_states(settings.data_dir) if any(info.live for info in found) else {}
        for line in sessions_table(found, states):
            print(line)
    return 0


def engine_states(data_dir: Path) -> dict[str, str]:
    """How each session the engine hosts stands ("running", "needs you", "idle"), by id; {} when
    no engine answers for this data folder."""
    import asyncio

    from workbench.service.client import EngineClient, EngineGone, EngineUnavailable, Refused
    from workbench.service.place import engine_place

    async def ask() -> dict[str, str]:
        client = await EngineClient.connect(engine_place(data_dir).socket, timeout=1.0)
        try:
            return {live.id: live.state for live in await client.sessions()}
        finally:
            await client.close()

    try:
        return asyncio.run(ask())
    except (EngineUnavailable, EngineGone, Refused, OSError):
        return {}


def parse_age(text: str) -> float:
    """'30d', '12h', '90m', '2w' -> seconds."""
    m = DURATION.match(text.strip())
    if m is None:
        raise ValueError(f"--older-than takes a number and a unit (s, m, h, d, w), like 30d; got {text!r}")
    return float(m.group(1)) * UNIT_SECONDS[m.group(2)]


def _tokens(usage: pb.Usage) -> int:
    return usage.input_tokens + usage.output_tokens


def sessions_table(found: Iterable[pb.SessionInfo], engine: dict[str, str] | None = None) -> Iterator[str]:
    """The `workbench sessions` lines: id, started, status, model, tokens, cost, title; a session
    the engine hosts has its state there (`engine`: running, needs you, idle)."""
    yield f"{'ID':<12}  {'STARTED':<16}  {'STATUS':<18}  {'MODEL':<24}  {'TOKENS':>8}  {'COST':>8}  TITLE"
    for info in found:
        started = time.strftime("%Y-%m-%d %H:%M", time.localtime(info.created.seconds))
        hosted = (engine or {}).get(info.id)
        status = f"{hosted} (engine)" if hosted else "open elsewhere" if info.live else run_status(info.status)
        cost = f"${info.usage.cost:.4f}" if info.usage.HasField("cost") else "-"
        yield printable(
            f"{info.id:<12}  {started:<16}  {status:<18}  {info.model[:24]:<24}  "
            f"{_tokens(info.usage):>8,}  {cost:>8}  {info.title or '(no prompt yet)'}"
        )


def cost_text(usage: pb.Usage) -> str:
    """USD, or — when a model of it has no price (unknown is not 0)."""
    return f"${usage.cost:.4f}" if usage.HasField("cost") else "—"


def agents_table(info: pb.SessionInfo, agents: list[pb.AgentInfo]) -> Iterator[str]:
    """`workbench sessions ID`: each agent's own calls, tokens and cost, subagents indented under
    their parent, then the session's total (every agent's calls, the model judge's too)."""
    yield f"{'AGENT':<36}  {'STATUS':<18}  {'CALLS':>5}  {'IN':>9}  {'OUT':>9}  {'COST':>10}"
    for agent in agents:
        name = "  " * agent.depth + (agent.id if agent.name == agent.id else f"{agent.name} ({agent.id})")
        u = agent.usage
        yield printable(
            f"{name[:36]:<36}  {agent_status(agent.status):<18}  {u.calls:>5}  {u.input_tokens:>9,}  "
            f"{u.output_tokens:>9,}  {cost_text(u):>10}"
        )
    t = info.usage
    yield f"{'total':<36}  {'':<18}  {t.calls:>5}  {t.input_tokens:>9,}  {t.output_tokens:>9,}  {cost_text(t):>10}"


def agents_json(agents: list[pb.AgentInfo]) -> str:
    return json.dumps(
        [json_format.MessageToDict(a, preserving_proto_field_name=True) for a in agents], ensure_ascii=False
    )


def sessions_json(found: Iterable[pb.SessionInfo]) -> str:
    return json.dumps(
        [json_format.MessageToDict(i, preserving_proto_field_name=True) for i in found], ensure_ascii=False
    )


COMMAND = Command(
    name="sessions",
    summary="list (or prune) stored sessions",
    description="List stored sessions, newest first; with an id, that session's agents with their tokens and cost.",
    flags=flags,
    handle=handle,
)
