"""The guard in the running loop, through the Session, the scripted model server, a real SQLite
store and the session's real tmux server: nothing of a blocked or denied call runs; a review
waits for the person while other agents go on; the person's answer and the guard's reasons
reach the model; the model judge's usage counts toward the budget and its failures never end
the run."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.scripted_server import ScriptedModel, call, reply
from tests.waiting import until
from workbench.config.settings import Settings
from workbench.pb import workbench_pb2 as pb
from workbench.session.session import Session

pytestmark = pytest.mark.tmux

RECORD, REVIEW, BLOCK = pb.GUARD_VERDICT_RECORD, pb.GUARD_VERDICT_REVIEW, pb.GUARD_VERDICT_BLOCK


class Opened:
    """A session and every event it committed (read after it closed)."""

    def __init__(self, session: Session):
        self.session = session
        self.events: list[pb.Event] = []
        session.subscribe(self.events.append)


async def open_session(settings: Settings, **how: Any) -> Opened:
    return Opened(await Session.open(settings, **how))


def of(opened: Opened, kind: str) -> list[Any]:
    return [getattr(e, kind) for e in opened.events if e.WhichOneof("kind") == kind]


def tool_messages(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def tmux_text(session_id: str) -> str | None:
    """Everything the session's tmux server shows (every pane, all scrollback); None when no
    server ever ran."""
    socket = f"workbench-{session_id}"
    panes = subprocess.run(
        ["tmux", "-L", socket, "list-panes", "-a", "-F", "#{pane_id}"], capture_output=True, text=True
    )
    if panes.returncode != 0:
        return None
    texts = []
    for pane in panes.stdout.split():
        shown = subprocess.run(
            ["tmux", "-L", socket, "capture-pane", "-p", "-J", "-S", "-", "-t", pane], capture_output=True, text=True
        )
        texts.append(shown.stdout)
    return "\n".join(texts)


async def test_a_blocked_bash_command_never_reaches_tmux(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    settings.guard_block = ["bash:touch *"]
    scripted_model.add(
        reply("", call("bash", command="echo first-marker > first.txt")),
        reply("", call("bash", command="touch blocked-marker.txt")),
        reply("done"),
    )
    opened = await open_session(settings)
    session = opened.session
    try:
        session.send("make two files")
        outcome = await session.wait()
        shown = tmux_text(session.id)
    finally:
        await session.close()
    assert outcome.status == pb.RUN_STATUS_FINISHED
    assert (workspace / "first.txt").exists() and not (workspace / "blocked-marker.txt").exists()
    assert shown is not None and "first-marker" in shown and "blocked-marker" not in shown
    decisions = of(opened, "guard_decision")
    assert [(d.verdict, d.judge) for d in decisions] == [(RECORD, "mode"), (BLOCK, "rule")]
    (blocked,) = [r.result for r in of(opened, "tool_call_finished") if r.result.call_id == decisions[1].call_id]
    assert blocked.is_error and "bash:touch *" in blocked.error
    assert "Blocked by the guard" in tool_messages(scripted_model.requests[2])[-1]


async def test_read_only_blocks_a_write_and_bash_before_anything_runs(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    settings.approval = "read-only"
    scripted_model.add(
        reply(
            "",
            call("write_file", path="notes.md", content="x"),
            call("bash", command="echo hi > hi.txt"),
            call("ls", path="."),
            call("Bash", command="echo hi > hi.txt"),  # misspelled: no tool at all
        ),
        reply("done"),
    )
    opened = await open_session(settings)
    session = opened.session
    try:
        session.send("write notes")
        await session.wait()
        shown = tmux_text(session.id)
    finally:
        await session.close()
    assert not (workspace / "notes.md").exists() and not (workspace / "hi.txt").exists()
    # the session starts its tmux server as a run starts: nothing of the blocked call reached it
    assert shown is None or "hi.txt" not in shown, shown
    # the unknown tool fails as itself before the guard judges it (issue 37 item 3)
    assert [d.verdict for d in of(opened, "guard_decision")] == [BLOCK, BLOCK, RECORD]
    results = tool_messages(scripted_model.requests[1])
    assert "read-only mode" in results[0] and "read-only mode" in results[1]
    assert "Blocked" not in results[2]
    assert results[3].startswith("Error: unknown tool 'Bash'") and "Blocked" not in results[3], results[3]


async def test_a_review_waits_for_the_person_then_runs_or_reads_the_denial(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.add(
        reply("", call("write_file", path="approved.md", content="yes\n")),
        reply("", call("write_file", path="denied.md", content="no\n")),
        reply("ok, I will not write it"),
    )
    settings.approval = "ask"
    opened = await open_session(settings, interactive=True)
    session = opened.session
    try:
        session.send("write two notes")
        await until(lambda: session.pending_reviews())
        (first,) = session.pending_reviews()
        assert first.call.name == "write_file" and first.verdict == REVIEW
        statuses = {a.id: a.status for a in session.agents()}
        assert statuses["main"] == pb.AGENT_STATUS_AWAITING_APPROVAL
        assert not (workspace / "approved.md").exists()
        session.decide(first.call_id, True)
        await until(lambda: session.pending_reviews() and session.pending_reviews()[0].call_id != first.call_id)
        assert (workspace / "approved.md").read_text() == "yes\n"
        (second,) = session.pending_reviews()
        session.decide(second.call_id, False, reason="notes belong in docs/, not the root")
        outcome = await session.wait()
    finally:
        await session.close()
    assert outcome.status == pb.RUN_STATUS_FINISHED
    assert not (workspace / "denied.md").exists()
    assert "notes belong in docs/, not the root" in tool_messages(scripted_model.requests[2])[-1]
    decided = of(opened, "review_decided")
    assert [(d.call_id, d.approved) for d in decided] == [(first.call_id, True), (second.call_id, False)]
    seen = [e.agent_status.status for e in opened.events if e.WhichOneof("kind") == "agent_status"]
    assert pb.AGENT_STATUS_AWAITING_APPROVAL in seen


async def test_other_agents_keep_running_while_one_waits(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    def model(body: dict[str, Any]) -> dict[str, Any]:
        task = next(m["content"] for m in body["messages"] if m["role"] == "user")
        done = any(m["role"] == "tool" for m in body["messages"])
        if task.startswith("WRITER"):
            return reply("written") if done else reply("", call("write_file", path="w.md", content="w"))
        if task.startswith("READER"):
            return reply("read it") if done else reply("", call("ls", path="."))
        if not done:
            return reply(
                "",
                call("subagent", {"action": "create", "prompt": "WRITER: write w.md", "name": "writer"}),
                call("subagent", {"action": "create", "prompt": "READER: list files", "name": "reader"}),
            )
        return reply("both reported") if "Inbox" in str(body["messages"][-1]["content"]) else reply("waiting")

    scripted_model.add(*[model] * 20)
    settings.approval = "ask"
    opened = await open_session(settings, interactive=True)
    session = opened.session
    try:
        session.send("start a writer and a reader")
        await until(lambda: session.pending_reviews())
        writer = session.pending_reviews()[0]
        reader_done = lambda: any(  # noqa: E731
            a.name == "reader" and a.status == pb.AGENT_STATUS_COMPLETED for a in session.agents()
        )
        await until(reader_done)
        by_name = {a.name: a for a in session.agents()}
        assert by_name["writer"].status == pb.AGENT_STATUS_AWAITING_APPROVAL
        assert not (workspace / "w.md").exists()
        session.decide(writer.call_id, True)
        await session.wait()
    finally:
        await session.close()
    assert (workspace / "w.md").read_text() == "w\n"


async def test_headless_with_no_person_a_review_is_a_denial_naming_the_flag(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    settings.approval = "ask"
    scripted_model.add(reply("", call("bash", command="make test")), reply("cannot run it"))
    opened = await open_session(settings, interactive=False, answerable=False)
    session = opened.session
    try:
        session.send("run the tests")
        await session.wait()
    finally:
        await session.close()
    denial = tool_messages(scripted_model.requests[1])[-1]
    assert "--approval auto" in denial and "guard_allow" in denial
    assert of(opened, "review_decided") == []


async def test_a_call_that_can_only_fail_fails_as_itself_and_is_never_put_to_a_person(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    """Issue 37 item 3: in ask mode an edit_file whose old_text is not in the file went to the approval
    modal (its preview said "old_text not found as given"); headless it was "Denied without running"
    and the model never learned its old_text was wrong. The tool's own checks come first."""
    settings.approval = "ask"
    app = workspace / "app.py"
    for interactive in (True, False):
        app.write_text("x = 1\n")
        scripted_model.add(
            reply("", call("edit_file", path="app.py", old_text="y = 1", new_text="y = 2")),
            reply("", call("bash", command=["not", "a", "string"])),  # arguments that do not fit: the same
            reply("", call("edit_file", path="app.py", old_text="x = 1", new_text="x = 2")),
            reply("done"),
        )
        asked = len(scripted_model.requests)
        opened = await open_session(settings, interactive=interactive, answerable=interactive)
        session = opened.session
        try:
            session.send("change y")
            if interactive:  # the valid edit is still reviewed: the first review is that one
                await until(session.pending_reviews, 60)
                (pending,) = session.pending_reviews()
                assert json.loads(pending.call.arguments)["old_text"] == "x = 1"
                session.decide(pending.call_id, True)
            await asyncio.wait_for(session.wait(), 60)
        finally:
            await session.close()
        wrong, bad_args = (
            tool_messages(scripted_model.requests[asked + 1])[-1],
            tool_messages(scripted_model.requests[asked + 2])[-1],
        )
        assert "old_text" in wrong and "y = 1" in wrong and "Denied" not in wrong, wrong
        assert "invalid arguments" in bad_args and "Denied" not in bad_args, bad_args
        judged = [d.call_id for d in of(opened, "guard_decision")]
        assert len(judged) == 1, "only the edit that can apply is judged"
        assert app.read_text() == ("x = 2\n" if interactive else "x = 1\n")


async def test_the_model_judges_usage_counts_and_its_failure_does_not_end_the_run(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    settings.guard_model = "openai/judge"
    scripted_model.add(
        reply("", call("write_file", path="a.md", content="a")),
        reply(json.dumps({"verdict": "record", "reason": "a note, as asked."}), usage=(100, 7)),
        reply("", call("write_file", path="b.md", content="b")),
        reply("I am not sure about this one"),  # the judge's malformed answer: fail closed
        reply("done"),
    )
    opened = await open_session(settings)
    session = opened.session
    try:
        session.send("write notes a and b")
        outcome = await session.wait()
    finally:
        await session.close()
    assert outcome.status == pb.RUN_STATUS_FINISHED
    assert (workspace / "a.md").exists() and not (workspace / "b.md").exists()
    decisions = of(opened, "guard_decision")
    assert [(d.verdict, d.judge) for d in decisions] == [(RECORD, "model"), (BLOCK, "model")]
    assert "fails closed" in decisions[1].reason
    totals = of(opened, "usage_update")[-1].session_total
    # three agent calls (10 + 10 + 10 in) and two judge calls (100 + 10 in)
    assert totals.input_tokens == 140 and totals.calls == 5
    assert scripted_model.requests[1]["model"] == "judge"
