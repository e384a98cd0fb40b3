"""The rest of the task: a small model asked for two things often does the first and answers with
it ("The mkdir command was successful", the copy left undone), or changes the code and answers
without running the command the task gave to check it (issue 38: one_command 6 of 6 finished runs
in the 2026-12-02 eval). Such an answer, in a run where a change was made, gets one line back, once
a run (shared with the other lines, turn_back.py):
- the task asks to change a file the workspace has (undone.named_file: net.toml in "Set the timeout
  in net.toml to 30") and no change of the run touched it: the model wrote a lookalike under an
  invented folder (src/config/net.toml) and said net.toml was updated (set_a_value, both runs of
  seed 1, 2026-12-07); the line names the file and the changes made, with the way to change it;
- the task has more clauses of work than the run made changes: the clauses are listed beside the
  changes made, and the model is asked to do what is left or to say that all of it is done;
- the task asks to rename a code name to another ("Rename the function area_of to circle_area")
  and files a grep of the run showed the old name in still hold it: the model renamed the import
  lines and the definition and left the calls (rename_across_files, 2026-12-07); the line names
  those files, with the ready sed line (undone.rename_left);
- else the task quotes a command (`python3 check_slug.py`, a program the machine has) that has not
  run since the run's last change: the model is asked to run it, with the ready call.

Only for models litellm does not know (the `rest_check` setting; decided by the loop), only for a
task that asks for work (advice.work_clauses), and only when a changing call succeeded (with none,
undone.py speaks). A run where the guard refused a call gets no line. Pure functions: whether a
word names a program is asked through `is_program`, the workspace's files through `read`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Collection, Sequence

from workbench.engine.advice import ready_call, work_clauses
from workbench.engine.claims import arguments, changing_calls, reads
from workbench.engine.undone import Read, named_file, rename_left, way_to_change
from workbench.pb import workbench_pb2 as pb
from workbench.terminal.shell_parse import opaque, parse

Calls = Sequence[tuple[pb.ToolCall, pb.ToolResult]]
IsProgram = Callable[[str], bool]

_QUOTED = re.compile(r"`([^`\n]{2,200})`")
_NEGATED = re.compile(r"\b(?:not|never|without|don't|do not|avoid)\b[^.;!?`]{0,40}$", re.IGNORECASE)
_WORD = re.compile(r"^(?:\./)?[\w.+-]+(?:/[\w.+-]+)*$")
CHANGE_CHARS = 60  # of each change named in the line

LINE_PARTS = (
    "The task asks for {n} things: {clauses}. This run made {k} change{s}: {changes}. "
    "Do what is left now, or, if all of it is done, say so."
)
LINE_FILE = (
    "The task asks to change {path}, and no change of this run touched it (its changes: {changes}). "
    "Change {path} itself now{how}, or, if it needs no change, say why."
)
LINE_RENAME = (
    "The task asks to rename {old} to {new}, and {old} is still in {paths} (this run's changes: {changes}). "
    "Rename it there too now: {call}"
)
LINE_CHECK = (
    "The task gives a command, `{command}`, and it has not run since your last change ({change}). "
    "Run it now to see whether the task is done: {call}"
)


def task_commands(task: str, is_program: IsProgram) -> list[str]:
    """The commands the task quotes in backticks: a span whose first word is a program the machine
    has (or ./something), and not one the task says not to run ("do not run `make deploy`")."""
    found = []
    for match in _QUOTED.finditer(task):
        span = " ".join(match.group(1).split())
        first = span.split(" ", 1)[0]
        if not _WORD.match(first) or not (first.startswith("./") or is_program(first)):
            continue
        if _NEGATED.search(task[max(match.start() - 60, 0) : match.start()]):
            continue
        found.append(span)
    return list(dict.fromkeys(found))


def _change(call: pb.ToolCall) -> str:
    args = arguments(call)
    target = args.get("command") if call.name == "bash" else args.get("path")
    text = f"{call.name} {' '.join(str(target).split())}" if isinstance(target, str) else call.name
    return text if len(text) <= CHANGE_CHARS else text[: CHANGE_CHARS - 3] + "..."


def _changes(call: pb.ToolCall) -> int:
    """How many changes a successful changing call made: one, or for a bash line, each of its
    commands that does not only read (`mkdir build && cp app.ini build/` made two)."""
    command = str(arguments(call).get("command", ""))
    if call.name != "bash" or opaque(command):
        return 1
    return max(sum(1 for pipeline in parse(command) for c in pipeline if not reads(c)), 1)


def touches(call: pb.ToolCall, path: str, workspace: str) -> bool:
    """Whether a successful changing call may have changed the workspace file `path`: a file tool's
    path that is that file, or a bash line with a command that names it and does not only read (a
    line made at run time may have changed anything)."""
    target = os.path.normpath(os.path.join(workspace, path))

    def same(word: str) -> bool:
        return os.path.normpath(os.path.join(workspace, word)) == target

    args = arguments(call)
    if call.name != "bash":
        named = args.get("path")
        return not isinstance(named, str) or same(named)
    command = str(args.get("command", ""))
    if opaque(command):
        return True
    commands = [c for pipeline in parse(command) for c in pipeline if not reads(c)]
    return any(same(word) for c in commands for word in (*c.words[1:], *c.redirects))


def _runs(call: pb.ToolCall, command: str) -> bool:
    return call.name == "bash" and command in " ".join(str(arguments(call).get("command", "")).split())


def not_run(task: str, calls: Calls, is_program: IsProgram) -> str:
    """The first command the task quotes (task_commands) that no bash call of the run ran ('' none)."""
    return next((c for c in task_commands(task, is_program) if not any(_runs(call, c) for call, _ in calls)), "")


def line(
    task: str,
    calls: Calls,
    changing: Collection[str],
    tools: Collection[str],
    is_program: IsProgram,
    read: Read,
    workspace: str,
) -> str:
    """The one line for an answer that ends a run with part of its task left ('' none). `workspace`
    is the folder the calls' relative paths start from."""
    if any("guard_refused" in result.metadata for _, result in calls):
        return ""
    made = [
        (i, call)
        for i, (call, result) in enumerate(calls)
        if not result.is_error and changing_calls([(call, result)], changing)
    ]
    if not made:
        return ""
    changes = "; ".join(_change(call) for _, call in made)
    target = named_file(task, read)
    if target and not any(touches(call, target, workspace) for _, call in made):
        return LINE_FILE.format(path=target, changes=changes, how=way_to_change(target, calls, tools))
    if "bash" in tools and (left := rename_left(task, calls, read)) and left.command:
        ready = ready_call("bash", {"command": left.command})
        return LINE_RENAME.format(old=left.old, new=left.new, paths=", ".join(left.paths), changes=changes, call=ready)
    clauses, count = work_clauses(task), sum(_changes(call) for _, call in made)
    if len(clauses) > count:
        listed = "; ".join(" ".join(c.split()) for c in clauses)
        return LINE_PARTS.format(n=len(clauses), clauses=listed, k=count, s="" if count == 1 else "s", changes=changes)
    if "bash" not in tools:
        return ""
    last, last_call = made[-1]
    for command in task_commands(task, is_program):
        if not any(_runs(call, command) for call, _ in calls[last:]):
            ready = ready_call("bash", {"command": command})
            return LINE_CHECK.format(command=command, change=_change(last_call), call=ready)
    return ""


__all__ = ["LINE_CHECK", "LINE_FILE", "LINE_PARTS", "LINE_RENAME", "line", "not_run", "task_commands", "touches"]
