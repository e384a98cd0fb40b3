"""What the terminal host knows of each agent: its shell, its windows, its last directory."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Completion:
    """A bash command's end, as its shell reported it."""

    status: int
    cwd: str
    shell_exited: bool  # the command ended the shell (`exit`)


@dataclass
class Window:
    agent_id: str
    name: str  # the name the model sees
    window_id: str  # tmux's @N
    pid: int  # the pane's first process; it leads the pane's terminal session
    command: str
    output: Path | None = None  # a timed-out bash command's output file
    run: asyncio.Future[Completion] | None = None  # that command's completion
    channel: str = ""  # a bash shell's report channel (its token): closed with the window


@dataclass
class Shell:
    """An agent's persistent bash: the window it runs in and the token its reports carry."""

    window: Window
    token: str
    argv: bytes = b""  # the shell's /proc cmdline: a changed one means `exec` replaced the shell


@dataclass
class AgentState:
    shell: Shell | None = None
    windows: dict[str, Window] = field(default_factory=dict)
    cwd: str = ""  # last known working directory of the bash shell
    notes: list[str] = field(default_factory=list)  # told with the next bash call
    detached: int = 0
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


def start_dir(state: AgentState, workspace: Path) -> str:
    """Where a new shell starts: the agent's last known directory, else the workspace."""
    return state.cwd if state.cwd and Path(state.cwd).is_dir() else str(workspace)
