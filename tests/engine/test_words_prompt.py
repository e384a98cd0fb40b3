"""The system prompt and the skills the model reads, pinned whole (issue 36 item 8): the base
instructions, the person's and the project's AGENTS.md (or CLAUDE.md), one that leads outside the
workspace or is too long, the skills list with a skill that failed to load; the skill tool's answer
and refusals. Made by `system_prompt` and real skill tool calls on a real workspace and home; a
change of wording is a reviewed diff (`pytest --inline-snapshot=review`)."""

from __future__ import annotations

import os
from pathlib import Path

from inline_snapshot import snapshot

from tests.words import said, steady, tool_ctx
from workbench.config.settings import Settings
from workbench.engine.prompt import INSTRUCTIONS_CHARS, global_agents_md, system_prompt
from workbench.tools.registry import Toolbox

BOX = Toolbox(["skill", "read_file"])


def prompt(workspace: Path, home: Path) -> str:
    text = system_prompt(Settings(workspace=workspace))
    return steady(
        text, (workspace.resolve(), "<ws>"), (home.resolve(), "<home>"), (global_agents_md().parent, "<config>")
    )


def skill_md(folder: Path, name: str, description: str, body: str = "") -> None:
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n{body}")


def test_the_base_prompt(workspace: Path, home: Path) -> None:
    assert prompt(workspace, home) == snapshot("""\
You are Workbench, a coding agent working in the repository at <ws>.
Use the tools to inspect and change files and to run commands; paths are relative to the
workspace root and line numbers are 1-based. Do the work yourself with tool calls: never tell
the person how they could do it. When a tool fails, read its error: it says what went wrong
and what to do next; correct the call and go on. Do not repeat a call whose result you
already have: use it. Be concise; when the task is done, answer without tool calls, with the
result itself (the number, name or fact asked for, or what you changed).\
""")


def test_the_instructions_of_the_person_and_the_project(workspace: Path, home: Path) -> None:
    global_agents_md().parent.mkdir(parents=True, exist_ok=True)
    global_agents_md().write_text("Answer in British English.\n")
    (workspace / "CLAUDE.md").write_text("Run `make test` before you finish.\n")
    assert prompt(workspace, home) == snapshot("""\
You are Workbench, a coding agent working in the repository at <ws>.
Use the tools to inspect and change files and to run commands; paths are relative to the
workspace root and line numbers are 1-based. Do the work yourself with tool calls: never tell
the person how they could do it. When a tool fails, read its error: it says what went wrong
and what to do next; correct the call and go on. Do not repeat a call whose result you
already have: use it. Be concise; when the task is done, answer without tool calls, with the
result itself (the number, name or fact asked for, or what you changed).

## Your person's instructions for every project (<config>/AGENTS.md)
Answer in British English.

## Project instructions (<ws>/CLAUDE.md)
Run `make test` before you finish.\
""")
    (workspace / "AGENTS.md").write_text("x" * (INSTRUCTIONS_CHARS + 10))
    assert prompt(workspace, home).replace("x" * INSTRUCTIONS_CHARS, "<32,768 x>") == snapshot("""\
You are Workbench, a coding agent working in the repository at <ws>.
Use the tools to inspect and change files and to run commands; paths are relative to the
workspace root and line numbers are 1-based. Do the work yourself with tool calls: never tell
the person how they could do it. When a tool fails, read its error: it says what went wrong
and what to do next; correct the call and go on. Do not repeat a call whose result you
already have: use it. Be concise; when the task is done, answer without tool calls, with the
result itself (the number, name or fact asked for, or what you changed).

## Your person's instructions for every project (<config>/AGENTS.md)
Answer in British English.

## Project instructions (<ws>/AGENTS.md)
<32,768 x>
[... cut at 32,768 characters; read the rest with read_file('<ws>/AGENTS.md')]\
""")
    (workspace / "AGENTS.md").unlink()
    os.symlink(home / "secret.md", workspace / "AGENTS.md")
    (home / "secret.md").write_text("secret\n")
    assert prompt(workspace, home) == snapshot("""\
You are Workbench, a coding agent working in the repository at <ws>.
Use the tools to inspect and change files and to run commands; paths are relative to the
workspace root and line numbers are 1-based. Do the work yourself with tool calls: never tell
the person how they could do it. When a tool fails, read its error: it says what went wrong
and what to do next; correct the call and go on. Do not repeat a call whose result you
already have: use it. Be concise; when the task is done, answer without tool calls, with the
result itself (the number, name or fact asked for, or what you changed).

## Your person's instructions for every project (<config>/AGENTS.md)
Answer in British English.

## Project instructions
(<ws>/AGENTS.md leads outside the workspace, so it was not read.)\
""")


def test_the_skills_list(workspace: Path, home: Path) -> None:
    skills = workspace / ".workbench" / "skills"
    skill_md(skills / "release", "release", "Cut a release (bump the version, tag, write the changelog).")
    (skills / "broken").mkdir()
    (skills / "broken" / "SKILL.md").write_text("---\nname: broken\ndescription: a: b\n---\n")
    assert prompt(workspace, home) == snapshot("""\
You are Workbench, a coding agent working in the repository at <ws>.
Use the tools to inspect and change files and to run commands; paths are relative to the
workspace root and line numbers are 1-based. Do the work yourself with tool calls: never tell
the person how they could do it. When a tool fails, read its error: it says what went wrong
and what to do next; correct the call and go on. Do not repeat a call whose result you
already have: use it. Be concise; when the task is done, answer without tool calls, with the
result itself (the number, name or fact asked for, or what you changed).

## Skills
A skill holds instructions for one kind of task. When a task matches a skill's description, load it first with the skill tool (skill(name=...)) and follow it.
- release: Cut a release (bump the version, tag, write the changelog).
These skills could not be loaded (tell the person if they ask for one):
- <ws>/.workbench/skills/broken/SKILL.md: its front matter is not valid YAML at line 3: mapping values are not allowed here (quote values that contain ': ')\
""")


async def test_the_skill_tool(workspace: Path, tmp_path: Path) -> None:
    ctx = tool_ctx(workspace, tmp_path)
    assert await said(BOX, ctx, "skill", {"name": "release"}) == snapshot(
        "Error: no skill named 'release': no skills are installed (looked in <ws>/.workbench/skills, <ws>/.agents/skills, <ws>/.claude/skills, <tmp>/home/.workbench/skills, <tmp>/home/.agents/skills, <tmp>/home/.claude/skills)"
    )
    skills = workspace / ".workbench" / "skills"
    skill_md(skills / "release", "release", "Cut a release.", "1. Bump the version in pyproject.toml.\n2. Tag it.\n")
    (skills / "release" / "changelog.tmpl").write_text("## {version}\n")
    skill_md(skills / "bare", "bare", "Nothing inside.")
    (skills / "broken").mkdir()
    (skills / "broken" / "SKILL.md").write_text("no front matter\n")
    assert await said(BOX, ctx, "skill", {"name": "release"}) == snapshot("""\
Skill "release": Cut a release.
Folder: .workbench/skills/release (paths in these instructions are relative to it)

1. Bump the version in pyproject.toml.
2. Tag it.

Other files of this skill (open them with read_file when the instructions call for them):
  .workbench/skills/release/changelog.tmpl\
""")
    assert await said(BOX, ctx, "skill", {"name": "bare"}) == snapshot("""\
Skill "bare": Nothing inside.
Folder: .workbench/skills/bare (paths in these instructions are relative to it)

(this SKILL.md has no instructions besides its front matter)\
""")
    assert await said(BOX, ctx, "skill", {"name": "relase"}) == snapshot(
        "Error: no skill named 'relase'; did you mean 'release'? Available skills: bare (Nothing inside.); release (Cut a release.). Skills that failed to load: <ws>/.workbench/skills/broken/SKILL.md: it does not start with YAML front matter (a line '---', name and description, '---')"
    )
    assert await said(BOX, ctx, "skill", {"name": "broken"}) == snapshot(
        "Error: the skill 'broken' cannot be loaded: <ws>/.workbench/skills/broken/SKILL.md it does not start with YAML front matter (a line '---', name and description, '---')"
    )
