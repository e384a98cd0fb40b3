"""The guard's texts the model reads, pinned whole (issue 36 item 8): a call blocked (by the mode,
a rule, a denial the person gave for the session), denied where no person can answer (with what
would let it run: a mode, a rule, a built-in rule), and the person's denial. A real Guard judges
real calls; the person answers through `decide`, as the TUI does. A change of wording is a
reviewed diff (`pytest --inline-snapshot=review`)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from inline_snapshot import snapshot

from workbench.config.settings import Settings
from workbench.guard.guardrail import Guard
from workbench.pb import workbench_pb2 as pb


def bash(command: str) -> pb.ToolCall:
    return pb.ToolCall(id="c1", name="bash", arguments=json.dumps({"command": command}))


def write(path: str) -> pb.ToolCall:
    return pb.ToolCall(id="c1", name="write_file", arguments=json.dumps({"path": path, "content": "x"}))


async def refusal(guard: Guard, call: pb.ToolCall) -> str:
    denied = await guard.admit(call, agent_id="main", task="the task", emit=lambda event: None)
    return denied.error if denied is not None else "(it runs)"


def guard(workspace: Path, mode: str, answerable: bool = False, **settings: Any) -> Guard:
    return Guard(Settings(workspace=workspace, **settings), mode=mode, answerable=answerable)


async def test_calls_blocked(workspace: Path) -> None:
    assert await refusal(guard(workspace, "read-only"), bash("make build")) == snapshot(
        "Blocked by the guard (mode): read-only mode: bash can change files, run commands or reach out. The call did not run; do not repeat it: take another approach, or ask the person."
    )
    blocking = guard(workspace, "auto", guard_block=["bash:curl *"])
    assert await refusal(blocking, bash("curl https://example.com")) == snapshot(
        "Blocked by the guard (rule): blocked by the rule 'bash:curl *' (guard_block). The call did not run; do not repeat it: take another approach, or ask the person."
    )


async def test_calls_denied_where_no_person_can_answer(workspace: Path) -> None:
    assert await refusal(guard(workspace, "ask"), bash("make build")) == snapshot(
        "Denied without running: ask mode: bash needs the person's approval, and no person can approve it here (not a terminal). To let it run, run with --approval auto, or add the rule 'bash:make build' to guard_allow in your user config."
    )
    assert await refusal(guard(workspace, "ask"), write("notes.txt")) == snapshot(
        "Denied without running: ask mode: write_file needs the person's approval, and no person can approve it here (not a terminal). To let it run, run with --approval auto, or add the rule 'write_file:notes.txt' to guard_allow in your user config."
    )
    assert await refusal(guard(workspace, "auto", sandbox="off"), bash("make build")) == snapshot(
        "Denied without running: auto mode with the sandbox off: bash needs the person's approval, and no person can approve it here (not a terminal). To let it run, turn the sandbox on (sandbox = \"workspace-write\"), or add the rule 'bash:make build' to guard_allow in your user config."
    )
    assert await refusal(guard(workspace, "auto"), bash("git push --force origin main")) == snapshot(
        "Denied without running: built-in rule: a forced git push (it can overwrite the remote's history), and no person can approve it here (not a terminal). No setting switches a built-in rule off; approve it yourself in the TUI or on a terminal."
    )
    assert await refusal(guard(workspace, "auto"), write(".git/hooks/pre-commit")) == snapshot(
        "Denied without running: built-in rule: a write inside .git/ (.git/hooks/pre-commit), and no person can approve it here (not a terminal). No setting switches a built-in rule off; approve it yourself in the TUI or on a terminal."
    )
    reviewing = guard(workspace, "auto", guard_review=["bash:make *"])
    assert await refusal(reviewing, bash("make deploy")) == snapshot(
        "Denied without running: the rule 'bash:make *' (guard_review) asks for review, and no person can approve it here (not a terminal). Remove that rule from guard_review in your config to let it run."
    )


async def test_the_persons_denial(workspace: Path) -> None:
    asking = guard(workspace, "ask", answerable=True)

    async def answered(call: pb.ToolCall, **answer: Any) -> str:
        task = asyncio.create_task(refusal(asking, call))
        while not asking.pending_reviews():
            await asyncio.sleep(0.01)
        asking.decide(call.id, **answer)
        return await task

    assert await answered(bash("make deploy"), approve=False) == snapshot(
        "The person denied this call (no reason given). It did not run; adapt your approach to that."
    )
    assert await answered(bash("make deploy"), approve=False, reason="not on Fridays") == snapshot(
        "The person denied this call: not on Fridays. It did not run; adapt your approach to that."
    )
    assert await answered(bash("make deploy"), approve=False, reason="never", remember=True) == snapshot(
        "The person denied this call: never. It did not run; adapt your approach to that. They denied this exact bash command for the rest of the session."
    )
    assert await refusal(asking, bash("make deploy")) == snapshot(
        "Blocked by the guard (person): the person denied this exact bash command for the rest of the session (their reason: never). The call did not run; do not repeat it: take another approach, or ask the person."
    )
    assert await answered(write("a.txt"), approve=False, remember=True) == snapshot(
        "The person denied this call (no reason given). It did not run; adapt your approach to that. They denied every write_file call for the rest of the session."
    )
    assert await refusal(asking, write("b.txt")) == snapshot(
        "Blocked by the guard (person): the person denied every write_file call for the rest of the session (no reason given). The call did not run; do not repeat it: take another approach, or ask the person."
    )
