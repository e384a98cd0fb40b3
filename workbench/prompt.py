"""The system prompt: who the agent is, where it works, and the project's own instructions."""

from __future__ import annotations

from workbench.config import Settings

BASE = """You are Workbench, a coding agent working in the repository at {workspace}.
Use the tools to inspect and change files and to run commands; paths are relative to the
workspace root and line numbers are 1-based. When a tool fails, read its error: it says what
went wrong and what to do next. Be concise; when the task is done, answer without tool calls."""


def system_prompt(settings: Settings) -> str:
    """The base instructions for an agent in this workspace."""
    return BASE.format(workspace=settings.workspace)
