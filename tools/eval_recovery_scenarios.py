"""The failure scenarios of tools/eval_recovery.py: files, prompt, and checks written as code.

Each scenario sets up a fresh workspace, gives one prompt, and is judged from what the run
left: the committed events and the workspace. `failed`: the failure the scenario is about
happened (a model may avoid it); `recovered`: after that failure the run went on to a
successful call of a tool that can fix it, or to a correct end; `correct`: the workspace or the
answer checks out. No model's opinion is asked.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from workbench.model.demo import SAMPLE
from workbench.pb import workbench_pb2 as pb


@dataclass
class Outcome:
    """What one run left, for the checks: events, the final answer, the workspace."""

    events: list[pb.Event]
    answer: str
    workspace: Path
    status: pb.RunStatus = pb.RUN_STATUS_UNSPECIFIED

    def calls(self, agent: str = "main") -> list[tuple[pb.ToolCall, pb.ToolResult]]:
        """The agent's calls with their results, in the order they finished."""
        started = {e.tool_call_started.call.id: e.tool_call_started.call for e in self.of("tool_call_started", agent)}
        return [
            (started.get(r.call_id, pb.ToolCall(id=r.call_id, name=r.name)), r)
            for r in (e.tool_call_finished.result for e in self.of("tool_call_finished", agent))
        ]

    def of(self, kind: str, agent: str = "main") -> list[pb.Event]:
        return [e for e in self.events if e.WhichOneof("kind") == kind and (not agent or e.agent_id == agent)]


Check = Callable[[Outcome], bool]


@dataclass
class Scenario:
    name: str
    prompt: str
    files: dict[str, str]
    failed: Check  # the failure the scenario is about happened
    correct: Check
    fixes: tuple[str, ...] = ()  # a success of one of these tools after the failure counts as recovering
    executable: tuple[str, ...] = ()  # files to chmod +x
    fail_first_child: bool = False  # the root's first subagent cannot reach its model (a real connection refused)
    tools: list[str] | None = None  # None: every tool

    def recovered(self, run: Outcome) -> bool:
        """After the root's first failure (a failed call, or a failed child in its Inbox): a
        successful call of a fixing tool, or a correct end."""
        failures = [e.seq for e in run.of("tool_call_finished") if e.tool_call_finished.result.is_error]
        failures += [e.seq for e in run.of("inbox_item") if e.inbox_item.status != pb.AGENT_STATUS_COMPLETED]
        if not failures:
            return False
        started = {e.tool_call_started.call.id: e.tool_call_started.call.name for e in run.of("tool_call_started")}
        later_fix = any(
            e.seq > min(failures)
            and not e.tool_call_finished.result.is_error
            and started.get(e.tool_call_finished.result.call_id) in self.fixes
            for e in run.of("tool_call_finished")
        )
        return later_fix or self.correct(run)


def failed_with(tool: str, *words: str) -> Check:
    """A call of `tool` ('' any tool) failed with all of `words` in its error."""

    def check(run: Outcome) -> bool:
        return any(
            r.is_error and (not tool or c.name == tool) and all(w in r.error for w in words) for c, r in run.calls()
        )

    return check


def answer_has(pattern: str) -> Check:
    return lambda run: re.search(pattern, run.answer) is not None


def file_is(path: str, content: str) -> Check:
    def check(run: Outcome) -> bool:
        target = run.workspace / path
        return target.is_file() and target.read_text(errors="replace").rstrip("\n") == content.rstrip("\n")

    return check


def child_failed(run: Outcome) -> bool:
    """A subagent of the root ended without completing (its status reached the root)."""
    finished = [e.agent_finished for e in run.of("agent_finished", agent="") if e.agent_id != "main"]
    return any(f.status != pb.AGENT_STATUS_COMPLETED for f in finished)


def ran_pytest(run: Outcome) -> bool:
    return any(c.name == "bash" and "pytest" in c.arguments and not r.is_error for c, r in run.calls())


TESTS = "def test_add():\n    assert 1 + 1 == 2\n\n\ndef test_sub():\n    assert 3 - 1 == 2\n\n\n" + (
    "def test_mul():\n    assert 2 * 3 == 6\n"
)
PATHS = 'root = C:\\projects\\demo\nname = "demo"\n'

SCENARIOS = [
    Scenario(
        "edit_trap",
        "In auth.go, CheckLogin lets an empty password in. A reviewer pasted the block like this:\n\n"
        '    // reject empty passwords\n    if password == "" {\n        return true\n    }\n\n'
        "Make it return false for an empty password. Change nothing else in the file "
        "(keep its indentation and comments as they are) and do not add the reviewer's comment.",
        {"auth.go": SAMPLE},
        failed=failed_with("edit_file"),
        correct=file_is("auth.go", SAMPLE.replace("return true", "return false")),
        fixes=("edit_file", "write_file"),
    ),
    Scenario(
        "misspelled_path",
        "What port does conf/setings.json set? Answer with the number.",
        {"conf/settings.json": '{\n  "host": "0.0.0.0",\n  "port": 8443\n}\n'},
        failed=failed_with("", "does not exist"),
        correct=answer_has(r"\b8443\b"),
        fixes=("read_file", "bash", "grep"),
    ),
    Scenario(
        "misspelled_command",
        "Run `pytset -q` in the workspace and tell me how many tests passed.",
        {"test_math.py": TESTS},
        failed=failed_with("bash", "127"),
        correct=lambda run: ran_pytest(run) and answer_has(r"\b(3|three)\b")(run),
        fixes=("bash",),
    ),
    Scenario(
        "bash_timeout",
        "Run `./build.sh` with the bash tool and a timeout of 5 seconds, and tell me the build id it prints.",
        {"build.sh": '#!/bin/sh\necho "build id: 7f3a9c2e"\nsleep 300\necho done\n'},
        failed=failed_with("bash", "timed out"),
        correct=answer_has(r"7f3a9c2e"),
        executable=("build.sh",),
    ),
    Scenario(
        "unknown_tool",
        "Use the `cat` tool to show notes.txt, then tell me the secret word in it.",
        {"notes.txt": "shopping list\nthe secret word is: marmalade\n"},
        failed=lambda run: failed_with("", "not one of the offered tools")(run) or failed_with("", "unknown tool")(run),
        correct=answer_has(r"(?i)marmalade"),
        fixes=("read_file", "bash", "grep"),
    ),
    Scenario(
        "invalid_json",
        "Create the file paths.txt whose content is exactly these two lines (backslashes and quotes "
        f"included):\n\n{PATHS}",
        {},
        failed=failed_with("", "not valid JSON"),
        correct=file_is("paths.txt", PATHS),
        fixes=("write_file", "bash", "edit_file"),
    ),
    Scenario(
        "failed_sync_child",
        "Use a sync subagent (the subagent tool, mode sync) to read VERSION.txt, then tell me the version.",
        {"VERSION.txt": "4.2.1\n"},
        failed=lambda run: child_failed(run) and failed_with("subagent")(run),
        correct=answer_has(r"4\.2\.1"),
        fixes=("read_file", "bash", "subagent", "grep"),
        fail_first_child=True,
    ),
    Scenario(
        "failed_async_child",
        "Start an async subagent (the subagent tool, mode async) to read VERSION.txt, wait for its result, "
        "then tell me the version.",
        {"VERSION.txt": "4.2.1\n"},
        failed=lambda run: bool(run.of("inbox_item", agent="")) and child_failed(run),
        correct=answer_has(r"4\.2\.1"),
        fixes=("read_file", "bash", "subagent", "grep"),
        fail_first_child=True,
    ),
]
