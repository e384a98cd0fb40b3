"""`workbench export ID`: a stored session's transcript on stdout, as Markdown, every event as JSONL, or an
ATIF trajectory (Harbor's Agent Trajectory Interchange Format, session/atif.py)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator

from workbench.cli.command import Command
from workbench.cli.commands.sessions import cost_text
from workbench.cli.flags import data_dir_flag, settings_of
from workbench.config.settings import Settings
from workbench.core.feedback import model_text
from workbench.core.words import agent_ended, agent_status, author, run_status, spawn_mode, with_reason
from workbench.pb import workbench_pb2 as pb

FORMATS = ("md", "jsonl", "atif")


def flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("id", help="the session (an id or a unique prefix; `workbench sessions` lists them)")
    p.add_argument(
        "--format",
        choices=FORMATS,
        default="md",
        help="Markdown (default), every event (jsonl), or an ATIF trajectory (atif: JSON, subagents embedded)",
    )
    data_dir_flag(p)


def handle(args: argparse.Namespace) -> int:
    from workbench.session.errors import SessionError

    settings = settings_of(args)
    try:
        for chunk in export(settings, args.id, args.format):
            print(chunk)
    except SessionError as err:
        print(f"workbench: {err}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    return 0


def export(settings: Settings, session_id: str, fmt: str) -> Iterator[str]:
    """The transcript of a session: every event as JSONL, an ATIF trajectory, or Markdown a person reads."""
    from workbench.session import catalog
    from workbench.session.errors import SessionError

    if fmt not in FORMATS:
        raise SessionError(f"--format is one of {', '.join(FORMATS)}, not {fmt!r}")
    stored = catalog.transcript(settings, session_id)
    if fmt == "jsonl":
        yield from (catalog.event_json(e) for e in stored.events)
        return
    if fmt == "atif":
        from workbench.session.atif import trajectory

        yield json.dumps(trajectory(stored.info, stored.agents, stored.events), indent=2, ensure_ascii=False)
        return
    yield from markdown(stored.info, stored.agents, stored.events)


def markdown(info: pb.SessionInfo, agents: list[pb.AgentInfo], events: list[pb.Event]) -> Iterator[str]:
    """The root agent first, then each subagent in the order it started; each message labelled by
    its author (the person, a parent agent, the Inbox, Workbench); a reply cut off by an interrupt
    is kept, marked as partial."""
    yield f"# {info.title or 'session ' + info.id}\n"
    yield f"session {info.id} · model {info.model} · workspace {info.workspace} · {run_status(info.status)}\n"
    yield from usage_table(info, agents)
    first: dict[str, int] = {}
    for event in events:
        first.setdefault(event.agent_id, event.seq)
    names = {a.id: a.name or a.id for a in agents}
    for agent in sorted(agents, key=lambda a: (bool(a.parent_id), first.get(a.id, 1 << 62))):
        if agent.parent_id:
            yield f"\n## subagent {agent.name} ({agent.id}, {spawn_mode(agent.mode)}, started by {agent.parent_id})\n"
        parent = names.get(agent.parent_id, agent.parent_id)
        yield from _agent_md([e for e in events if e.agent_id == agent.id], parent)


def usage_table(info: pb.SessionInfo, agents: list[pb.AgentInfo]) -> Iterator[str]:
    """Each agent's own calls, tokens and cost, and the session's total (— for an unpriced model)."""
    yield "\n| agent | status | calls | tokens in | tokens out | cost |\n|---|---|---|---|---|---|\n"
    for agent in agents:
        u = agent.usage
        yield (
            f"| {agent.name} ({agent.id}) | {agent_status(agent.status)} | {u.calls} | {u.input_tokens:,} | "
            f"{u.output_tokens:,} | {cost_text(u)} |\n"
        )
    t = info.usage
    yield f"| total | | {t.calls} | {t.input_tokens:,} | {t.output_tokens:,} | {cost_text(t)} |\n"


def _agent_md(events: list[pb.Event], parent: str) -> Iterator[str]:
    streamed: list[str] = []  # the reply being streamed: kept if no whole message follows it
    for event in events:
        kind = event.WhichOneof("kind")
        if kind == "text_delta":
            streamed.append(event.text_delta.text)
            continue
        if kind == "stream_discarded":
            streamed.clear()  # asked again: the broken reply was never the answer
            continue
        if kind == "message" and event.message.role == pb.ROLE_ASSISTANT:
            streamed.clear()
        elif kind in ("run_finished", "agent_finished", "message") and streamed:
            yield f"\n**Agent (interrupted, partial):** {''.join(streamed)}\n"
            streamed.clear()
        yield from _event_md(event, parent)
    if streamed:
        yield f"\n**Agent (interrupted, partial):** {''.join(streamed)}\n"


def _label(message: pb.Message, parent: str) -> str:
    if message.author == pb.AUTHOR_PARENT:
        return f"Task from {parent}" if parent else "Task"
    if message.author in (pb.AUTHOR_INBOX, pb.AUTHOR_WORKBENCH):
        return author(message.author)
    return "Person"


def _event_md(event: pb.Event, parent: str = "") -> Iterator[str]:
    kind = event.WhichOneof("kind")
    if kind == "message":
        m = event.message
        if m.role == pb.ROLE_USER:
            yield f"\n**{_label(m, parent)}:** {m.text}\n"
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
        yield f"\n_{with_reason(agent_ended(event.agent_finished.status), event.agent_finished.cause)}_\n"
    elif kind == "run_finished" and event.run_finished.reason:
        yield f"\n_run {with_reason(run_status(event.run_finished.status), event.run_finished.reason)}_\n"
    elif kind == "compaction":
        yield f"\n_compacted: {event.compaction.messages_before} -> {event.compaction.messages_after} messages_\n"
    elif kind == "checkpoint":
        yield from _checkpoint_md(event.checkpoint)
    elif kind == "rewind":
        r = event.rewind
        what = " and ".join(w for w, on in (("files", r.code), ("conversation", r.conversation)) if on)
        how = "undo: " if r.undo else ""
        yield f"\n_{how}{what} rewound to before turn {r.to_turn} ({len(r.files)} path(s) put back)_\n"


def _checkpoint_md(cp: pb.Checkpoint) -> Iterator[str]:
    """A checkpoint that kept changes, failed or skipped files (the unchanged ones say nothing)."""
    if cp.error:
        yield f"\n_checkpoint failed: {cp.error}_\n"
    elif cp.files_changed and not cp.unchanged:
        before = f" before `{cp.tool}`" if cp.tool else ""
        yield f"\n_checkpoint {cp.commit[:12]}{before}: {cp.files_changed} file(s) changed since the last one_\n"
    for line in cp.skipped:
        yield f"\n_checkpoint skipped {line}_\n"


COMMAND = Command(
    name="export",
    summary="write a session's transcript (Markdown, JSONL or an ATIF trajectory)",
    description="Write a session's transcript to stdout.",
    flags=flags,
    handle=handle,
)
