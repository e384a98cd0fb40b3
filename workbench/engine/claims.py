"""No success without evidence: a small model whose edits all failed often ends with "the file is
already correct" or "all occurrences have been replaced", with nothing changed and the errors in
its context (issue 38). Such an answer gets one turn back, once a run, naming the failed calls.

Only for models litellm does not know (the `change_check` setting; decided by the loop), and only
when the run's calls of the tools that can change something all failed: one that succeeded may
have made the change (a command's effect is not judged, but one that only reads, such as `ls` or
`cat x`, is no change: `changing_calls`). Pure functions: no I/O, no state.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Sequence

from workbench.guard.rules import READERS
from workbench.pb import workbench_pb2 as pb
from workbench.terminal.shell_parse import Command, opaque, parse

Calls = Sequence[tuple[pb.ToolCall, pb.ToolResult]]

_CLAIM = re.compile(
    r"\b(?:already|changed|updated|replaced|renamed|fixed|modified|edited|created|written|wrote|added|removed|"
    r"deleted|moved|applied|corrected|done|now (?:returns|uses|reads|is|has))\b",
    re.IGNORECASE,
)
_ADMITS = re.compile(
    r"\b(?:could ?n[o']t|can ?no?'?t|unable|failed|fails|not (?:been|yet|able)|did ?n[o']t|was ?n[o']t|"
    r"were ?n[o']t|has ?n[o']t|have ?n[o']t|error)\b",
    re.IGNORECASE,
)
SHOWN_CALLS = 3  # failed calls named in the line
ERROR_CHARS = 90  # characters of each one's error

LINE = (
    "Your answer says the change is made, but every call that could make it failed: {calls}. Nothing "
    "changed. Make the change now (read the file first to copy its exact text), or say that it is not done."
)


def claims_change(answer: str) -> bool:
    """Whether an answer says a change was made (changed, replaced, already correct, done, ...) and
    admits no failure."""
    return _CLAIM.search(answer) is not None and _ADMITS.search(answer) is None


# programs that only read, beyond the guard's READERS
_READS = READERS | {"pwd", "cd", "which", "type", "whoami", "date", "env", "printenv", "id", "uname", "true"}
_QUIET = {"/dev/null", "&1", "&2", "1", "2"}  # redirect targets that write no file


def arguments(call: pb.ToolCall) -> dict[str, object]:
    """A call's arguments as a dict ({} when they are no JSON object)."""
    try:
        value = json.loads(call.arguments or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def only_reads(command: str) -> bool:
    """Whether a bash command line only reads: every program one that reads (ls, cat, grep, ...),
    no file written by a redirect, nothing run from text made at run time."""
    if not command.strip() or opaque(command):
        return False
    commands = [c for pipeline in parse(command) for c in pipeline]
    return bool(commands) and all(reads(c) for c in commands)


def reads(command: Command) -> bool:
    """Whether one parsed command only reads: a reading program, no file written by a redirect."""
    return (
        command.program in _READS
        and not (set(command.redirects) - _QUIET)
        and not (command.program == "find" and {"-delete", "-exec", "-execdir"} & set(command.args))
    )


def changing_calls(calls: Calls, changing: Collection[str]) -> list[tuple[pb.ToolCall, pb.ToolResult]]:
    """The run's calls of the `changing` tools, but bash commands that only read, and a bash line of
    in-place edits that left every file as it was (`changed_nothing`: tools/in_place.py)."""
    return [
        (call, result)
        for call, result in calls
        if call.name in changing
        and not (call.name == "bash" and only_reads(str(arguments(call).get("command", ""))))
        and "changed_nothing" not in result.metadata
    ]


def failed_changes(calls: Calls, changing: Collection[str]) -> list[str]:
    """The run's failed calls of the `changing` tools, each as 'edit_file on a.py (its error)'; []
    when one of them succeeded, or none was made (bash commands that only read count as neither)."""
    made = changing_calls(calls, changing)
    if not made or any(not result.is_error for _, result in made):
        return []
    return [_named(call, result) for call, result in made]


def _named(call: pb.ToolCall, result: pb.ToolResult) -> str:
    error = " ".join(result.error.split())
    error = error if len(error) <= ERROR_CHARS else error[: ERROR_CHARS - 3] + "..."
    target = re.search(r'"(?:path|command)"\s*:\s*"((?:[^"\\]|\\.){1,60})', call.arguments)
    on = f" on {target.group(1)}" if target else ""
    return f"{call.name}{on} ({error})"


def line(failed: list[str]) -> str:
    shown = "; ".join(dict.fromkeys(failed[-SHOWN_CALLS:]))
    return LINE.format(calls=shown)


__all__ = ["LINE", "arguments", "changing_calls", "claims_change", "failed_changes", "line", "only_reads", "reads"]
