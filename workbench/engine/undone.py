"""Work asked for, none done: a small model asked to change something often ends its run with a
stated fact ("The slug function works correctly", "The build folder does not exist") or its last
tool error echoed back, with nothing changed (issue 38: the habit seen most). Such an answer gets
one turn back, once a run: the task asks for a change and none was made, with a ready call where
one follows from the run (a failed change's call corrected: the path its error suggested, or its
own edit carried onto the file's real lines; the commands the answer wrote inside result tags as
if they had run; for a task to rename a code name, the sed line renaming it in the files a grep
of the run showed it in; the command the task quotes when it has not run (its output shows what
fails); else a read of the file the task names).

Only for models litellm does not know (the `undone_check` setting; decided by the loop), only for
a task that asks for work (advice.asks_for_work, never a question), and only when no call that
could change something succeeded: a bash command that only reads (ls, cat, grep, ...) changes
nothing; for a task that only asks to run a command, a command that ran (whatever its exit
status) is the work. A run where the guard refused a call (the person denied it, a rule blocked
it) gets no line: the model is not pushed past the person. Pure functions: the workspace is read
through the `read` callable.
"""

from __future__ import annotations

import difflib
import re
import shlex
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from workbench.engine.advice import FILE_NAME, ready_call, work_clauses
from workbench.engine.claims import arguments, changing_calls
from workbench.pb import workbench_pb2 as pb
from workbench.tools.files.edit import REGION_FLOOR, closest_region

Calls = Sequence[tuple[pb.ToolCall, pb.ToolResult]]
Read = Callable[[str], str | None]

_EDITS = re.compile(  # verbs that change a file in place (not make, create, move, delete, run)
    r"(?:add|apply|bump|change|convert|correct|edit|fix|implement|insert|patch|refactor|remove|rename|repair|"
    r"replace|rewrite|set|swap|update)\b",
    re.IGNORECASE,
)
_RUN_VERBS = re.compile(r"^(?:run|execute|start)$", re.IGNORECASE)
_DID_YOU_MEAN = re.compile(r"did you mean ([^\s?]+)\? Send")
_TOKENS = re.compile(r"\w+|\s+|[^\w\s]")
# "Rename (the function) area_of to circle_area": two code names (a file's rename has a dot)
_RENAME = re.compile(
    r"\brename\s+(?:(?:the|a|an)\s+)?(?:\w+\s+)?`?([A-Za-z_]\w*)`?\s+(?:to|as|into)\s+`?([A-Za-z_]\w*)`?(?![\w.])",
    re.IGNORECASE,
)
_GREP_LINE = re.compile(r"^([^:\n]+):\d+:(.*)$", re.MULTILINE)
RENAME_CHARS = 400  # a longer rename command is not offered
CONTEXT_TOKENS = 6  # tokens of context a carried change may take to sit once in the file's lines

LINE = (
    "The task asks for a change, and none was made: no call in this run changed anything{failed}. "
    "Make the change now{how}, or, if it cannot be done, say why."
)
NOT_RUN = " (the commands your reply wrote inside result tags did not run: a command runs only as a bash call)"
LINE_RUN = (
    "The task asks you to run a command, and none ran in this run{failed}. Run it now with bash{call}, "
    "or, if it cannot be done, say why."
)


def only_runs(verbs: Sequence[str]) -> bool:
    """Whether the task's work verbs (advice.work_verbs) are all run, execute or start."""
    return bool(verbs) and all(_RUN_VERBS.match(v) for v in verbs)


def _ran(result: pb.ToolResult) -> bool:
    """A bash call that ran its command: it succeeded, or exited with a status (not 126/127: not run)."""
    status = result.metadata["exit_code"] if "exit_code" in result.metadata else None
    return not result.is_error or (isinstance(status, (int, float)) and int(status) not in (126, 127))


def did_work(calls: Calls, changing: Collection[str], run_only: bool) -> bool:
    """Whether a call of the run could have done the work: a changing call that succeeded (a bash
    command that only reads is none); for a task that only asks to run a command, a command that ran."""
    if run_only:
        return any(call.name == "bash" and _ran(result) for call, result in calls)
    return any(not result.is_error for _, result in changing_calls(calls, changing))


def _carried(old: str, new: str, lines: str) -> str | None:
    """`lines` with the change from `old` to `new` made in them: each changed piece of old, with up
    to CONTEXT_TOKENS tokens around it, found once in `lines`; None when one is not, or nothing changes."""
    a, b = _TOKENS.findall(old), _TOKENS.findall(new)
    result = lines
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        for grow in range(CONTEXT_TOKENS + 1):
            left, right = max(i1 - grow, 0), min(i2 + grow, len(a))
            piece = "".join(a[left:right])
            if piece.strip() and result.count(piece) == 1:
                result = result.replace(piece, "".join(a[left:i1]) + "".join(b[j1:j2]) + "".join(a[i2:right]), 1)
                break
        else:
            return None
    return result if result != lines else None


def corrected(call: pb.ToolCall, result: pb.ToolResult, read: Read) -> str:
    """A failed change's call made right, ready to send ('' when none follows): the path its error
    suggested ("did you mean X?"), or an edit's own change carried onto the file's closest lines."""
    args = arguments(call)
    path = args.get("path")
    if suggested := _DID_YOU_MEAN.search(result.error):
        if isinstance(path, str) and call.name in ("edit_file", "write_file"):
            return ready_call(call.name, {**args, "path": suggested.group(1)})
    old, new = args.get("old_text"), args.get("new_text")
    if call.name != "edit_file" or not (isinstance(path, str) and isinstance(old, str) and isinstance(new, str)):
        return ""
    text = read(path)
    if not text or not old.strip() or old in text:
        return ""
    region = closest_region(text, old)
    if region is None or region.similarity < REGION_FLOOR:
        return ""
    found = "\n".join(text.splitlines()[region.first - 1 : region.last])
    changed = _carried(old, new, found)
    if changed is None or text.count(found) != 1:
        return ""
    return ready_call("edit_file", {"path": path, "old_text": found, "new_text": changed})


@dataclass(frozen=True)
class RenameLeft:
    """A rename the task asks for (`old` to `new`, code names) and the files that still hold `old`."""

    old: str
    new: str
    paths: tuple[str, ...]

    @property
    def command(self) -> str:
        """The sed line renaming `old` as a whole word in those files ('' when too long to offer)."""
        line = f"sed -i 's/\\b{self.old}\\b/{self.new}/g' " + " ".join(shlex.quote(p) for p in self.paths)
        return line if len(line) <= RENAME_CHARS else ""


def rename_left(task: str, calls: Calls, read: Read) -> RenameLeft | None:
    """For a task that asks to rename one code name to another ("Rename the function area_of to
    circle_area everywhere"): the files a grep of the run showed the old name in that still hold
    it as a whole word; None when the task asks no such rename or none is left (seen: the 1.5B
    model, shown those lines with the task, said "the function names are already consistent";
    another renamed the import lines and the definition and left the calls)."""
    asked = _RENAME.search(task)
    if asked is None or asked.group(1) == asked.group(2):
        return None
    old, new = asked.groups()
    word = re.compile(rf"\b{re.escape(old)}\b")
    paths: list[str] = []
    for call, result in calls:
        if call.name != "grep" or result.is_error:
            continue
        for path, text in _GREP_LINE.findall(result.output):
            if word.search(text) and path not in paths and (current := read(path)) and word.search(current):
                paths.append(path)
    return RenameLeft(old, new, tuple(paths)) if paths else None


def rename_command(task: str, calls: Calls, read: Read) -> str:
    """The ready sed line of the rename the task asks for and the run left (rename_left); '' none."""
    left = rename_left(task, calls, read)
    return left.command if left else ""


def named_file(task: str, read: Read) -> str:
    """The workspace file the task asks to change in place: the first existing file named in a
    clause that starts with an editing verb ("Fix slug.py so ..."), else the one existing file a
    task with such a verb names ("In greet.py, change ..."); '' none (a task to make or copy files)."""
    clauses = [c for c in work_clauses(task) if _EDITS.match(c)]
    for clause in clauses:
        for path in FILE_NAME.findall(clause):
            if read(path) is not None:
                return str(path)
    existing = [p for p in dict.fromkeys(FILE_NAME.findall(task)) if read(p) is not None]
    return existing[0] if clauses and len(existing) == 1 else ""


def line(
    task: str,
    verbs: Sequence[str],
    calls: Calls,
    changing: Collection[str],
    tools: Collection[str],
    read: Read,
    command: str = "",
    written: str = "",
    check: str = "",
) -> str:
    """The one line for an answer that ends a run asking for work with none done ('' when work was
    done, or no tool that could do it is offered); `command`, the one the task quotes, is the
    ready bash call of a task that only asks to run something; `written`, the commands the answer
    wrote inside result tags as if they had run (advice.commands_written_as_run), the ready bash
    call after it, said not to have run; `check`, a command the task quotes that the run has not
    run, the ready bash call to start with when no failed call gives one (its output shows what
    fails: seen, told to edit slug.py, the 1.5B model asked what to change)."""
    run_only = only_runs(verbs)
    if did_work(calls, changing, run_only) or any("guard_refused" in result.metadata for _, result in calls):
        return ""  # work done, or the person (or a rule) stopped a call: not for the model to retry unasked
    if not any(t in tools for t in (("bash",) if run_only else ("edit_file", "write_file", "bash"))):
        return ""
    failed = [(call, result) for call, result in changing_calls(calls, changing) if result.is_error]
    said = ""
    if failed:
        call, result = failed[-1]
        error = " ".join(result.error.split())
        said = f" (your last try, {call.name}, failed: {error[:117] + '...' if len(error) > 120 else error})"
    written = written if "bash" in tools else ""  # commands are offered only with bash
    if written and not failed:
        said = NOT_RUN
    if run_only:
        ready_command = command or written
        return LINE_RUN.format(
            failed=said, call=f": {ready_call('bash', {'command': ready_command})}" if ready_command else ""
        )
    how = ""
    if ready := next((r for c, res in reversed(failed) if (r := corrected(c, res, read))), ""):
        how = f", starting with {ready}"
    elif "bash" in tools and (bash_line := written or rename_command(task, calls, read) or check):
        how = f", starting with {ready_call('bash', {'command': bash_line})}"
    elif path := named_file(task, read):
        how = way_to_change(path, calls, tools)
    if not how:  # the tools by name (seen: told only "Make the change now", the 1.5B model said the task back)
        how = " with a call to " + " or ".join(t for t in ("edit_file", "write_file", "bash") if t in tools)
    return LINE.format(failed=said, how=how)


def way_to_change(path: str, calls: Calls, tools: Collection[str]) -> str:
    """How to change a file the task names, as the end of "Make the change now...": starting with
    its ready read_file call when the run has not read it, else with edit_file on it ('' neither)."""
    was_read = any(c.name == "read_file" and arguments(c).get("path") == path and not r.is_error for c, r in calls)
    if not was_read and "read_file" in tools:
        return f", starting with {ready_call('read_file', {'path': path})}"
    if "edit_file" in tools:
        return f" with edit_file on {path} (old_text copied exactly from the file)"
    return ""


__all__ = [
    "LINE",
    "LINE_RUN",
    "RenameLeft",
    "corrected",
    "did_work",
    "line",
    "named_file",
    "only_runs",
    "rename_command",
    "rename_left",
    "way_to_change",
]
