"""Repeated tool calls within one run: reminders, "you already have this result", and a stop.

A call is keyed by its tool and its parsed arguments (canonical JSON: key order and spacing
do not matter), so a pretty-printed first call and compact later ones are the same call.

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
- A call made `repeat_stop` times in a row with the same outcome each time (the same result,
  the same failure, or refused as above) and nothing changed in between is looping: the loop
  stops the agent before it runs again and asks the person (`looping`; docs/DECISIONS.md says
  why 3).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection

from workbench.pb import workbench_pb2 as pb

REMIND_AFTER = 3  # the third identical failing call gets a reminder
STOP_AFTER = 4  # after this many identical failures with nothing changed, the call is not run again
REMINDER = (
    "Reminder: this exact call (same tool, same arguments) has now failed {n} times with nothing changed "
    "in between. Do not repeat it; change the arguments or take another approach."
)
ALREADY = (
    "Note: you already have this result: the same call (same tool, same arguments) returned exactly this "
    "at turn {turn}{ago}. Calling it again will not change it; use that result: if it answers the task, "
    "answer now without a tool call."
)
SAME_AGAIN = (
    "not run: this exact call (same tool, same arguments) returned the same result twice, at turns {first} "
    "and {last}, and nothing else has changed since, so you already have its result. Use it: if it answers "
    "the task, answer now without a tool call; else take the next step."
)
SAME_LIMIT = 2  # identical successful results of one call before it is not run again
STOPPED = (
    "not run: this exact call (same tool, same arguments) failed {n} times in a row and nothing has changed "
    "since (no successful write_file, edit_file, bash or other changing call), so it would fail again. "
    "Change the arguments or take another approach."
)

Key = tuple[str, str]


def call_key(call: pb.ToolCall) -> Key:
    """The tool and its arguments as canonical JSON (the raw text when it is not JSON)."""
    try:
        args = json.loads(call.arguments) if call.arguments.strip() else {}
        canonical = json.dumps(args, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    except (json.JSONDecodeError, RecursionError):
        canonical = call.arguments.strip()
    return call.name, canonical


class Repeats:
    """One agent's memory of its calls in the current run (`reset` at each run's start)."""

    def __init__(self, changing: Collection[str]):
        self.changing = changing  # tools whose success may change what other calls return (MCP ones come and go)
        self.reset()

    def reset(self) -> None:
        self._failures: dict[Key, int] = {}  # consecutive failures since the last change
        self._seen: dict[Key, tuple[int, str]] = {}  # a succeeded call -> (first turn, digest of its result)
        self._same: dict[Key, tuple[int, int, int]] = {}  # -> (identical results, last turn, changes then)
        self._changes = 0  # successful changing calls so far
        self._streak: dict[Key, tuple[int, str]] = {}  # -> (calls in a row with one outcome, its digest)

    def refuse(self, call: pb.ToolCall) -> pb.ToolResult | None:
        """The result of a call that is not run again (it keeps failing, or it keeps returning the
        same result, and nothing else changed); else None."""
        key = call_key(call)
        same, last, changes = self._same.get(key, (0, 0, -1))
        if same >= SAME_LIMIT and changes == self._changes:
            first = self._seen[key][0]
            result = pb.ToolResult(
                call_id=call.id, name=call.name, is_error=True, error=SAME_AGAIN.format(first=first, last=last)
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
        times = self._streak.get(call_key(call), (0, ""))[0]
        return times if limit and times >= limit else 0

    def go_on(self, call: pb.ToolCall) -> None:
        """The person let a looping call go on: it counts from zero again."""
        self._streak.pop(call_key(call), None)

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
        key = call_key(call)
        new_outcome = self._count_outcome(key, result)
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
            result.notes.append(ALREADY.format(turn=seen[0], ago=when))
            same = self._same.get(key, (1, seen[0], 0))[0] + 1
        else:
            self._seen[key] = (turn, digest)
            same = 1
        if call.name in self.changing:
            self._failures.clear()  # something may have changed: earlier failures may not repeat
            if new_outcome:  # and other calls may now go another way: none of them is looping
                self._streak = {key: self._streak[key]}
            if same == 1:  # a repeat of the same changing call with the same result changed nothing new
                self._changes += 1
        self._same[key] = (same, turn, self._changes)
