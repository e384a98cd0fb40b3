"""Repeated tool calls within one run: reminders, "you already have this result", and a stop.

A call is keyed by its tool and its parsed arguments (canonical JSON: key order and spacing
do not matter), so a pretty-printed first call and compact later ones are the same call; what
cannot change the outcome is normalized too: a number's spelling (120 and 120.0), whitespace at
the ends of a bash command, and the path of a file tool as the file it names (`./a.txt`,
`a.txt`, its absolute path, `sub/../a.txt`; an absent `path` of ls, glob, grep is ".").
A call's loose key also drops its numbers and collapses whitespace in its texts: calls with one
loose key and one outcome are nearly the same call made again (docs/DECISIONS.md).

- A failing call that failed the same way before, with nothing changed since, gets a
  reminder from its REMIND_AFTER-th failure on.
- A call that returns exactly what the same call returned earlier in the run gets a note
  that the model already has that result, and from which turn.
- After STOP_AFTER consecutive failures of one call with no successful call of a tool that
  can change something (write_file, edit_file, bash, tmux, ...: a tool not marked read-only)
  in between, the call is not run again: its result says so.
- A call that already returned the same result twice, with no successful changing call of
  another kind since, is not run a third time: its result points at the one the model has
  (small models re-run a call whose result they have instead of answering: docs/DECISIONS.md).
- A call made `repeat_stop` times in a row (by its loose key: a timeout of 120, then 121) with
  the same outcome each time (the same result, the same failure, or refused as above) and
  nothing changed in between is looping: the loop
  stops the agent before it runs again and asks the person (`looping`; docs/DECISIONS.md says
  why 3).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Collection
from pathlib import Path
from typing import Any

from workbench.pb import workbench_pb2 as pb

REMIND_AFTER = 3  # the third identical failing call gets a reminder
STOP_AFTER = 4  # after this many identical failures with nothing changed, the call is not run again
REMINDER = (
    "Reminder: this exact call (same tool, same arguments) has now failed {n} times with nothing changed "
    "in between. Do not repeat it; change the arguments or take another approach."
)
ALREADY = (
    "Note: you already have this result: the same call (same tool, same arguments) returned exactly this "
    "at {when}. Calling it again will not change it; use that result: if it answers the task, "
    "answer now without a tool call."
)
SAME_AGAIN = (
    "not run: this exact call (same tool, same arguments) returned the same result twice, at {when}, "
    "and nothing else has changed since, so you already have its result. Use it: if it answers "
    "the task, answer now without a tool call; else take the next step."
)
WITH_THE_TASK = "the start of the run (Workbench made this call with the task)"  # turn 0: task_files' calls
# the ALREADY note for a call Workbench made with the task (task_files): its "answer now" made the
# 1.5B model, which re-sent that call first in 3 of 18 work runs, claim the change done; this one
# points at the task's next step (docs/DECISIONS.md)
ALREADY_WITH_THE_TASK = (
    "Note: Workbench made this same call with the task, before your first turn, and its result (this same "
    "result) is above the task. Calling it again will not change it: take the task's next step with it, the "
    "change or command the task asks for (a question this result answers: answer now without a tool call)."
)
SAME_LIMIT = 2  # identical successful results of one call before it is not run again
STOPPED = (
    "not run: this exact call (same tool, same arguments) failed {n} times in a row and nothing has changed "
    "since (no successful write_file, edit_file, bash or other changing call), so it would fail again. "
    "Change the arguments or take another approach."
)

Key = tuple[str, str]

COMMANDS = {"bash": "command"}  # a shell command line: whitespace at its ends changes nothing
PATHS = {"read_file": None, "write_file": None, "edit_file": None, "ls": ".", "glob": ".", "grep": "."}
# the built-in file tools' `path`, resolved from the workspace like the tools do (files/paths.py);
# the value is the tool's default when the argument is absent (None: it has none)


def _numbers(value: Any) -> Any:
    """`value` with each whole float as an int (120.0 is 120), in lists and objects too."""
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_numbers(v) for v in value]
    if isinstance(value, dict):
        return {k: _numbers(v) for k, v in value.items()}
    return value


def _file(path: str, workspace: Path) -> str:
    """The file a file tool's path names: stripped, `~` expanded, from the workspace, resolved."""
    try:
        joined = os.path.join(workspace, os.path.expanduser(path.strip()) or ".")
        return os.path.realpath(joined)
    except (OSError, ValueError):  # a NUL in it (the tool refuses it): its spelling is its key
        return path


def normalized(name: str, args: Any, workspace: Path | None) -> Any:
    """The call's arguments with what cannot change its outcome made one spelling."""
    args = _numbers(args)
    if not isinstance(args, dict):
        return args
    command = COMMANDS.get(name)
    if command is not None and isinstance(args.get(command), str):
        args[command] = args[command].strip()
    if name in PATHS and workspace is not None:
        path = args.get("path", PATHS[name])
        if isinstance(path, str):
            args["path"] = _file(path, workspace)
    return args


def _loose(value: Any) -> Any:
    """`value` without its numbers and with the whitespace in its texts collapsed."""
    if isinstance(value, str):
        return " ".join(value.split())
    if isinstance(value, list):
        return [_loose(v) for v in value if _countable(v)]
    if isinstance(value, dict):
        return {k: _loose(v) for k, v in value.items() if _countable(v)}
    return value


def _countable(value: Any) -> bool:
    return isinstance(value, bool) or not isinstance(value, int | float)


def _canonical(args: Any) -> str:
    return json.dumps(args, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _parsed(call: pb.ToolCall) -> tuple[bool, Any]:
    try:
        return True, json.loads(call.arguments) if call.arguments.strip() else {}
    except (json.JSONDecodeError, RecursionError):
        return False, call.arguments.strip()


def call_key(call: pb.ToolCall, workspace: Path | None = None) -> Key:
    """The tool and its normalized arguments as canonical JSON (the raw text when it is not JSON)."""
    ok, args = _parsed(call)
    if not ok:
        return call.name, args
    try:
        return call.name, _canonical(normalized(call.name, args, workspace))
    except RecursionError:  # nested too deeply to walk: its raw text is its key
        return call.name, call.arguments.strip()


def loose_key(call: pb.ToolCall, workspace: Path | None = None) -> Key:
    """The call's key without its numbers and with whitespace collapsed in its texts: calls with
    one loose key differ only where (given the same outcome) they did not change anything."""
    ok, args = _parsed(call)
    if not ok:
        return call.name, " ".join(args.split())
    try:
        return call.name, _canonical(_loose(normalized(call.name, args, workspace)))
    except RecursionError:
        return call.name, " ".join(call.arguments.split())


class Repeats:
    """One agent's memory of its calls in one run (the loop makes a fresh one at each run's start: run_state.py)."""

    def __init__(self, changing: Collection[str], workspace: Path | None = None):
        self.changing = changing  # tools whose success may change what other calls return (MCP ones come and go)
        self.workspace = workspace  # file tools' relative paths start here (None: paths are compared as spelled)
        self.reset()

    def reset(self) -> None:
        self._failures: dict[Key, int] = {}  # consecutive failures since the last change
        self._seen: dict[Key, tuple[int, str]] = {}  # a succeeded call -> (first turn, digest of its result)
        self._same: dict[Key, tuple[int, int, int]] = {}  # -> (identical results, last turn, changes then)
        self._changes = 0  # successful changing calls so far
        self._streak: dict[Key, tuple[int, str]] = {}  # loose key -> (calls in a row with one outcome, its digest)

    def refuse(self, call: pb.ToolCall) -> pb.ToolResult | None:
        """The result of a call that is not run again (it keeps failing, or it keeps returning the
        same result, and nothing else changed); else None."""
        key = call_key(call, self.workspace)
        same, last, changes = self._same.get(key, (0, 0, -1))
        if same >= SAME_LIMIT and changes == self._changes:
            first = self._seen[key][0]
            result = pb.ToolResult(
                call_id=call.id,
                name=call.name,
                is_error=True,
                error=SAME_AGAIN.format(
                    when=f"turns {first} and {last}" if first else f"{WITH_THE_TASK} and turn {last}"
                ),
            )
            result.metadata.update({"repeat_refused": True, "same_results": same})
            return result
        failed = self._failures.get(key, 0)
        if failed < STOP_AFTER:
            return None
        self._failures[key] = failed + 1
        result = pb.ToolResult(call_id=call.id, name=call.name, is_error=True, error=STOPPED.format(n=failed))
        result.metadata.update({"repeat_refused": True, "failures": failed})
        return result

    def looping(self, call: pb.ToolCall, limit: int) -> int:
        """How many times in a row this call was made with one outcome and nothing changed, once
        that reaches `limit` (0: never): the next run of it stops for the person. Else 0."""
        times = self._streak.get(loose_key(call, self.workspace), (0, ""))[0]
        return times if limit and times >= limit else 0

    def go_on(self, call: pb.ToolCall) -> None:
        """The person let a looping call go on: it counts from zero again."""
        self._streak.pop(loose_key(call, self.workspace), None)

    def _count_outcome(self, key: Key, result: pb.ToolResult) -> bool:
        """Count the call's outcome toward its streak; True when it is new (not the last one again)."""
        times, last = self._streak.get(key, (0, ""))
        if "repeat_refused" in result.metadata:  # refused: the same call again, its outcome unchanged
            self._streak[key] = (times + 1, last)
            return False
        shown = f"{result.is_error}\0{result.error}\0{result.output}"
        digest = hashlib.sha256(shown.encode("utf-8", "replace")).hexdigest()
        self._streak[key] = (times + 1 if digest == last else 1, digest)
        return digest != last

    def record(self, call: pb.ToolCall, result: pb.ToolResult, turn: int) -> None:
        """Remember how the call went; add a reminder or an "already have it" note to its result."""
        key, loose = call_key(call, self.workspace), loose_key(call, self.workspace)
        new_outcome = self._count_outcome(loose, result)
        if "repeat_refused" in result.metadata:
            return
        if result.is_error:
            n = self._failures[key] = self._failures.get(key, 0) + 1
            if n >= REMIND_AFTER:
                result.notes.append(REMINDER.format(n=n))
            return
        self._failures.pop(key, None)
        digest = hashlib.sha256(result.output.encode("utf-8", "replace")).hexdigest()
        seen = self._seen.get(key)
        if seen is not None and seen[1] == digest:
            ago = turn - seen[0]
            when = f" ({ago} turn{'s' if ago != 1 else ''} ago)" if ago else " (earlier in this same turn)"
            result.notes.append(ALREADY.format(when=f"turn {seen[0]}{when}") if seen[0] else ALREADY_WITH_THE_TASK)
            same = self._same.get(key, (1, seen[0], 0))[0] + 1
        else:
            self._seen[key] = (turn, digest)
            same = 1
        if call.name in self.changing:
            self._failures.clear()  # something may have changed: earlier failures may not repeat
            if new_outcome:  # and other calls may now go another way: none of them is looping
                self._streak = {loose: self._streak[loose]}
            if same == 1:  # a repeat of the same changing call with the same result changed nothing new
                self._changes += 1
        self._same[key] = (same, turn, self._changes)
