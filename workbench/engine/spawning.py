"""The rules of a spawn request: whether a parent may start this child (`check_spawn`), the child's
tools, its AgentInfo and the conversation it starts from (a fork's copy of its parent's, or the
note that tells a fresh child who started it). `AgentTree.spawn` applies them in this order."""

from __future__ import annotations

import time

from workbench.config.settings import Settings, bound
from workbench.core.feedback import Feedback
from workbench.engine.agent_node import Agent
from workbench.pb import workbench_pb2 as pb
from workbench.tools.registry import covered
from workbench.tools.seams import SpawnRequest

MODES = {"sync": pb.SPAWN_MODE_SYNC, "async": pb.SPAWN_MODE_ASYNC, "fork": pb.SPAWN_MODE_FORK}

CHILD_NOTE = """

You are a subagent ({name}, id {id}) started by agent {parent}. Work on the task you are
given; your final answer (a reply without tool calls) is what {parent} receives, so make it
complete and self-contained."""
FORK_NOTE = (
    "[You are a fork of the agent whose conversation is above (subagent {name}, id {id}). "
    "Your final answer goes back to that agent.]\n\n{prompt}"
)


def check_spawn(settings: Settings, parent: Agent, request: SpawnRequest, started: int) -> None:
    """Feedback when `parent` may not start this child: a bad mode, prompt or timeout, or a limit
    (`started`: the subagents of the session so far)."""
    if parent.ending:
        raise Feedback(f"agent {parent.id} is ending; it cannot start subagents")
    if request.mode not in MODES:
        raise Feedback(f"mode must be one of {', '.join(MODES)}, got {request.mode!r}")
    if not request.prompt.strip():
        raise Feedback("prompt is required to create a subagent: the task it should do, self-contained")
    if request.timeout < 0:
        raise Feedback(f"timeout is in seconds and must be 0 (none) or more, got {request.timeout:g}")
    if parent.info.depth + 1 > bound(settings.max_depth):
        raise Feedback(
            f"depth limit reached: agent {parent.id} is at depth {parent.info.depth} and subagents "
            f"nest at most {settings.max_depth} deep (setting max_depth); do this task yourself"
        )
    if started >= bound(settings.max_total_children):
        raise Feedback(
            f"total subagent limit reached: this run has started {started} of at most "
            f"{settings.max_total_children} subagents (setting max_total_children); do the rest yourself "
            "or wait for running subagents and reuse their results"
        )


def child_tools(settings: Settings, parent: Agent, request: SpawnRequest) -> list[str]:
    """The child's tools: those asked for (each one of the parent's), or all of the parent's."""
    allowed = list(parent.info.tools)
    if request.tools:  # None or []: all of the parent's (a small model sends [] for "the default")
        unknown = [t for t in request.tools if not covered(t, allowed)]
        if unknown:
            raise Feedback(
                f"unknown tool(s) in tools: {', '.join(unknown)}; a subagent may use these tools of "
                f"its parent: {', '.join(allowed) or '(none)'}"
            )
        allowed = list(dict.fromkeys(request.tools))
    if parent.info.depth + 1 >= bound(settings.max_depth) and "subagent" in allowed:
        allowed.remove("subagent")  # it could only fail at the depth limit
    return allowed


def child_info(parent: Agent, request: SpawnRequest, allowed: list[str], child_id: str) -> pb.AgentInfo:
    """The new child's AgentInfo (QUEUED)."""
    info = pb.AgentInfo(
        id=child_id,
        parent_id=parent.id,
        name=request.name.strip() or name_from(request.prompt),
        mode=MODES[request.mode],
        status=pb.AGENT_STATUS_QUEUED,
        model=request.model or parent.info.model,
        prompt=request.prompt,
        depth=parent.info.depth + 1,
        tools=allowed,
        timeout=request.timeout,
    )
    info.created.FromNanoseconds(time.time_ns())  # not GetCurrentTime(): a datetime round trip
    return info


def name_from(prompt: str) -> str:
    """A child's name when its request gives none: the first words of its prompt."""
    words = prompt.split()[:4]
    name = " ".join(words)
    return name[:32] or "subagent"


def fork_history(messages: list[pb.Message]) -> list[pb.Message]:
    """A copy of a conversation that stays valid: the turn still waiting for results is left out."""
    copied = [pb.Message() for _ in messages]
    for new, old in zip(copied, messages, strict=True):
        new.CopyFrom(old)
    answered = {m.tool_result.call_id for m in copied if m.role == pb.ROLE_TOOL}
    for i in range(len(copied) - 1, -1, -1):
        m = copied[i]
        if m.role == pb.ROLE_ASSISTANT and m.tool_calls:
            if any(c.id not in answered for c in m.tool_calls):
                return copied[:i]
            break
    return copied
