"""Agent Skills: discovery in the workspace and the home, the skill tool, malformed SKILL.md files."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import run_agent
from tests.scripted_server import ScriptedModel, call, reply
from workbench.config.settings import Settings
from workbench.core.feedback import model_text
from workbench.pb import workbench_pb2 as pb
from workbench.tools.registry import Toolbox, ToolContext
from workbench.tools.skills import SKILL_MD_BYTES, discover, parse_skill_md


def skill_md(name: str, description: str, body: str = "") -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n{body}"


def put(root: Path, rel: str, content: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return path


async def invoke(workspace: Path, tmp_path: Path, tool_name: str, **args: object) -> pb.ToolResult:
    settings = Settings(workspace=workspace, data_dir=tmp_path / "data")
    ctx = ToolContext(workspace=workspace, settings=settings, session_dir=tmp_path / "session")
    return await Toolbox(["skill", "read_file"]).invoke(
        pb.ToolCall(id="c1", name=tool_name, arguments=json.dumps(args)), ctx
    )


def test_discovery_in_every_folder_first_name_wins(workspace: Path, home: Path) -> None:
    put(workspace, ".workbench/skills/release/SKILL.md", skill_md("release", "Cut a release"))
    put(workspace, ".agents/skills/review/SKILL.md", skill_md("review", "Review a change"))
    put(workspace, ".claude/skills/pdf/SKILL.md", skill_md("pdf", "Fill PDF forms"))
    put(home, ".claude/skills/pdf/SKILL.md", skill_md("pdf", "the person's older pdf skill"))
    put(home, ".agents/skills/notes/SKILL.md", skill_md("notes", '"Keep notes: daily"'))
    put(workspace, ".claude/skills/no-skill-here/README.md", "just a folder")
    skills, problems = discover(Settings(workspace=workspace))
    assert [(s.name, s.description) for s in skills] == [
        ("release", "Cut a release"),
        ("review", "Review a change"),
        ("pdf", "Fill PDF forms"),
        ("notes", "Keep notes: daily"),
    ]
    assert problems == []


def test_parse_skill_md_reasons() -> None:
    meta, body = parse_skill_md(skill_md("a", "b", "\nBody here.\n"))
    assert meta["name"] == "a" and body == "Body here."
    cases = {
        "# no front matter\n": "does not start with YAML front matter",
        "---\nname: a\ndescription: b\n": "not closed by a line '---'",
        "---\nname: a\ndescription: Use when: x\n---\n": "not valid YAML at line 3: mapping values are not allowed",
        "---\n- a\n- b\n---\n": "must be a mapping",
        "---\nname: a\n---\n": "has no description",
        "---\nname: ''\ndescription: b\n---\n": "has no name",
    }
    for text, reason in cases.items():
        with pytest.raises(ValueError, match=reason):
            parse_skill_md(text)


async def test_skill_tool_returns_body_and_files(workspace: Path, tmp_path: Path, home: Path) -> None:
    put(workspace, ".claude/skills/pdf/SKILL.md", skill_md("pdf", "Fill PDF forms", "Run scripts/fill.py.\n"))
    put(workspace, ".claude/skills/pdf/scripts/fill.py", "print('fill')\n")
    put(workspace, ".claude/skills/pdf/forms.md", "# Forms\n")
    put(home, ".agents/skills/notes/SKILL.md", skill_md("notes", "Keep notes", "See template.md"))
    put(home, ".agents/skills/notes/template.md", "# Template\n")
    text = model_text(await invoke(workspace, tmp_path, "skill", name="pdf"))
    assert text.splitlines()[:4] == [
        'Skill "pdf": Fill PDF forms',
        "Folder: .claude/skills/pdf (paths in these instructions are relative to it)",
        "",
        "Run scripts/fill.py.",
    ]
    assert "  .claude/skills/pdf/forms.md\n  .claude/skills/pdf/scripts/fill.py" in text
    assert "SKILL.md" not in text.split("Other files")[1]
    text = model_text(await invoke(workspace, tmp_path, "skill", name="notes"))
    template = str(home.resolve() / ".agents/skills/notes/template.md")
    assert f"  {template}" in text
    result = await invoke(workspace, tmp_path, "read_file", path=template)  # home skill files are readable
    assert not result.is_error and "# Template" in result.output


async def test_unknown_skill_lists_the_available_ones(workspace: Path, tmp_path: Path) -> None:
    result = await invoke(workspace, tmp_path, "skill", name="pdf")
    assert result.is_error and "no skills are installed (looked in " in result.error
    assert ".claude/skills" in result.error
    put(workspace, ".claude/skills/pdf-forms/SKILL.md", skill_md("pdf-forms", "Fill PDF forms"))
    put(workspace, ".claude/skills/review/SKILL.md", skill_md("review", "Review a change"))
    put(workspace, ".claude/skills/broken/SKILL.md", "no front matter")
    result = await invoke(workspace, tmp_path, "skill", name="pdf-form")
    assert "no skill named 'pdf-form'; did you mean 'pdf-forms'?" in result.error
    assert "Available skills: pdf-forms (Fill PDF forms); review (Review a change)" in result.error
    assert "broken/SKILL.md: it does not start with YAML front matter" in result.error
    result = await invoke(workspace, tmp_path, "skill", name="broken")
    assert result.error.startswith("the skill 'broken' cannot be loaded: ")
    assert "PDF-FORMS" not in result.error
    assert not (await invoke(workspace, tmp_path, "skill", name="PDF-Forms")).is_error  # case-insensitive


def test_malformed_skills_reported_and_others_still_load(workspace: Path) -> None:
    put(workspace, ".claude/skills/good/SKILL.md", skill_md("good", "Works"))
    put(workspace, ".claude/skills/nodesc/SKILL.md", "---\nname: nodesc\n---\nbody\n")
    put(workspace, ".claude/skills/latin/SKILL.md", "---\nname: caf\xe9\n---\n".encode("latin-1"))
    put(workspace, ".agents/skills/yaml/SKILL.md", "---\nname: [unclosed\ndescription: x\n---\n")
    skills, problems = discover(Settings(workspace=workspace))
    assert [s.name for s in skills] == ["good"]
    reasons = {p.path.parent.name: p.reason for p in problems}
    assert reasons["nodesc"] == "its front matter has no description (a non-empty text)"
    assert reasons["latin"] == "it is not valid UTF-8 text"
    assert reasons["yaml"].startswith("its front matter is not valid YAML at line 3: expected ',' or ']'")
    assert all(p.path.is_absolute() and p.path.name == "SKILL.md" for p in problems)


def test_workspace_skill_symlinked_outside_is_not_loaded(workspace: Path, tmp_path: Path, home: Path) -> None:
    elsewhere = tmp_path / "elsewhere" / "stolen"
    put(elsewhere, "SKILL.md", skill_md("stolen", "reads the person's files"))
    (workspace / ".claude/skills").mkdir(parents=True)
    (workspace / ".claude/skills/stolen").symlink_to(elsewhere)
    (home / ".claude/skills").mkdir(parents=True)
    (home / ".claude/skills/mine").symlink_to(elsewhere)  # the person's own link is fine
    skills, problems = discover(Settings(workspace=workspace))
    assert [(s.name, s.folder) for s in skills] == [("stolen", elsewhere.resolve())]
    assert len(problems) == 1 and "leads outside the workspace" in problems[0].reason
    assert problems[0].path == workspace.resolve() / ".claude/skills/stolen/SKILL.md"


async def test_model_sees_the_list_and_loads_a_skill(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    put(workspace, ".claude/skills/deploy/SKILL.md", skill_md("deploy", "Deploy the app", "Run make deploy.\n"))
    scripted_model.add(reply("", call("skill", {"name": "deploy"})), reply("deployed"))
    run = await run_agent(settings, "deploy it", ["skill"])
    assert run.outcome.status == pb.RUN_STATUS_FINISHED
    system = scripted_model.requests[0]["messages"][0]
    assert system["role"] == "system" and "- deploy: Deploy the app" in system["content"]
    assert "Run make deploy." not in system["content"]  # only the name and description
    tool_text = next(m["content"] for m in scripted_model.requests[1]["messages"] if m["role"] == "tool")
    assert "Run make deploy." in tool_text


async def test_the_skill_tool_is_offered_only_when_a_skill_is_installed(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    """With no skill it could only fail; a 1.5B model in the recovery eval called skill(name=
    "conf/settings.json") first, the first tool in the list (issue 16)."""

    def offered(request: dict) -> list[str]:
        return [t["function"]["name"] for t in request["tools"]]

    scripted_model.add(reply("ok"), reply("ok"))
    await run_agent(settings, "hello")
    assert "skill" not in offered(scripted_model.requests[0]) and "read_file" in offered(scripted_model.requests[0])
    put(workspace, ".claude/skills/deploy/SKILL.md", skill_md("deploy", "Deploy the app"))
    await run_agent(settings, "hello")
    assert "skill" in offered(scripted_model.requests[1])


@pytest.mark.timeout(20)
def test_skill_md_that_is_a_fifo_or_huge_is_reported_not_read(workspace: Path) -> None:
    put(workspace, ".workbench/skills/ok/SKILL.md", skill_md("ok", "Still loads"))
    (workspace / ".workbench/skills/pipe").mkdir()
    os.mkfifo(workspace / ".workbench/skills/pipe/SKILL.md")
    huge = put(workspace, ".workbench/skills/huge/SKILL.md", skill_md("huge", "Too big", "x"))
    with huge.open("ab") as fh:
        fh.truncate(SKILL_MD_BYTES + 10)  # sparse: a big file that costs no disk
    skills, problems = discover(Settings(workspace=workspace))
    assert [s.name for s in skills] == ["ok"]
    reasons = {p.path.parent.name: p.reason for p in problems}
    assert "a FIFO (named pipe), not a regular file" in reasons["pipe"]
    assert f"larger than {SKILL_MD_BYTES:,} bytes" in reasons["huge"]


async def test_a_huge_skill_name_is_shortened_in_the_error(workspace: Path, tmp_path: Path) -> None:
    put(workspace, ".workbench/skills/release/SKILL.md", skill_md("release", "Cut a release"))
    result = await invoke(workspace, tmp_path, "skill", name="r" * 3_000_000)
    assert result.is_error and "no skill named" in result.error and "release" in result.error
    assert "(shortened: 3,000,000 characters)" in result.error and len(model_text(result)) < 2000


@pytest.mark.slow
async def test_a_skill_nested_past_any_sense_is_skipped_with_a_notice_and_the_run_goes_on(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    deep = "---\nname: deep\ndescription: " + "[" * 5000 + "]" * 5000 + "\n---\nbody\n"
    path = put(workspace, ".workbench/skills/deep/SKILL.md", deep)
    put(workspace, ".claude/skills/deploy/SKILL.md", skill_md("deploy", "Deploy the app"))
    scripted_model.add(reply("done"))
    run = await run_agent(settings, "hello")
    assert run.outcome.status == pb.RUN_STATUS_FINISHED and len(scripted_model.requests) == 1
    notices = [n.text for n in run.of("notice") if "skill" in n.text]
    assert notices == [f"skill skipped: {path.resolve()}: its front matter is nested too deeply to read"], notices
    assert "- deploy: Deploy the app" in scripted_model.requests[0]["messages"][0]["content"]
