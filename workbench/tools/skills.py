"""Agent Skills: folders `<name>/SKILL.md` with YAML front matter (`name`, `description`).

Skills are looked for in `.workbench/skills/`, `.agents/skills/` and `.claude/skills/` of the
workspace, then the same folders under the user's home; the first skill of a name wins. The
system prompt lists each skill's name and description; the `skill` tool returns the body and
the paths of the skill's other files. A malformed SKILL.md is reported by path and reason and
does not hide the others. A workspace skill must stay inside the workspace (a cloned repo
must not reach into the person's files through a symlink); the person's own skills may be
symlinks anywhere.
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass
from pathlib import Path

import yaml

from workbench.config.settings import Settings
from workbench.core.feedback import Feedback
from workbench.tools.arguments import shorten
from workbench.tools.files.walk import read_regular
from workbench.tools.registry import ToolContext, tool

SKILL_FOLDERS = (".workbench/skills", ".agents/skills", ".claude/skills")
DESCRIPTION_CHARS = 1024  # as the Agent Skills spec caps it
FILES_CAP = 100
SKILL_MD_BYTES = 1024 * 1024  # a larger SKILL.md is reported, not read


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    folder: Path  # resolved
    skill_md: Path  # resolved
    body: str


@dataclass(frozen=True)
class SkillProblem:
    path: Path
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


def skill_roots(settings: Settings) -> list[tuple[Path, bool]]:
    """(folder, belongs to the workspace) for every place skills are looked for, in order."""
    workspace = Path(settings.workspace).resolve()
    home = Path.home()
    return [(workspace / f, True) for f in SKILL_FOLDERS] + [(home / f, False) for f in SKILL_FOLDERS]


def parse_skill_md(text: str) -> tuple[dict[str, object], str]:
    """Front matter and body of a SKILL.md; ValueError with the reason when malformed."""
    text = text.removeprefix("\ufeff")
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        raise ValueError("it does not start with YAML front matter (a line '---', name and description, '---')")
    end = next((i for i, line in enumerate(lines[1:], 1) if line.strip() in ("---", "...")), None)
    if end is None:
        raise ValueError("its front matter is not closed by a line '---'")
    try:
        meta = yaml.safe_load("\n".join(lines[1:end]))
    except RecursionError:
        raise ValueError("its front matter is nested too deeply to read") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""
        problem = getattr(err, "problem", None) or str(err)
        raise ValueError(
            f"its front matter is not valid YAML{where}: {problem} (quote values that contain ': ')"
        ) from err
    if not isinstance(meta, dict):
        raise ValueError("its front matter must be a mapping with name and description")
    for key in ("name", "description"):
        value = meta.get(key)
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"its front matter has no {key} (a non-empty text)")
    return meta, "\n".join(lines[end + 1 :]).strip("\n")


def discover(settings: Settings) -> tuple[list[Skill], list[SkillProblem]]:
    """Every skill that loads, and a problem for each one that does not."""
    workspace = Path(settings.workspace).resolve()
    skills: dict[str, Skill] = {}
    problems: list[SkillProblem] = []
    for root, in_workspace in skill_roots(settings):
        try:
            children = sorted(p for p in root.iterdir() if p.is_dir())
        except OSError:
            continue
        for child in children:
            skill_md = child / "SKILL.md"
            if not skill_md.exists():
                skill_md = next((p for p in child.iterdir() if p.name.lower() == "skill.md"), skill_md)
                if not skill_md.exists():
                    continue
            real = skill_md.resolve()
            if in_workspace and not real.is_relative_to(workspace):
                problems.append(SkillProblem(skill_md, f"it leads outside the workspace (to {real}); not loaded"))
                continue
            try:
                data = read_regular(real, SKILL_MD_BYTES + 1)
                if len(data) > SKILL_MD_BYTES:
                    raise ValueError(f"it is larger than {SKILL_MD_BYTES:,} bytes; not loaded")
                meta, body = parse_skill_md(data.decode("utf-8"))
            except UnicodeDecodeError:
                problems.append(SkillProblem(skill_md, "it is not valid UTF-8 text"))
                continue
            except (OSError, ValueError) as err:
                problems.append(SkillProblem(skill_md, str(err)))
                continue
            name = str(meta["name"]).strip()
            if name not in skills:
                description = " ".join(str(meta["description"]).split())[:DESCRIPTION_CHARS]
                skills[name] = Skill(name, description, real.parent, real, body)
    return list(skills.values()), problems


def readable_skill_folders(settings: Settings) -> list[Path]:
    """Folders read_file may read in besides the workspace: the home skill roots and every
    skill's own (resolved) folder, which may be a symlink elsewhere."""
    folders = [Path(os.path.realpath(root)) for root, in_workspace in skill_roots(settings) if not in_workspace]
    folders += [s.folder for s in discover(settings)[0]]
    return folders


def _show(ctx: ToolContext, path: Path) -> str:
    root = ctx.workspace.resolve()
    return path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)


def _other_files(skill: Skill) -> list[Path]:
    found: list[Path] = []
    for folder, dirs, files in os.walk(skill.folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for f in sorted(files):
            path = Path(folder) / f
            if path != skill.skill_md and not f.startswith("."):
                found.append(path)
        if len(found) > FILES_CAP:
            break
    return found


def _find(skills: list[Skill], name: str) -> Skill | None:
    wanted = name.strip().removesuffix("/SKILL.md")
    for match in (
        lambda s: s.name == wanted,
        lambda s: s.folder.name == wanted,
        lambda s: s.name.lower() == wanted.lower() or s.folder.name.lower() == wanted.lower(),
    ):
        found = next((s for s in skills if match(s)), None)
        if found is not None:
            return found
    return None


@tool(read_only=True)
async def skill(name: str, ctx: ToolContext) -> str:
    """Load a skill's instructions by name (the system prompt lists the skills and what each is for).

    Returns the instructions and the paths of the skill's other files, which read_file can open.

    Args:
        name: the skill's name as listed in the system prompt
    """
    skills, problems = discover(ctx.settings)
    found = _find(skills, name)
    if found is None:
        broken = [p for p in problems if p.path.parent.name == name.strip()]
        if broken:
            raise Feedback(f"the skill {shorten(name)} cannot be loaded: {broken[0].path} {broken[0].reason}")
        if skills:
            close = difflib.get_close_matches(name, [s.name for s in skills], n=1, cutoff=0.6)
            message = f"no skill named {shorten(name)}" + (f"; did you mean {close[0]!r}?" if close else ".")
            message += " Available skills: " + "; ".join(f"{s.name} ({s.description[:80]})" for s in skills)
        else:
            places = ", ".join(str(r) for r, _ in skill_roots(ctx.settings))
            message = f"no skill named {shorten(name)}: no skills are installed (looked in {places})"
        if problems:
            message += ". Skills that failed to load: " + "; ".join(map(str, problems))
        raise Feedback(message)
    folder = _show(ctx, found.folder)
    parts = [
        f'Skill "{found.name}": {found.description}',
        f"Folder: {folder} (paths in these instructions are relative to it)",
        "",
        found.body or "(this SKILL.md has no instructions besides its front matter)",
    ]
    files = _other_files(found)
    if files:
        parts += [
            "",
            "Other files of this skill (open them with read_file when the instructions call for them):",
        ]
        parts += [f"  {_show(ctx, f)}" for f in files[:FILES_CAP]]
        if len(files) > FILES_CAP:
            parts.append(f"  [more files not listed; ls(path={folder!r}) lists the folder]")
    return "\n".join(parts)
