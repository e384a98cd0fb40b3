"""In-place edits that changed nothing: `sed -i 's/timeout = 120/timeout = 30/' net.toml` exits 0
and prints nothing when its pattern matches no line, and a small model guessed the old value, then
read the silence as a failure or a success (issue 38: set_a_value, every run of the 2026-12-07
eval). The bash tool hashes the files a command line edits in place (sed -i, perl -i) before it
runs and again after it succeeds; each one left as it was is named in a note with the ready
read_file call. A line made only of such edits that changed none of its files is marked
`changed_nothing` in its result's metadata: the engine's checks count it as no change.

Only files inside the workspace, at most MAX_FILES of them and MAX_BYTES each; a command line
the guard calls opaque (words built at run time: `$(...)`, backticks; a wrapper such as sudo)
is not read. A `cd DIR` earlier on the line moves where relative paths start. Nothing here
changes a file.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from workbench.terminal.shell_parse import Command, opaque, parse

MAX_FILES = 20
MAX_BYTES = 8 * 1024 * 1024
# the options of each in-place editor that take the next word as their value
_VALUED = {"sed": {"-e", "-f", "-l", "--expression", "--file", "--line-length"}, "perl": {"-e", "-E", "-M", "-I"}}
_SCRIPT_FLAGS = {"sed": {"-e", "-f", "--expression", "--file"}, "perl": {"-e", "-E"}}


@dataclass(frozen=True)
class Edit:
    program: str  # sed or perl
    path: Path  # resolved, inside the workspace
    shown: str  # as the command line wrote it


def _edited_files(command: Command) -> list[str]:
    """The files one sed or perl command edits in place ([] when it does not: no -i)."""
    program = command.program
    if program not in _VALUED:
        return []
    args = list(command.words[1:])
    in_place = False
    script_given = False
    operands: list[str] = []
    i = 0
    while i < len(args):
        word = args[i]
        if word == "--":
            operands.extend(args[i + 1 :])
            break
        if word.startswith("--"):
            name = word.split("=", 1)[0]
            in_place |= name == "--in-place"
            script_given |= name in _SCRIPT_FLAGS[program]
            i += 2 if name in _VALUED[program] and "=" not in word else 1
            continue
        if word.startswith("-") and len(word) > 1:
            i += 1
            for at, flag in enumerate(word[1:], start=2):
                if flag == "i":  # -i[SUFFIX]: the rest of the word is the backup's suffix
                    in_place = True
                    break
                if f"-{flag}" in _VALUED[program]:  # -e'script', or -e and the script as the next word
                    script_given |= f"-{flag}" in _SCRIPT_FLAGS[program]
                    i += 0 if word[at:] else 1
                    break
            continue
        operands.append(word)
        i += 1
    if not in_place:
        return []
    return operands if script_given else operands[1:]  # the first operand is the script


def edits(command_line: str, cwd: Path, workspace: Path) -> list[Edit]:
    """The workspace files the command line edits in place, as it names them."""
    if opaque(command_line):
        return []
    named: list[tuple[str, Path, str]] = []  # program, where the line left it, the file as written
    here = cwd
    for pipeline in parse(command_line):  # parsing only (cached): most lines name no file to edit
        for command in pipeline:
            if command.program == "cd" and len(command.words) == 2:
                here = here / command.words[1]
            named.extend((command.program, here, shown) for shown in _edited_files(command))
    if not named:
        return []
    root = workspace.resolve()
    found = [Edit(program, (folder / shown).resolve(), shown) for program, folder, shown in named]
    return [edit for edit in found if edit.path.is_relative_to(root)][:MAX_FILES]


def only_edits(command_line: str) -> bool:
    """Whether every command of the line is an in-place edit of files (or a `cd`): when all of its
    files are unchanged, the line changed nothing."""
    if opaque(command_line):
        return False
    commands = [c for pipeline in parse(command_line) for c in pipeline]
    return bool(commands) and all(c.program == "cd" or _edited_files(c) for c in commands)


def _digest(path: Path) -> str | None:
    try:
        if not path.is_file() or path.stat().st_size > MAX_BYTES:
            return None
        return hashlib.blake2b(path.read_bytes(), digest_size=16).hexdigest()
    except OSError:
        return None


def digests(found: list[Edit]) -> list[str | None]:
    """Each edited file's content hash now (None: no regular file, or larger than MAX_BYTES)."""
    return [_digest(edit.path) for edit in found]


def unchanged(found: list[Edit], before: list[str | None]) -> list[Edit]:
    """The edited files whose content is what `before` hashed."""
    now = digests(found)
    return [edit for edit, was, is_ in zip(found, before, now, strict=True) if was is not None and was == is_]


def note(unchanged: list[Edit], workspace: Path) -> str:
    """The note on in-place edits that changed nothing ('' when every edited file changed)."""
    if not unchanged:
        return ""
    program = unchanged[0].program
    names = list(dict.fromkeys(e.shown for e in unchanged))
    first = unchanged[0].path.relative_to(workspace.resolve()).as_posix()
    call = json.dumps({"name": "read_file", "arguments": {"path": first}}, ensure_ascii=False)
    which = f"{names[0]} is" if len(names) == 1 else f"{', '.join(names)} are"
    return (
        f"{program} -i changed nothing: {which} as before the command (its pattern matched no line). "
        f"Read the file to copy its exact text: {call}"
    )


__all__ = ["Edit", "digests", "edits", "note", "only_edits", "unchanged"]
