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

The code names a task gives come with it the same way, as one grep call (`named_identifiers`,
`symbol_pattern`): identifiers written as code (snake_case, camelCase; `area_of`, not a file
name), at most SYMBOLS of them, searched as whole words when the workspace has them on 1 to
SYMBOL_LINES lines (a name on more lines is left for the model to search). Asked to rename
area_of across three files it had not been shown, the 1.5B model edited files it invented
(`src/utils/circle.py`), in every run of five evals.
"""

from __future__ import annotations

import json
import re
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
SYMBOLS = 2  # code names of a task searched with it, the first it gives
SYMBOL_LINES = 30  # a name the workspace has on more lines than this is not searched with the task
SYMBOL_FILE_BYTES = 1024 * 1024  # a larger file is not looked at when counting a name's lines
TASK_AGAIN = "Above {what}, as they are now. The task:\n\n{task}"
TASK_AGAIN_CHARS = 2_000  # a longer task is not written out again
TASK_AGAIN_LONG = "Above {what}, as they are now. Now do the task given before them."
# an identifier written as code: snake_case (area_of, MAX_RETRIES) or camelCase (checkLogin), not
# part of a path or file name; one written as a call (calc_total(items)) counts
_IDENTIFIER = re.compile(
    r"(?<![\w./\\-])([A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+|[a-z]+[A-Z][A-Za-z0-9]*)(?![\w/\\-]|\.\w)"
)


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


def named_identifiers(task: str) -> list[str]:
    """The code names `task` gives (snake_case or camelCase words outside its file names), the
    first SYMBOLS of them, in order."""
    return list(dict.fromkeys(_IDENTIFIER.findall(FILE_NAME.sub(" ", task))))[:SYMBOLS]


def symbol_pattern(names: list[str], workspace: Path) -> str:
    """The grep pattern of `names` as whole words ('' none) when the workspace's text files hold it
    on 1 to SYMBOL_LINES lines (ignored files and .git left out; one walk of at most SUGGEST_SCAN
    entries, files up to SYMBOL_FILE_BYTES): call it from a thread."""
    if not names:
        return ""
    words = "|".join(re.escape(n) for n in names)
    pattern = rf"\b{words}\b" if len(names) == 1 else rf"\b(?:{words})\b"
    matcher = re.compile(pattern.encode())
    root = workspace.resolve()
    lines = 0
    for scanned, (_, found) in enumerate(walk(root, "", ignore_for(root, ""), WalkStats())):
        if scanned >= SUGGEST_SCAN:
            break
        try:
            data = read_regular(Path(found.path), SYMBOL_FILE_BYTES + 1)
        except OSError:
            continue
        if len(data) > SYMBOL_FILE_BYTES or b"\0" in data[:TEXT_PROBE]:
            continue
        lines += sum(1 for line in data.splitlines() if matcher.search(line))
        if lines > SYMBOL_LINES:
            return ""
    return pattern if lines else ""


def reads(paths: list[str], pattern: str = "") -> pb.Message:
    """The assistant message, authored by Workbench, whose calls read `paths` with read_file and
    search the workspace for `pattern` with grep ('' no search)."""
    message = pb.Message(role=pb.ROLE_ASSISTANT, author=pb.AUTHOR_WORKBENCH)
    for path in paths:
        message.tool_calls.add(id=new_call_id(), name="read_file", arguments=json.dumps({"path": path}))
    if pattern:
        message.tool_calls.add(id=new_call_id(), name="grep", arguments=json.dumps({"pattern": pattern}))
    return message


def task_again(task: str, message: pb.Message | None = None) -> str:
    """The line after the calls of `message` (reads, or a search, or both): the task once more (a
    long one only pointed at)."""
    names = {c.name for c in message.tool_calls} if message is not None else {"read_file"}
    what = {
        frozenset({"read_file"}): "are the files the task names",
        frozenset({"grep"}): "are the lines where the names the task gives occur",
        frozenset({"read_file", "grep"}): "are the files the task names and the lines where the names it gives occur",
    }[frozenset(names)]
    return (TASK_AGAIN if len(task) <= TASK_AGAIN_CHARS else TASK_AGAIN_LONG).format(what=what, task=task)
