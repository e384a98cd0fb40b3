"""The typed seams between the engine's parts: what one part may ask of another.

A tool reaches the agent tree only as a `SubagentHost` (`ctx.agents`) and the terminal host
as a `TerminalPort` (`ctx.terminal`; the bash and tmux tools narrow it to their
`TerminalHost`), and the session's MCP servers' tools reach the registry as a `ToolSource`;
the agent tree needs of the terminal host only `TerminalPort`. No tool
imports the loop or the tree, and the tree imports no tool's host.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from workbench.pb import workbench_pb2 as pb

if TYPE_CHECKING:
    from workbench.tools.registry import Tool


class TerminalPort(Protocol):
    """What the agent tree needs of the session's terminal host."""

    async def stop_agent(self, agent_id: str) -> None:
        """Stop what one agent left running (its bash command, its tmux windows)."""

    async def kill_agents(self, agent_ids: list[str]) -> None:
        """End now every process these agents started (their cgroups); the others' run on."""

    async def close(self) -> None:
        """End the session's tmux server and everything started from it."""


class ChildState(Protocol):
    """One subagent as `list` shows it."""

    info: pb.AgentInfo
    activity: str
    activity_at: float  # time.monotonic() of the last activity

    @property
    def elapsed(self) -> float: ...


@dataclass(frozen=True)
class SpawnRequest:
    """A subagent to start, as the subagent tool was asked for it; the agent tree checks it
    (`AgentTree.spawn`: a bad request is Feedback and nothing starts)."""

    prompt: str
    mode: str = "async"  # sync, async or fork
    name: str = ""  # empty: made from the prompt
    tools: list[str] | None = None  # None or []: all of the parent's
    model: str = ""  # empty: the parent's
    timeout: float = 0.0  # seconds; 0: none


class SubagentHost(Protocol):
    """What the subagent tool needs from the agent tree, bound to the calling agent."""

    def create(self, request: SpawnRequest) -> pb.AgentInfo: ...

    def running_children(self) -> tuple[int, int]: ...

    async def result(self, agent_id: str) -> pb.AgentFinished: ...

    def children(self) -> Sequence[ChildState]: ...

    async def cancel(self, agent_id: str) -> pb.AgentFinished: ...

    def message(self, agent_id: str, text: str) -> pb.AgentInfo: ...


class ToolSource(Protocol):
    """Tools that come and go with the session (its MCP servers'): what the registry offers beside
    the built-ins, read again at each turn."""

    def tools(self) -> Mapping[str, Tool]: ...

    def missing(self, name: str) -> str:
        """Why a tool of this source that was offered before is not now ('' if it never was)."""

    async def settle(self) -> list[str]:
        """Before a model request: wait for tools that are about to arrive (bounded); notes for the
        person on those the request goes without."""
