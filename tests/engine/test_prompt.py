"""The system prompt: base text, the global and the project AGENTS.md, the skills list."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import run_agent
from tests.scripted_server import ScriptedModel, reply
from workbench.config.settings import Settings
from workbench.engine.prompt import INSTRUCTIONS_CHARS, global_agents_md, system_prompt


def test_base_prompt_alone(workspace: Path) -> None:
    text = system_prompt(Settings(workspace=workspace))
    assert text.startswith(f"You are Workbench, a coding agent working in the repository at {workspace.resolve()}.")
    assert "AGENTS.md" not in text and "## Skills" not in text


def test_global_then_project_agents_md(workspace: Path, tmp_path: Path) -> None:
    assert global_agents_md() == tmp_path / "xdg-config" / "workbench" / "AGENTS.md"  # conftest's XDG_CONFIG_HOME
    global_agents_md().parent.mkdir(parents=True)
    global_agents_md().write_text("Always answer in English.\n")
    (workspace / "AGENTS.md").write_text("Run `make test` before finishing.\n")
    (workspace / "CLAUDE.md").write_text("ignored while AGENTS.md exists\n")
    text = system_prompt(Settings(workspace=workspace))
    first, second = text.index("Always answer in English."), text.index("Run `make test` before finishing.")
    assert first < second
    assert f"## Project instructions ({workspace.resolve() / 'AGENTS.md'})" in text
    assert "ignored while AGENTS.md exists" not in text


def test_claude_md_is_the_fallback(workspace: Path) -> None:
    (workspace / "CLAUDE.md").write_text("Use tabs.\n")
    assert "Use tabs." in system_prompt(Settings(workspace=workspace))


def test_agents_md_symlinked_outside_is_not_read(workspace: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("ssh key material\n")
    (workspace / "AGENTS.md").symlink_to(secret)
    text = system_prompt(Settings(workspace=workspace))
    assert "ssh key material" not in text and "leads outside the workspace, so it was not read" in text


def test_huge_agents_md_is_cut_with_a_pointer(workspace: Path) -> None:
    (workspace / "AGENTS.md").write_text("rule\n" * (INSTRUCTIONS_CHARS // 2))
    text = system_prompt(Settings(workspace=workspace))
    assert f"cut at {INSTRUCTIONS_CHARS:,} characters; read the rest with read_file(" in text
    assert len(text) < INSTRUCTIONS_CHARS + 2000


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files regardless of their mode")
def test_unreadable_agents_md_is_noted(workspace: Path) -> None:
    (workspace / "AGENTS.md").write_text("x")
    (workspace / "AGENTS.md").chmod(0)
    assert "could not be read" in system_prompt(Settings(workspace=workspace))


def test_skills_listed_with_problems(workspace: Path, home: Path) -> None:
    folder = workspace / ".agents/skills/lint"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: lint\ndescription: Lint   the\n  code base\n---\nSECRET BODY\n")
    broken = home / ".claude/skills/broken"
    broken.mkdir(parents=True)
    (broken / "SKILL.md").write_text("---\nname: broken\n---\n")
    text = system_prompt(Settings(workspace=workspace))
    assert "## Skills" in text and "- lint: Lint the code base" in text and "SECRET BODY" not in text
    assert f"- {broken / 'SKILL.md'}: its front matter has no description" in text


async def test_the_model_receives_the_prompt(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    (workspace / "AGENTS.md").write_text("Prefer small commits.\n")
    scripted_model.add(reply("ok"))
    await run_agent(settings, "hello", [])
    system = scripted_model.requests[0]["messages"][0]
    assert system["role"] == "system" and "Prefer small commits." in system["content"]


async def test_the_prompt_tells_a_model_to_act_use_results_and_answer_with_the_result(
    settings: Settings, scripted_model: ScriptedModel
) -> None:
    """What a 1.5B model got wrong in the recovery eval (issue 16): it explained how the person
    could call a tool instead of calling it, called again for a result it had, and answered
    with a description of the steps instead of the number asked for."""
    scripted_model.add(reply("ok"))
    await run_agent(settings, "hello", [])
    system = " ".join(scripted_model.requests[0]["messages"][0]["content"].split())
    assert "Do the work yourself with tool calls: never tell the person how they could do it." in system
    assert "Do not repeat a call whose result you already have: use it." in system
    assert "with the result itself (the number, name or fact asked for, or what you changed)" in system


@pytest.mark.timeout(20)
def test_agents_md_that_is_a_fifo_does_not_hang_the_prompt(workspace: Path) -> None:
    os.mkfifo(workspace / "AGENTS.md")
    text = system_prompt(Settings(workspace=workspace))
    assert "AGENTS.md could not be read" in text and "FIFO (named pipe)" in text


def test_huge_agents_md_cut_inside_a_character_still_reads(workspace: Path) -> None:
    # only the first bytes are read now; the read may stop inside a 3-byte character
    (workspace / "AGENTS.md").write_text("a" + "€" * (INSTRUCTIONS_CHARS * 2), encoding="utf-8")
    text = system_prompt(Settings(workspace=workspace))
    assert "could not be read" not in text and "a€€€" in text
    assert f"cut at {INSTRUCTIONS_CHARS:,} characters" in text
