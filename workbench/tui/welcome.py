"""The welcome the transcript shows before the first prompt: what this session will use (the
model, and that the demo is scripted; the workspace and whether it is a git repository; the
sandbox and its network; the approval mode; MCP servers), the few keys that matter, and how to
start. It is drawn from the settings alone (no engine import: it shows with the first frame) and
goes away with the first item of the transcript. It fits at 80x24.
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text

from workbench.config.settings import Settings
from workbench.tui.text import printable

APPROVAL = {
    "ask": "ask: you approve each command, file change and fetch (Ctrl+T)",
    "auto": "auto: workspace changes run; risky commands ask you (Ctrl+T)",
    "read-only": "read-only: changes and commands are blocked (Ctrl+T)",
}
KEYS = (
    "Enter sends · Ctrl+J new line · Esc interrupts · Ctrl+P commands",
    "F1 every key · Ctrl+C twice quits",
)
START = "Type a task below and press Enter to start."
LABEL = 11  # the labels' column width
VALUE = 63  # characters of a value that fit on one row of an 80-column screen


def welcome(settings: Settings, approval: str) -> Text:
    """The welcome for a session on `settings` in the approval mode `approval`."""
    rows = [
        ("model", _model(settings.model)),
        ("workspace", _workspace(settings.workspace)),
        ("sandbox", _sandbox(settings)),
        ("approval", APPROVAL.get(approval, approval)),
        ("MCP", _mcp(settings)),
    ]
    text = Text()
    start = START if settings.model else "No model is set: set one (see above the prompt), or try the offline demo."
    text.append(start + "\n\n", style="bold")
    for label, value in rows:
        text.append(f"  {label:<{LABEL}}", style="bold")
        text.append(printable(value) + "\n")
    text.append("\n")
    text.append("\n".join(f"  {line}" for line in KEYS))
    return text


def _model(model: str) -> str:
    if model == "demo":
        return "demo (scripted: it plays one scenario, not a language model)"
    return model or "none set: see above the prompt, or try the demo (Ctrl+P)"


def _workspace(path: Path) -> str:
    """The folder (its start cut when long: the header names it whole) and whether git tracks it."""
    where, git = _home(path), f" ({_git(path)})"
    room = VALUE - len(git)
    return (where if len(where) <= room else "…" + where[-(room - 1) :]) + git


def _home(path: Path) -> str:
    home = Path.home()
    return f"~/{path.relative_to(home)}" if path.is_relative_to(home) and path != home else str(path)


def _git(workspace: Path) -> str:
    """Whether the workspace is in a git repository (a `.git` in it or a folder above)."""
    found = any((folder / ".git").exists() for folder in (workspace, *workspace.parents))
    return "a git repository" if found else "not a git repository"


def _sandbox(settings: Settings) -> str:
    if settings.sandbox == "off":
        return "off: bash and tmux run with your full rights"
    network = "on" if settings.sandbox_network else "off"
    return f"bash and tmux in {settings.sandbox}, network {network}"


def _mcp(settings: Settings) -> str:
    servers = [
        f"{name} (sandbox off)" if server.transport == "stdio" and not server.sandboxed else name
        for name, server in settings.mcp_servers.items()
        if server.enabled
    ]
    return ", ".join(servers) or "none configured"
