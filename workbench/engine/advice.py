"""Work, not advice: a small model asked to change a file or run a command often answers with a
how-to (code blocks, numbered steps) and no call, and the run ends with nothing done (issue 38).
Such an answer gets one turn back, once a run: one line saying the model can do it itself, with
which tool, and a ready call where one follows from its own text (the command in its shell
block; an edit of the file it named, or else the task named, from the file's lines its block
changes; a new file's content). Never for a question, nor for a task that asks for no change or command.

Only for models litellm does not know (the `work_nudge` setting; decided by the loop). Pure
functions but `workspace_text`, which reads a file the reply named (a regular file inside the
workspace, at most READ_LIMIT bytes).
"""

from __future__ import annotations

import difflib
import json
import re
import shlex
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Any

from workbench.core.regular_files import read_regular
from workbench.engine.calls_as_xml import RESULT_NAMES

# a task asks for work when a sentence or clause starts with one of these (after "please", "can you")
_WORK_VERBS = (
    "add|append|apply|bump|change|convert|copy|correct|create|delete|edit|execute|fix|implement|insert|install|make|move|"
    "patch|refactor|remove|rename|repair|replace|rewrite|run|set|start|swap|update|write"
)
_WORK = re.compile(
    rf"(?:^|[.!?:;\n]\s*|,\s+|\band\s+|\bthen\s+)(?:please\s+|(?:can|could|would|will)\s+you\s+(?:please\s+)?)?"
    rf"(?P<verb>{_WORK_VERBS})\b(?!\s+(?:over|again|afresh|fresh|anew)\b)",  # "start over": a restart, no task
    re.IGNORECASE,
)
_CLAUSE_END = re.compile(r"[.!?;\n](?:\s|$)|,\s")
_QUESTION_START = re.compile(
    r"^\s*(?:how|what|why|which|where|when|who|whose|is|are|does|do|did|should|explain|describe)\b", re.IGNORECASE
)
_FENCE = re.compile(r"```([\w+-]*)[^\n]*\n(.*?)```", re.DOTALL)
_STEP = re.compile(r"^\s*(?:\d+[.)]|step \d+\b)", re.IGNORECASE | re.MULTILINE)
_INTERACTIVE = {"nano", "pico", "vi", "vim", "nvim", "emacs", "less", "more", "top", "htop"}
_SHELL = {"bash", "sh", "shell", "console", "zsh", "terminal", "cmd"}
# a file named in text (conf/app.toml, main.py, site.tar.gz): a word with an extension, not part of a
# longer path, a call or a dotted name (`os.path.join`, `os.path.exists(p)`: no file os.path)
FILE_NAME = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+(?:\.[\w-]+)*\.[A-Za-z]\w{0,7})(?![\w/(]|\.\w)")
_NUMBERED = re.compile(r"^ *(\d+)\t")  # a line as read_file shows it: its number, a tab
_COMMENT = re.compile(r"^\s*(?:#|//|--|;)")
READ_LIMIT = 200_000  # bytes of a named file read to find the lines a block rewrites
_READY_CALL = re.compile(r'\{"name": "[\w.-]+", "arguments": \{')
LINE_LIKENESS = 0.6  # a changed numbered line is that line edited when at least this alike (difflib)
COMMAND_CHARS = 400  # a longer shell block is not offered as one ready call
# a change the reply states in its prose: "change `A` to `B`", "replace `A` with `B`"
_PAIR = re.compile(r"`([^`\n]+)`\s+(?:to|with|into|by|->|→|=>)\s+`([^`\n]+)`")
# a sed substitution anywhere in the reply (a how-to wrapped it in a tmux line): s/A/B/
_SED = re.compile(r"""(?<=['"\s])s([/|#])((?:\\.|(?!\1)[^\n])+)\1((?:\\.|(?!\1)[^\n])*)\1g?(?=['"\s])""")
_RESULT_BODY = re.compile(rf"<({RESULT_NAMES})\b[^>]*>(.*?)</\1>", re.DOTALL)
_SED_ESCAPE = re.compile(r"\\([/|#.])")
_REGEX_CHARS = re.compile(r"[\\*+?\[\]^$(){}|&]")

LINE_RUN = "You can run this yourself, and the task asks you to: make the call now, {call}"
LINE_EDIT = "You can make this change yourself, and the task asks you to: make the call now, {call}"
LINE_TOOL = (
    "You can make this change yourself, and the task asks you to: call {tools} now instead of describing the change."
)


def asks_for_work(task: str) -> bool:
    """Whether the task asks for a change or a command (a clause that starts with a verb like fix,
    rename, run, create); never a question (a task that starts with how, what, why, is, ...)."""
    return not _QUESTION_START.match(task) and _WORK.search(task) is not None


def work_verbs(task: str) -> list[str]:
    """The verbs of change or command the task's clauses start with, lower case ([] for a question)."""
    return [] if _QUESTION_START.match(task) else [m.group("verb").lower() for m in _WORK.finditer(task)]


def work_clauses(task: str) -> list[str]:
    """Each clause of the task that starts with a verb of change or command, from the verb to the
    clause's end or the next such clause ("Fix slug.py so the check passes")."""
    clauses = []
    matches = list(_WORK.finditer(task))
    for match, following in zip(matches, [*matches[1:], None], strict=True):
        end = _CLAUSE_END.search(task, match.end("verb"))
        stop = min(end.start() if end else len(task), following.start() if following else len(task))
        clauses.append(task[match.start("verb") : stop].rstrip())
    return clauses


def is_advice(text: str) -> bool:
    """Whether a reply is a how-to: it holds a code block or two numbered steps."""
    return bool(_FENCE.search(text)) or len(_STEP.findall(text)) >= 2


def _shell_command(text: str, tools: Collection[str] = ()) -> str:
    """The command of the reply's shell blocks, in order ($ prompts and comments dropped, a line
    repeated once, lines joined with &&); '' when it has none, or one too long to offer. A line
    that starts with a tool's name (`read_file greet.py`: a 1.5B model wrote its tools as
    commands) is no command and is dropped, and so is an editor or pager that waits for a person
    (`nano greet.py` before its sed). A `bash -c '...'` line is the line it runs. Every block
    counts: a how-to gave its rename of three files as one sed in a first block and two in a second."""
    commands: list[str] = []
    for lang, body in _FENCE.findall(text):
        lines = [line.strip() for line in body.splitlines()]
        if lang.lower() not in _SHELL and not (lines and lines[0].startswith("$ ")):
            continue
        block = [line.removeprefix("$ ").strip() for line in lines if line and not line.startswith("#")]
        block = [_unwrapped(line) or line for line in block]
        commands += [c for c in block if (first := c.split(maxsplit=1)[0]) not in tools and first not in _INTERACTIVE]
    command = " && ".join(dict.fromkeys(commands))
    return command if len(command) <= COMMAND_CHARS else ""


def _edit(current: str, block: str) -> tuple[str, str] | None:
    """The file's lines a block rewrites, as (old_text, new_text): from the one file line equal to
    the block's first line to the next one equal to its last line (or, when the block changed its
    last line, as many lines as the block has); None when the block does not sit in the file or
    changes nothing there."""
    new = block.strip("\n").splitlines()
    if len(new) < 2:
        return None
    lines = current.splitlines()
    first = [i for i, line in enumerate(lines) if line.strip() and line.strip() == new[0].strip()]
    if len(first) != 1:
        return None
    start = first[0]
    ends = [i for i in range(start + 1, len(lines)) if lines[i].strip() and lines[i].strip() == new[-1].strip()]
    end = ends[0] if ends else min(start + len(new), len(lines)) - 1
    old_text = "\n".join(lines[start : end + 1])
    new_text = "\n".join(new)
    return (old_text, new_text) if old_text != new_text else None


def _rewrite(current: str, block: str) -> tuple[str, str] | None:
    """When the block is the file, or a run of its lines, with some lines changed one for one (its
    first line may be among them): those lines of the file and the block's for them, as (old_text,
    new_text), widened by the file's lines around them until old_text is once in the file. The
    block sits where the most of its other lines equal the file's (ignoring indentation), at least
    half of them; None when that place is not one, or nothing changes there. A block that adds or
    drops lines is not placed (an edit of it would be a guess)."""
    lines, new = current.splitlines(), block.strip("\n").splitlines()
    if not new or len(new) > len(lines):
        return None
    best, places = 0, []
    for offset in range(len(lines) - len(new) + 1):
        same = sum(lines[offset + k].strip() == new[k].strip() for k in range(len(new)))
        if same > best:
            best, places = same, [offset]
        elif same == best:
            places.append(offset)
    if len(places) != 1 or best == len(new) or best * 2 < len(new):
        return None
    offset = places[0]
    changed = [k for k in range(len(new)) if lines[offset + k].strip() != new[k].strip()]
    first, last = offset + changed[0], offset + changed[-1] + 1
    middle = [  # unchanged lines as the file has them
        old if old.strip() == line.strip() else _in_place(old, line)
        for old, line in ((lines[offset + k], new[k]) for k in range(changed[0], changed[-1] + 1))
    ]
    return _widened(current, lines, first, last, middle)


def _numbered_edit(current: str, block: str) -> tuple[str, str] | None:
    """For a block of read_file's numbered lines (its last copy when the numbers start again): the
    file's lines at those numbers that the block changed, as (old_text, new_text), widened by the
    lines around them until old_text is once in the file; None when it is no such block, changes
    nothing, or a changed line does not resemble the file's line of its number (another line,
    numbered by a guess). A one-line copy is placed by its number alone (seen: `1\tMESSAGE =
    'Howdy, %s!'` under "# After modification")."""
    if _unnumbered(block) == block:
        return None
    copy = {int(m.group(1)): _NUMBERED.sub("", line) for line in _last_copy(block) if (m := _NUMBERED.match(line))}
    lines = current.splitlines()
    if max(copy) > len(lines) or min(copy) < 1:
        return None
    changed = sorted(n for n, line in copy.items() if line.strip() != lines[n - 1].strip())
    if not changed or any(
        difflib.SequenceMatcher(None, lines[n - 1].strip(), copy[n].strip()).ratio() < LINE_LIKENESS for n in changed
    ):
        return None
    middle = [
        _in_place(lines[n - 1], copy[n]) if n in changed else lines[n - 1] for n in range(changed[0], changed[-1] + 1)
    ]
    return _widened(current, lines, changed[0] - 1, changed[-1], middle)


def _in_place(old: str, line: str) -> str:
    """A changed line as it goes into the file: written without indentation, it keeps the file's."""
    return old[: len(old) - len(old.lstrip())] + line if line == line.lstrip() else line


def _widened(current: str, lines: list[str], first: int, last: int, middle: list[str]) -> tuple[str, str] | None:
    """(old_text, new_text) for replacing lines[first:last] by `middle`, widened by the file's lines
    around them until old_text is once in the file (None: never)."""
    start, end = first, last
    while True:
        old_text = "\n".join(lines[start:end])
        if current.count(old_text) == 1:
            return old_text, "\n".join(lines[start:first] + middle + lines[last:end])
        if start == 0 and end == len(lines):
            return None
        start, end = max(start - 1, 0), min(end + 1, len(lines))


def _last_copy(block: str) -> list[str]:
    """The block's lines from where read_file's line numbers last start again (all of them when
    the numbers never do)."""
    raw = block.splitlines()
    numbers = [(i, int(m.group(1))) for i, line in enumerate(raw) if (m := _NUMBERED.match(line))]
    restarts = [i for (i, n), (_, before) in zip(numbers[1:], numbers, strict=False) if n <= before]
    return raw[restarts[-1] :] if restarts else raw


def _unnumbered(block: str) -> str:
    """The block without read_file's line numbers, when every line but comments has one (a model
    copied its `     3\ttext` lines into its code); a comment line without a number is the
    model's own ("# Modified content of greet.py": a line of the file would have its number) and
    goes too. Numbers that start again (`# Before` 1, 2, then `# After` 1, 2) are copies of the
    same lines: the last copy is the block (seen: both in one block, read as one, made a ready
    edit that doubled the line)."""
    lines = [line for line in block.splitlines() if line.strip()]
    numbered = [line for line in lines if _NUMBERED.match(line)]
    if not numbered or any(not _NUMBERED.match(line) and not _COMMENT.match(line) for line in lines):
        return block
    kept = [_NUMBERED.sub("", line) for line in _last_copy(block) if _NUMBERED.match(line) or not line.strip()]
    return "\n".join(kept).strip("\n") + ("\n" if block.endswith("\n") else "")


def commands_written_as_run(text: str, tools: Collection[str], is_program: Callable[[str], bool]) -> str:
    """The command lines a reply wrote inside result tags as if they had run, in order, joined
    with && (seen: `<tool_response>\n    mkdir build\n</tool_response>`, then "both commands were
    executed successfully" with none run): a tag's body counts when each of its lines starts with
    a program (`is_program`) that is no tool's name; '' none, or too long to offer."""
    commands: list[str] = []
    for lines in _result_tag_lines(text):
        if all((first := line.split(maxsplit=1)[0]) not in tools and is_program(first) for line in lines):
            commands += lines
    command = " && ".join(dict.fromkeys(commands))
    return command if len(command) <= COMMAND_CHARS else ""


def _result_tag_lines(text: str) -> list[list[str]]:
    """The lines of each result tag's body in the text (`$ ` prompts dropped, `bash -c '...'` read
    as the line it runs), the empty ones left out."""
    bodies = [[line.strip().removeprefix("$ ") for line in body.splitlines()] for _, body in _RESULT_BODY.findall(text)]
    return [[_unwrapped(line) or line for line in lines if line] for lines in bodies if any(lines)]


def _unlabelled(block: str) -> str:
    """The block without a first line that is a comment naming a file (`# greet.py`, `// File:
    app.js`): the model's label over a copy of the file, not one of its lines (seen: a label over
    the unchanged file made a ready edit that added it)."""
    first, _, rest = block.lstrip("\n").partition("\n")
    return rest if _COMMENT.match(first) and FILE_NAME.search(first) and rest.strip() else block


def _unchanged(current: str, block: str) -> bool:
    """Whether the block's lines, blank lines left out and indentation ignored, are a run of the
    file's lines: a copy of the file as it is (seen: the unchanged file shown with one blank line
    fewer, placed as an edit that dropped it)."""
    new = [line.strip() for line in block.splitlines() if line.strip()]
    lines = [line.strip() for line in current.splitlines() if line.strip()]
    return bool(new) and any(lines[i : i + len(new)] == new for i in range(len(lines) - len(new) + 1))


def _stated_pairs(text: str) -> list[tuple[str, str]]:
    """The replacements the reply's text states, in order: "change `A` to `B`" and
    sed's s/A/B/ (a plain text A: no pattern but an escaped delimiter or dot; no & or group in B)."""
    pairs: list[tuple[str, str]] = _PAIR.findall(text)
    for _, old, new in _SED.findall(text):
        old, new = _SED_ESCAPE.sub(r"\1", old), _SED_ESCAPE.sub(r"\1", new)
        if not _REGEX_CHARS.search(old) and not _REGEX_CHARS.search(new):
            pairs.append((old, new))
    return [(a, b) for a, b in dict.fromkeys(pairs) if a.strip() and a != b]


def _pair_edit(text: str, files: Mapping[str, str | None]) -> tuple[str, str, str] | None:
    """The first stated replacement whose old text is in exactly one of the files, once: (path,
    old_text, new_text); None when none is (a name in several files is a rename, not one edit)."""
    for old, new in _stated_pairs(text):
        holders = [(path, current) for path, current in files.items() if current is not None and old in current]
        if len(holders) == 1 and holders[0][1].count(old) == 1:
            return holders[0][0], old, new
    return None


def workspace_text(workspace: Path, path: str) -> str | None:
    """The text of `path` under `workspace`; None when it is no regular file there (or is larger
    than READ_LIMIT, or outside the workspace)."""
    root = workspace.resolve()
    target = (root / path).resolve()
    if not target.is_relative_to(root):
        return None
    try:
        data = read_regular(target, READ_LIMIT + 1)
    except OSError:
        return None
    return data.decode("utf-8", errors="replace") if len(data) <= READ_LIMIT else None


def ready_call(name: str, arguments: Mapping[str, Any]) -> str:
    """A call written out for a line to offer, as the model would send it in text."""
    return json.dumps({"name": name, "arguments": dict(arguments)}, ensure_ascii=False)


def has_ready_call(line: str) -> bool:
    """Whether a line offers a ready call (one `ready_call` wrote)."""
    return _READY_CALL.search(line) is not None


def offered_command_sent(line: str, reply: str, tools: Collection[str]) -> str:
    """The command of the ready bash call `line` offered, when the reply's shell blocks, or else
    its result tags, hold just that command ('' otherwise): the model sent the call in its own way
    (seen: offered `mkdir build && cp app.ini build/`, the 1.5B model answered with that line in a
    ```bash block, no call; offered a sed line, it answered `<tool_response>bash -c "..."`)."""
    match = _READY_CALL.search(line)
    if match is None:
        return ""
    try:
        offered, _ = json.JSONDecoder().raw_decode(line, match.start())
    except ValueError:
        return ""
    command = offered.get("arguments", {}).get("command") if offered.get("name") == "bash" else None
    if not isinstance(command, str) or not command:
        return ""
    written = " && ".join(dict.fromkeys(line for lines in _result_tag_lines(reply) for line in lines))
    return command if command in (_shell_command(reply, tools), written) else ""


def _unwrapped(command: str) -> str:
    """The command line a `bash -c '...'` (sh, zsh) runs; '' for any other command (seen: the
    offered sed line sent back as `bash -c "sed ... && sed ..."`)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return ""
    return words[2] if len(words) == 3 and words[0] in ("bash", "sh", "zsh") and words[1] == "-c" else ""


def nudge(
    text: str, tools: Collection[str], read: Callable[[str], str | None], task: str = "", task_command: str = ""
) -> str:
    """The one line after a how-to: with a ready call where the reply's own text gives one. `read`
    gives a workspace file's text (None: no such file); the files the reply names come first,
    then the existing ones the task names (a reply with the whole new file and no name).
    `task_command`, the command the task itself gives (one it quotes and only asks to run; the
    sed line of a rename it asks for), is the ready call before any of the reply's (its how-to
    ran a variant: `export X=1 && python3 deploy.py`; offered a `git commit` as the rename).
    A block that is the file as it is (under a `# name.py` label, blank lines aside) gives no
    edit; a replacement the reply states ("change `A` to `B`", sed's s/A/B/) does, when A is
    once in one of those files."""
    command = task_command or _shell_command(text, tools)
    if command and "bash" in tools:
        return LINE_RUN.format(call=ready_call("bash", {"command": command}))
    bodies = [body for lang, body in _FENCE.findall(text) if lang.lower() not in _SHELL]
    blocks = [_unlabelled(_unnumbered(body)) for body in bodies]
    paths = {path: read(path) for path in dict.fromkeys(FILE_NAME.findall(text))}
    for path in dict.fromkeys(FILE_NAME.findall(task)):
        if path not in paths and (current := read(path)) is not None:
            paths[path] = current
    for path, current in paths.items():  # an existing file first: the lines its block rewrites
        if current is None or "edit_file" not in tools:
            continue
        for body, block in zip(bodies, blocks, strict=True):
            if _unchanged(current, block):
                continue
            if edit := _numbered_edit(current, body) or _edit(current, block) or _rewrite(current, block):
                call = ready_call("edit_file", {"path": path, "old_text": edit[0], "new_text": edit[1]})
                return LINE_EDIT.format(call=call)
    if "edit_file" in tools and (stated := _pair_edit(text, paths)):  # "change `A` to `B`", s/A/B/
        call = ready_call("edit_file", {"path": stated[0], "old_text": stated[1], "new_text": stated[2]})
        return LINE_EDIT.format(call=call)
    # a new file is one the task or the reply's prose names, not a name in its code (seen: `os.path`)
    named = set(FILE_NAME.findall(_FENCE.sub(" ", text))) | set(FILE_NAME.findall(task))
    new_files = [path for path, current in paths.items() if current is None and path in named]
    if new_files and len(blocks) == 1 and "write_file" in tools:  # a new file: the one block is its content
        return LINE_EDIT.format(call=ready_call("write_file", {"path": new_files[0], "content": blocks[0]}))
    offered = [t for t in ("edit_file", "write_file", "bash") if t in tools]
    return LINE_TOOL.format(tools=" or ".join(offered)) if offered else ""


__all__ = [
    "asks_for_work",
    "commands_written_as_run",
    "has_ready_call",
    "is_advice",
    "nudge",
    "offered_command_sent",
    "ready_call",
    "work_clauses",
    "work_verbs",
    "workspace_text",
]
