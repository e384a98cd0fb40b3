"""`workbench sessions` (list, prune) and `workbench export` (a transcript as Markdown or JSONL)."""

from __future__ import annotations

import json
import re
import shutil
import time
from collections.abc import Iterable, Iterator

from google.protobuf import json_format

from workbench.config.settings import Settings
from workbench.core.feedback import model_text
from workbench.core.safe_text import printable
from workbench.core.words import agent_ended, run_status, spawn_mode
from workbench.engine.store import to_json
from workbench.pb import workbench_pb2 as pb
from workbench.session.session import SessionError, find_session, list_sessions, open_store

DURATION = re.compile(r"^(\d+(?:\.\d+)?)([smhdw])$")
UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_age(text: str) -> float:
    """'30d', '12h', '90m', '2w' -> seconds."""
    m = DURATION.match(text.strip())
    if m is None:
        raise ValueError(f"--older-than takes a number and a unit (s, m, h, d, w), like 30d; got {text!r}")
    return float(m.group(1)) * UNIT_SECONDS[m.group(2)]


def _tokens(usage: pb.Usage) -> int:
    return usage.input_tokens + usage.output_tokens


def sessions_table(found: Iterable[pb.SessionInfo]) -> Iterator[str]:
    """The `workbench sessions` lines: id, started, status, model, tokens, cost, title."""
    yield f"{'ID':<12}  {'STARTED':<16}  {'STATUS':<16}  {'MODEL':<24}  {'TOKENS':>8}  {'COST':>8}  TITLE"
    for info in found:
        started = time.strftime("%Y-%m-%d %H:%M", time.localtime(info.created.seconds))
        status = "open elsewhere" if info.live else run_status(info.status)
        cost = f"${info.usage.cost:.4f}" if info.usage.HasField("cost") else "-"
        yield printable(
            f"{info.id:<12}  {started:<16}  {status:<16}  {info.model[:24]:<24}  "
            f"{_tokens(info.usage):>8,}  {cost:>8}  {info.title or '(no prompt yet)'}"
        )


def sessions_json(found: Iterable[pb.SessionInfo]) -> str:
    return json.dumps(
        [json_format.MessageToDict(i, preserving_proto_field_name=True) for i in found], ensure_ascii=False
    )


def prune(settings: Settings, older_than: float) -> list[str]:
    """Delete the sessions last active more than `older_than` seconds ago (never one open elsewhere)."""
    cutoff = time.time() - older_than
    old = [s for s in list_sessions(settings) if s.updated.seconds < cutoff and not s.live]
    if not old:
        return []
    store = open_store(settings)
    try:
        for info in old:
            store.delete_session(info.id)
            shutil.rmtree(settings.sessions_dir / info.id, ignore_errors=True)
        store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        store.close()
    return [s.id for s in old]


def export(settings: Settings, session_id: str, fmt: str) -> Iterator[str]:
    """The transcript of a session: every event as JSONL, or Markdown a person reads."""
    info = find_session(settings, session_id)
    store = open_store(settings)
    try:
        events = list(store.events(info.id))
        agents = store.agents(info.id)
    finally:
        store.close()
    if fmt == "jsonl":
        yield from (to_json(e) for e in events)
        return
    if fmt != "md":
        raise SessionError(f"--format is md or jsonl, not {fmt!r}")
    yield from markdown(info, agents, events)


def markdown(info: pb.SessionInfo, agents: list[pb.AgentInfo], events: list[pb.Event]) -> Iterator[str]:
    yield f"# {info.title or 'session ' + info.id}\n"
    yield f"session {info.id} · model {info.model} · workspace {info.workspace} · {run_status(info.status)}\n"
    for agent in agents:
        mine = [e for e in events if e.agent_id == agent.id]
        if agent.parent_id:
            yield f"\n## subagent {agent.name} ({agent.id}, {spawn_mode(agent.mode)}, started by {agent.parent_id})\n"
        for event in mine:
            yield from _event_md(event)


def _event_md(event: pb.Event) -> Iterator[str]:
    kind = event.WhichOneof("kind")
    if kind == "message":
        m = event.message
        if m.role == pb.ROLE_USER:
            yield f"\n**Person:** {m.text}\n"
        elif m.role == pb.ROLE_ASSISTANT:
            if m.text:
                yield f"\n**Agent:** {m.text}\n"
            for call in m.tool_calls:
                yield f"\n`{call.name}` {call.arguments}\n"
        elif m.role == pb.ROLE_TOOL:
            r = m.tool_result
            mark = "failed" if r.is_error else "ok"
            summary = f"<summary>{r.name} {mark} ({r.duration:.2f} s)</summary>"
            yield f"\n<details>{summary}\n\n```\n{model_text(r)}\n```\n</details>\n"
    elif kind == "agent_finished" and event.agent_finished.cause:
        yield f"\n_{agent_ended(event.agent_finished.status)}: {event.agent_finished.cause}_\n"
    elif kind == "run_finished" and event.run_finished.reason:
        yield f"\n_run {run_status(event.run_finished.status)}: {event.run_finished.reason}_\n"
    elif kind == "compaction":
        yield f"\n_compacted: {event.compaction.messages_before} -> {event.compaction.messages_after} messages_\n"
