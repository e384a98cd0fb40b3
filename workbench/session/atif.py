"""A stored session as an ATIF trajectory (Harbor's Agent Trajectory Interchange Format, ATIF-v1.8).

One trajectory per agent: the root's steps, each subagent's as an embedded trajectory in its parent's
`subagent_trajectories` (a subagent's subagents inside its own), referenced (by `trajectory_id`, the
agent's id) from the observation of the parent's `subagent` call that started it. A step is one message
the agent read or wrote:

- the system prompt (RunStarted) and what Workbench or the Inbox wrote: source "system";
- the person's prompt, or the parent's task for a subagent: source "user";
- each model reply: source "agent", its text, its tool calls (arguments as the JSON object sent), its
  call's tokens and cost as `metrics`; the results of its calls as its `observation`, each the text
  the model read (an error is `Error: <cause>`, as the model saw it);
- a reply cut off by an interrupt: an agent step with what had streamed, `extra.partial`;
- a compaction or a run that did not finish: a system step saying so.

`final_metrics` sums the trajectory's own steps; `total_cost_usd` adds its subagents' (ATIF's rule).
Pure data: Harbor is not imported (tests validate the output with Harbor's own validator).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from workbench import __version__
from workbench.core.feedback import model_text
from workbench.core.words import agent_ended, author, run_status, with_reason
from workbench.pb import workbench_pb2 as pb

SCHEMA_VERSION = "ATIF-v1.8"
AGENT_NAME = "workbench"


def trajectory(info: pb.SessionInfo, agents: list[pb.AgentInfo], events: list[pb.Event]) -> dict[str, Any]:
    """The session as one ATIF trajectory (a JSON-ready dict), subagents embedded."""
    by_agent: dict[str, list[pb.Event]] = {}
    for event in events:
        by_agent.setdefault(event.agent_id, []).append(event)
    known = {a.id: a for a in agents}
    for agent_id in by_agent:  # an agent with events but no row (a store cut short) still counts
        known.setdefault(agent_id, pb.AgentInfo(id=agent_id, name=agent_id))
    roots = [a for a in known.values() if not a.parent_id] or list(known.values())[:1]
    if not roots:
        raise ValueError(f"session {info.id} has no agents")
    root = roots[0]
    spawned_by = _spawning_calls(events)
    built: dict[str, _Built] = {}
    # children before parents: a parent's total cost includes its subagents'
    for agent in sorted(known.values(), key=lambda a: -a.depth):
        built[agent.id] = _agent_trajectory(info, agent, by_agent.get(agent.id, []), spawned_by, built)
    top = built[root.id]
    doc = top.doc
    doc["session_id"] = info.id
    doc["extra"] = {**doc.get("extra", {}), "workspace": info.workspace, "status": run_status(info.status)}
    # each subagent inside its parent's trajectory, where ATIF resolves the parent's reference to it
    for agent in sorted(known.values(), key=lambda a: a.created.ToNanoseconds()):
        if agent.id != root.id:
            parent = built.get(agent.parent_id, top).doc
            parent.setdefault("subagent_trajectories", []).append(built[agent.id].doc)
    return doc


@dataclass
class _Built:
    doc: dict[str, Any]
    cost: float | None  # own plus descendants'; None when no call was priced


@dataclass
class _Steps:
    agent: pb.AgentInfo
    steps: list[dict[str, Any]] = field(default_factory=list)
    calls: dict[str, dict[str, Any]] = field(default_factory=dict)  # call id -> the agent step that made it
    streamed: list[str] = field(default_factory=list)

    def add(self, event: pb.Event, source: str, message: str, **more: Any) -> dict[str, Any]:
        step: dict[str, Any] = {"step_id": len(self.steps) + 1, "source": source, "message": message}
        if event.HasField("time"):
            step["timestamp"] = event.time.ToJsonString()
        step.update({k: v for k, v in more.items() if v is not None})
        self.steps.append(step)
        return step

    def flush_partial(self, event: pb.Event) -> None:
        if self.streamed:
            self.add(event, "agent", "".join(self.streamed), extra={"partial": True})
            self.streamed.clear()


def _agent_trajectory(
    info: pb.SessionInfo,
    agent: pb.AgentInfo,
    events: list[pb.Event],
    spawned_by: dict[str, list[str]],
    built: dict[str, _Built],
) -> _Built:
    s = _Steps(agent)
    for event in events:
        kind = event.WhichOneof("kind")
        if kind == "text_delta":
            s.streamed.append(event.text_delta.text)
        elif kind == "stream_discarded":
            s.streamed.clear()  # asked again: the broken reply was never the answer
        elif kind == "message":
            _message(s, event, spawned_by)
        elif kind == "run_started" and event.run_started.system_prompt:
            s.add(event, "system", event.run_started.system_prompt, extra={"kind": "system_prompt"})
        elif kind == "compaction":
            c = event.compaction
            text = f"compacted: {c.messages_before} -> {c.messages_after} messages ({c.reason or 'context'})"
            s.flush_partial(event)
            s.add(event, "system", text, extra={"kind": "compaction"})
        elif kind == "run_finished":
            s.flush_partial(event)
            r = event.run_finished
            if r.status != pb.RUN_STATUS_FINISHED:
                s.add(event, "system", f"run {with_reason(run_status(r.status), r.reason)}", extra={"kind": "run_end"})
        elif kind == "agent_finished":
            s.flush_partial(event)
            f = event.agent_finished
            if agent.parent_id and f.status != pb.AGENT_STATUS_COMPLETED:
                s.add(event, "system", with_reason(agent_ended(f.status), f.cause), extra={"kind": "agent_end"})
    if events:
        s.flush_partial(events[-1])
    if not s.steps:  # ATIF wants at least one step: the task the agent was given
        s.steps.append({"step_id": 1, "source": "user", "message": agent.prompt or "(no messages)"})
    return _finish(info, agent, s, built)


def _message(s: _Steps, event: pb.Event, spawned_by: dict[str, list[str]]) -> None:
    m = event.message
    if m.role == pb.ROLE_ASSISTANT:
        s.streamed.clear()
        step = s.add(event, "agent", m.text, model_name=m.model or None)
        if m.tool_calls:
            step["tool_calls"] = [_tool_call(c) for c in m.tool_calls]
            for c in m.tool_calls:
                s.calls[c.id] = step
        if m.HasField("usage"):
            step["metrics"] = _metrics(m.usage)
            if m.usage.calls:
                step["llm_call_count"] = int(m.usage.calls)
        return
    s.flush_partial(event)
    if m.role == pb.ROLE_TOOL:
        _observe(s, event, spawned_by)
    elif m.role == pb.ROLE_USER:
        who = author(m.author) if m.author else "person"
        source = "system" if m.author in (pb.AUTHOR_INBOX, pb.AUTHOR_WORKBENCH) else "user"
        s.add(event, source, m.text, extra={"author": who})
    elif m.role == pb.ROLE_SYSTEM:
        s.add(event, "system", m.text)


def _observe(s: _Steps, event: pb.Event, spawned_by: dict[str, list[str]]) -> None:
    r = event.message.tool_result
    result: dict[str, Any] = {"source_call_id": r.call_id, "content": model_text(r)}
    extra: dict[str, Any] = {"tool": r.name, "is_error": r.is_error, "duration_s": round(r.duration, 3)}
    if r.media:
        extra["media"] = [m.mime_type for m in r.media]
    result["extra"] = extra
    children = spawned_by.get(r.call_id, [])
    if children:
        result["subagent_trajectory_ref"] = [{"trajectory_id": c, "session_id": event.session_id} for c in children]
    step = s.calls.get(r.call_id)
    if step is None:  # a result whose call is not in this trajectory (rewound away): its own step
        result.pop("source_call_id")
        step = s.add(event, "system", f"result of {r.name}", extra={"kind": "orphan_result"})
    step.setdefault("observation", {"results": []})["results"].append(result)


def _tool_call(call: pb.ToolCall) -> dict[str, Any]:
    try:
        arguments = json.loads(call.arguments) if call.arguments.strip() else {}
    except json.JSONDecodeError:
        arguments = None
    out: dict[str, Any] = {"tool_call_id": call.id, "function_name": call.name}
    if isinstance(arguments, dict):
        out["arguments"] = arguments
    else:  # not a JSON object: what the model sent, kept whole
        out["arguments"] = {}
        out["extra"] = {"raw_arguments": call.arguments}
    if call.from_text:
        out.setdefault("extra", {})["from_text"] = True
    return out


def _metrics(u: pb.Usage) -> dict[str, Any]:
    out: dict[str, Any] = {"prompt_tokens": int(u.input_tokens), "completion_tokens": int(u.output_tokens)}
    if u.cache_read_tokens:
        out["cached_tokens"] = int(u.cache_read_tokens)
    if u.HasField("cost"):
        out["cost_usd"] = u.cost
    return out


def _finish(info: pb.SessionInfo, agent: pb.AgentInfo, s: _Steps, built: dict[str, _Built]) -> _Built:
    metrics = [st["metrics"] for st in s.steps if "metrics" in st]
    priced = [m["cost_usd"] for m in metrics if "cost_usd" in m]
    cost: float | None = sum(priced) if priced else None
    for child in built.values():  # only this agent's descendants are counted
        if child.doc["extra"].get("parent_id") == agent.id and child.cost is not None:
            cost = (cost or 0.0) + child.cost
    final: dict[str, Any] = {
        "total_prompt_tokens": sum(m["prompt_tokens"] for m in metrics),
        "total_completion_tokens": sum(m["completion_tokens"] for m in metrics),
        "total_cached_tokens": sum(m.get("cached_tokens", 0) for m in metrics),
        "total_steps": len(s.steps),
    }
    if cost is not None:
        final["total_cost_usd"] = cost
    extra: dict[str, Any] = {"agent_id": agent.id, "agent_name": agent.name or agent.id}
    if agent.parent_id:
        extra["parent_id"] = agent.parent_id
    doc: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "trajectory_id": agent.id,
        "agent": {"name": AGENT_NAME, "version": __version__, "model_name": agent.model or info.model or None},
        "steps": s.steps,
        "final_metrics": final,
        "extra": extra,
    }
    if doc["agent"]["model_name"] is None:
        del doc["agent"]["model_name"]
    return _Built(doc, cost)


def _spawning_calls(events: list[pb.Event]) -> dict[str, list[str]]:
    """Which call started which subagents: the parent's `subagent` call open when the child was spawned."""
    open_calls: dict[str, list[str]] = {}  # agent id -> its subagent calls started and not finished
    out: dict[str, list[str]] = {}
    for event in events:
        kind = event.WhichOneof("kind")
        if kind == "tool_call_started" and event.tool_call_started.call.name == "subagent":
            open_calls.setdefault(event.agent_id, []).append(event.tool_call_started.call.id)
        elif kind == "tool_call_finished":
            calls = open_calls.get(event.agent_id, [])
            if event.tool_call_finished.result.call_id in calls:
                calls.remove(event.tool_call_finished.result.call_id)
        elif kind == "agent_spawned":
            child = event.agent_spawned.agent
            calls = open_calls.get(child.parent_id, [])
            if calls:
                out.setdefault(calls[-1], []).append(child.id)
    return out
