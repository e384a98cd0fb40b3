"""subagent: start a child agent (sync, async or fork), list them, cancel one, message one.

The tool reaches the agent tree only through `ctx.agents` (a `SubagentHost`), so it imports
neither the loop nor the tree.
"""

from __future__ import annotations

import json
import time
from typing import Literal

from workbench.core.feedback import Feedback
from workbench.core.words import agent_status, spawn_mode, with_reason
from workbench.pb import workbench_pb2 as pb
from workbench.tools.registry import ToolContext, tool
from workbench.tools.seams import SpawnRequest, SubagentHost


@tool
async def subagent(
    ctx: ToolContext,
    action: Literal["create", "list", "cancel", "message"] = "create",
    prompt: str = "",
    mode: Literal["sync", "async", "fork"] = "async",
    name: str = "",
    tools: list[str] | None = None,
    model: str = "",
    timeout: float = 0,
    id: str = "",
    text: str = "",
) -> str | pb.ToolResult:
    """Delegate work to subagents: create one, list yours, cancel one, or message one.

    create starts a child agent on `prompt`. mode sync waits and returns its final answer;
    async (the default) returns its id at once and its result arrives later in your Inbox
    (end your turn without tool calls to wait for it); fork is async but the child starts
    from a copy of this conversation. A child's failure comes back with its cause.

    Args:
        action: create (the default), list, cancel or message
        prompt: create: the task, self-contained (an async or sync child does not see this conversation)
        mode: create: sync (wait for the answer), async (result in your Inbox) or fork (async, with
            a copy of this conversation)
        name: create: a short name shown in lists and the Inbox
        tools: create: the subset of your tools the child may use (default, or empty: all of yours);
            an MCP server's tools by a glob such as "github__*"
        model: create: another model for the child; leave empty (your own model) unless the task names one
        timeout: create: seconds the child may run before it is stopped (0: no limit)
        id: cancel, message: the subagent's id
        text: message: the text to put in that agent's Inbox; it reads it at its next turn
    """
    host: SubagentHost | None = ctx.agents
    if host is None:
        raise Feedback("subagents are not available here")
    if action == "create":
        if not prompt.strip() and text.strip():  # the task sent as message's `text` (seen with a 1.5B model)
            ready = f'subagent(action="create", mode={json.dumps(mode)}, prompt={json.dumps(text, ensure_ascii=False)})'
            raise Feedback(
                "prompt is required to create a subagent; you sent the task as text, which is for "
                f"action='message'. Send {ready if len(ready) <= 300 else 'the same call with the task as prompt'}"
            )
        return await _create(host, prompt, mode, name, tools, model, float(timeout))
    if action == "list":
        return _list(host)
    if not id:
        started = (
            " (you have no subagents: to start one on this prompt, call subagent with action='create')"
            if prompt.strip() and not host.children()
            else ""
        )
        raise Feedback(f"{action} needs the subagent's id; call subagent(action='list') to see them{started}")
    if action == "cancel":
        finished = await host.cancel(id)
        return f"Cancelled subagent {id}: it is {agent_status(finished.status)}."
    if not text:
        raise Feedback("message needs text: what to tell the agent")
    info = host.message(id, text)
    return f"Message put in the Inbox of {info.name} ({info.id}); it reads it at its next turn."


async def _create(
    host: SubagentHost, prompt: str, mode: str, name: str, tools: list[str] | None, model: str, timeout: float
) -> str | pb.ToolResult:
    info = host.create(SpawnRequest(prompt, mode, name, tools, model, timeout))
    who = f"subagent {info.name} ({info.id})"
    if mode != "sync":
        running, queued = host.running_children()
        state = (
            "running"
            if info.status == pb.AGENT_STATUS_RUNNING
            else "queued (you run as many subagents as allowed; it starts when one of them ends)"
        )
        started = pb.ToolResult(
            output=f"Started {who} in {mode} mode: {state}. Its result will arrive in your Inbox; keep working, "
            f"or end your turn without tool calls to wait for it. ({running} running, {queued} queued)"
        )
        started.metadata["pending"] = True  # the answer comes later (text_calls.closing_line)
        return started
    finished = await host.result(info.id)
    if finished.status == pb.AGENT_STATUS_COMPLETED:
        return finished.result or f"{who} completed without an answer."
    cause = finished.cause or "it ended without a result or a cause"
    return pb.ToolResult(
        output=f"The last text of {who}:\n{finished.result}" if finished.result else "",
        error=f"{who} {with_reason(agent_status(finished.status), cause)}",
        is_error=True,
    )


def _list(host: SubagentHost) -> str:
    children = host.children()
    if not children:
        return "You have started no subagents."
    now, top = time.monotonic(), min(c.info.depth for c in children)
    lines = ["id\tname\tmode\tstatus\telapsed\tlast activity"]
    for child in children:
        info = child.info
        indent = "  " * (info.depth - top)
        ago = now - child.activity_at
        lines.append(
            f"{indent}{info.id}\t{info.name}\t{spawn_mode(info.mode)}\t{agent_status(info.status)}\t"
            f"{child.elapsed:.1f}s\t{child.activity} ({ago:.0f}s ago)"
        )
    return "\n".join(lines)
