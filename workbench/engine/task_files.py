"""The files a task names come with it (`task_files`; auto: models litellm does not know).

A small model asked to "set the timeout in net.toml to 30" wrote its edit from a guessed old
value, or rewrote a file it had never seen (issue 38). Aider adds the files a message names to
the chat, and Claude Code reads an @-mentioned file before the model's first turn; here, before a
run's first model call, the loop reads the workspace files its prompt names with the real
read_file tool, as calls Workbench makes itself (an assistant message authored AUTHOR_WORKBENCH):
the model starts with their text, and every part of the harness sees an ordinary read. Then
the task comes again, as a Workbench-authored user message (`task_again`): the first eval had the
reads last, with the closing line after results ("If this answers the task, reply now..."), and
the 1.5B model answered "Done" with no call in 4 of 4 change tasks; the task last is where it
makes its calls (docs/DECISIONS.md).

A name counts when it is a regular text file inside the workspace at that path, or, written
without a folder, the one file of that name in the workspace (`logging.ini` for
etc/app/logging.ini). At most TASK_FILES files, each at most FILE_BYTES and together at most
TOTAL_BYTES: a larger file is left for the model to read a page at a time.
"""

from __future__ import annotations

import json
from pathlib import Path

from workbench.core.regular_files import read_regular
from workbench.engine.advice import FILE_NAME
from workbench.model.stream import new_call_id
from workbench.pb import workbench_pb2 as pb
from workbench.tools.files.paths import SUGGEST_SCAN
from workbench.tools.files.walk import WalkStats, ignore_for, walk

TASK_FILES = 3  # files read with a task, the first it names
FILE_BYTES = 12 * 1024  # a larger file is not read with the task
TOTAL_BYTES = 24 * 1024  # the files read with one task, together
NAMES_LOOKED_AT = 50  # a pasted log names many: the first are looked at
TEXT_PROBE = 8 * 1024  # bytes looked at for a NUL: a binary file is not read with the task
TASK_AGAIN = "Above are the files the task names, as they are now. The task:\n\n{task}"
TASK_AGAIN_CHARS = 2_000  # a longer task is not written out again
TASK_AGAIN_LONG = "Above are the files the task names, as they are now. Now do the task given before them."


def _size_if_text(path: Path) -> int | None:
    """The file's size when it is a regular text file of at most FILE_BYTES, else None."""
    try:
        data = read_regular(path, FILE_BYTES + 1)
    except OSError:
        return None
    if len(data) > FILE_BYTES or b"\0" in data[:TEXT_PROBE]:
        return None
    return len(data)


def _by_name(root: Path, names: set[str]) -> dict[str, str]:
    """Each of `names` that is the name of exactly one file in the workspace (ignored files and
    .git left out; one walk of at most SUGGEST_SCAN entries) -> that file, workspace-relative."""
    found: dict[str, list[str]] = {}
    for scanned, (rel, entry) in enumerate(walk(root, "", ignore_for(root, ""), WalkStats())):
        if scanned >= SUGGEST_SCAN:
            break
        if entry.entry.name in names:
            found.setdefault(entry.entry.name, []).append(rel)
    return {name: paths[0] for name, paths in found.items() if len(paths) == 1}


def named_files(task: str, workspace: Path) -> list[str]:
    """The workspace files `task` names, workspace-relative, in the order it names them (at most
    TASK_FILES, within TOTAL_BYTES; of its first NAMES_LOOKED_AT names). Walks the workspace once
    when a bare name is not at the top: call it from a thread."""
    root = workspace.resolve()
    targets: list[tuple[str, Path]] = []
    for name in list(dict.fromkeys(FILE_NAME.findall(task)))[:NAMES_LOOKED_AT]:
        target = (root / name).resolve()
        if target.is_relative_to(root):
            targets.append((name, target))
    bare = {name for name, target in targets if "/" not in name and not target.is_file()}
    elsewhere = _by_name(root, bare) if bare else {}
    chosen: list[str] = []
    total = 0
    for name, target in targets:
        if name in elsewhere:
            target = root / elsewhere[name]
        size = _size_if_text(target) if target.is_file() else None
        if size is None or total + size > TOTAL_BYTES:
            continue
        rel = target.relative_to(root).as_posix()
        if rel not in chosen:
            chosen.append(rel)
            total += size
        if len(chosen) == TASK_FILES:
            break
    return chosen


def reads(paths: list[str]) -> pb.Message:
    """The assistant message, authored by Workbench, whose calls read `paths` with read_file."""
    message = pb.Message(role=pb.ROLE_ASSISTANT, author=pb.AUTHOR_WORKBENCH)
    for path in paths:
        message.tool_calls.add(id=new_call_id(), name="read_file", arguments=json.dumps({"path": path}))
    return message


def task_again(task: str) -> str:
    """The line after the reads: the task once more (a long one only pointed at)."""
    return TASK_AGAIN.format(task=task) if len(task) <= TASK_AGAIN_CHARS else TASK_AGAIN_LONG
