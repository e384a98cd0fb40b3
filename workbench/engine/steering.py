"""The person's words for any agent of the tree (steering): they reach it at its next turn.

A note for a running, waiting, queued or reviewing agent is recorded as a `prompt_queued` event of
that agent and, once committed, queued in its loop: it becomes a user message written by the
person (AUTHOR_PERSON) before its next model call, and wakes it when it waits on its children.
Nothing is cancelled: its children and its siblings go on. A finished agent cannot be steered:
the error says so and how to run its task again.
"""

from __future__ import annotations

from workbench.core.words import ROOT_ID, agent_ended
from workbench.engine.agent_node import Agent
from workbench.engine.agents import AgentTree
from workbench.pb import workbench_pb2 as pb

QUOTED_TASK = 200  # characters of a finished agent's task quoted in the error


class NotSteerable(Exception):
    """The note cannot reach that agent: one line a person can act on."""


def steer(tree: AgentTree, agent_id: str, text: str) -> pb.AgentInfo:
    """Queue `text` for `agent_id`'s next turn; returns the agent's info."""
    agent = tree.nodes.get(agent_id)
    if agent is None:
        known = ", ".join(tree.nodes) or "none yet"
        raise NotSteerable(f"no agent {agent_id!r} in this session (agents: {known})")
    if agent.loop is None or agent.done.done() or agent.ending:
        raise NotSteerable(finished(agent))
    with tree.store.transaction():
        agent.recorder.emit(pb.PromptQueued(text=text))
        tree.store.on_commit(lambda: _deliver(agent, text))
    return agent.info


def finished(agent: Agent) -> str:
    """Why a note cannot reach an agent that has ended, and how to run its task again."""
    task = " ".join(agent.info.prompt.split())
    if len(task) > QUOTED_TASK:
        task = task[: QUOTED_TASK - 1] + "…"
    who = f"agent {agent.info.name} ({agent.id})" if agent.info.name != agent.id else f"agent {agent.id}"
    parent = agent.info.parent_id or ROOT_ID
    again = f"; to run its task again, ask {parent} to start a new subagent with the task: {task}" if task else ""
    return f"{who} has finished ({agent_ended(agent.info.status)}): your message did not reach it{again}"


def _deliver(agent: Agent, text: str) -> None:
    """After the commit: into the agent's next turn, or a notice when it ended meanwhile."""
    if agent.loop is None or agent.done.done() or agent.ending or agent.loop.outcome is not None:
        agent.recorder.emit(pb.Notice(level="warning", text=finished(agent)))
        return
    agent.loop.queue_prompt(text)
