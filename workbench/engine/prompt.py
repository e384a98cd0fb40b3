"""The system prompt: who the agent is, where it works, and the instructions it must follow.

Besides the base text it holds, in this order (later, more specific text wins on conflict):
- the person's global AGENTS.md, `~/.config/workbench/AGENTS.md` (the folder of the user
  config, so `$XDG_CONFIG_HOME/workbench/AGENTS.md` when that is set);
- the workspace's AGENTS.md (CLAUDE.md when there is no AGENTS.md), as Codex and OpenCode do;
  it must lie inside the workspace, so a cloned repo cannot pull in files through a symlink;
- the skills: name and description only; the skill tool loads the rest.
"""

from __future__ import annotations

from pathlib import Path

from workbench.config.load import user_config_path
from workbench.config.settings import Settings
from workbench.tools.files.walk import read_regular
from workbench.tools.skills import discover

BASE = """You are Workbench, a coding agent working in the repository at {workspace}.
Use the tools to inspect and change files and to run commands; paths are relative to the
workspace root and line numbers are 1-based. Do the work yourself with tool calls: never tell
the person how they could do it. When a tool fails, read its error: it says what went wrong
and what to do next; correct the call and go on. Do not repeat a call whose result you
already have: use it. Be concise; when the task is done, answer without tool calls, with the
result itself (the number, name or fact asked for, or what you changed)."""

INSTRUCTIONS_CHARS = 32 * 1024  # per file, as Codex caps project docs
PROJECT_DOCS = ("AGENTS.md", "CLAUDE.md")


def global_agents_md() -> Path:
    """The person's own AGENTS.md, beside the user config."""
    return user_config_path().parent / "AGENTS.md"


def _utf8(data: bytes, cut: bool) -> str:
    """UTF-8 text; when the read was cut, a character split at the cut is dropped, not an error."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        if cut and err.start >= len(data) - 3:
            return data[: err.start].decode("utf-8")
        raise


def _instructions(path: Path, title: str, confine_to: Path | None = None) -> str:
    try:
        if confine_to is not None and not path.resolve().is_relative_to(confine_to):
            return f"## {title}\n({path} leads outside the workspace, so it was not read.)"
        limit = INSTRUCTIONS_CHARS * 4 + 4  # a character is at most 4 bytes: more characters than kept
        data = read_regular(path, limit)
        text = _utf8(data, cut=len(data) == limit).strip()
    except FileNotFoundError:
        return ""
    except (OSError, UnicodeDecodeError) as err:
        return f"## {title}\n({path} could not be read: {err})"
    if not text:
        return ""
    if len(text) > INSTRUCTIONS_CHARS:
        text = (
            text[:INSTRUCTIONS_CHARS]
            + f"\n[... cut at {INSTRUCTIONS_CHARS:,} characters; read the rest with read_file({str(path)!r})]"
        )
    return f"## {title} ({path})\n{text}"


def _skills(settings: Settings) -> str:
    skills, problems = discover(settings)
    if not skills and not problems:
        return ""
    lines = ["## Skills"]
    if skills:
        lines.append(
            "A skill holds instructions for one kind of task. When a task matches a skill's "
            "description, load it first with the skill tool (skill(name=...)) and follow it."
        )
        lines += [f"- {s.name}: {s.description}" for s in skills]
    if problems:
        lines.append("These skills could not be loaded (tell the person if they ask for one):")
        lines += [f"- {p}" for p in problems]
    return "\n".join(lines)


def system_prompt(settings: Settings) -> str:
    """The base instructions, the global and project AGENTS.md, and the skills list."""
    workspace = Path(settings.workspace).resolve()
    sections = [BASE.format(workspace=workspace)]
    sections.append(_instructions(global_agents_md(), "Your person's instructions for every project"))
    project = next((workspace / n for n in PROJECT_DOCS if (workspace / n).exists()), None)
    if project is not None:
        sections.append(_instructions(project, "Project instructions", confine_to=workspace))
    sections.append(_skills(settings))
    return "\n\n".join(s for s in sections if s)
