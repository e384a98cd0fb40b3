"""Which of the built-in tools the root agent is offered: the `tool_profile` setting (issue 38).

A 1.5B model offered every tool reached for a subagent with a made-up model name for what one
command or one edit does; `core` offers the file tools and bash only (subagent, tmux, web and
skill left out). The MCP servers the person configured stay: configuring one is asking for it.
An explicit tool list (a test's, a subagent's) is never narrowed. Pure functions.
"""

from __future__ import annotations

PROFILES = ("full", "core", "auto")
CORE = ("read_file", "write_file", "edit_file", "ls", "glob", "grep", "bash")


def narrowed(names: list[str], profile: str, known_model: bool) -> list[str]:
    """`names` as the profile offers them: core (or auto, for a model litellm does not know) keeps
    only CORE; full keeps all."""
    core = profile == "core" or (profile == "auto" and not known_model)
    return [n for n in names if n in CORE] if core else names


__all__ = ["CORE", "PROFILES", "narrowed"]
