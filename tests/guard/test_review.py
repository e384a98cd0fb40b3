"""Reviews: a call waits for the person (others go on), the person's answer reaches the model,
approvals can be remembered; with no person, a review is a denial that names what would allow
it. What a person is shown of a call, made by the guard into the review's event."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests.waiting import until
from workbench.config.settings import Settings
from workbench.engine.recorder import Recorder
from workbench.engine.store import Store
from workbench.guard.guardrail import Guard, NotWaiting
from workbench.guard.review import describe_call
from workbench.pb import workbench_pb2 as pb

RECORD, REVIEW, BLOCK = pb.GUARD_VERDICT_RECORD, pb.GUARD_VERDICT_REVIEW, pb.GUARD_VERDICT_BLOCK


class Agent:
    """One agent's side of the guard: its recorder on a real SQLite store and its status."""

    def __init__(self, store: Store, session: str, agent_id: str):
        self.id = agent_id
        self.recorder = Recorder(store, session, agent_id)
        self.statuses: list[int] = []

    async def admit(self, guard: Guard, call: pb.ToolCall) -> pb.ToolResult | None:
        return await guard.admit(
            call, agent_id=self.id, task="the task", emit=self.recorder.emit, on_status=self.statuses.append
        )


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / "wb.db")


def events(store: Store, session: str, kind: str) -> list[pb.Event]:
    return [e for e in store.events(session) if e.WhichOneof("kind") == kind]


def bash(command: str, call_id: str = "c1") -> pb.ToolCall:
    return pb.ToolCall(id=call_id, name="bash", arguments=json.dumps({"command": command}))


def write(path: str, call_id: str) -> pb.ToolCall:
    return pb.ToolCall(id=call_id, name="write_file", arguments=json.dumps({"path": path, "content": "x\n"}))


async def test_record_and_block_are_recorded_without_asking(store: Store, workspace: Path) -> None:
    session = store.create_session(workspace, "m", "p")
    agent = Agent(store, session, "main")
    guard = Guard(Settings(workspace=workspace, guard_block=["bash:npm publish*"]), mode="auto")
    assert await agent.admit(guard, bash("ls", "c1")) is None
    blocked = await agent.admit(guard, bash("npm publish", "c2"))
    assert blocked is not None and blocked.is_error and blocked.call_id == "c2"
    assert "Blocked by the guard (rule)" in blocked.error and "bash:npm publish*" in blocked.error
    decisions = [e.guard_decision for e in events(store, session, "guard_decision")]
    assert [(d.call_id, d.verdict, d.judge) for d in decisions] == [("c1", RECORD, "mode"), ("c2", BLOCK, "rule")]
    assert decisions[1].call.arguments == bash("npm publish").arguments
    assert agent.statuses == [] and guard.pending_reviews() == []


async def test_with_no_person_a_review_is_a_denial_that_names_the_way_out(store: Store, workspace: Path) -> None:
    session = store.create_session(workspace, "m", "p")
    agent = Agent(store, session, "main")
    guard = Guard(Settings(workspace=workspace), mode="ask", answerable=False)
    denied = await agent.admit(guard, bash("make test"))
    assert denied is not None and denied.is_error
    assert "--approval auto" in denied.error and "'bash:make test'" in denied.error
    assert events(store, session, "review_decided") == [] and agent.statuses == []


async def test_a_review_waits_for_the_person_while_other_agents_go_on(store: Store, workspace: Path) -> None:
    session = store.create_session(workspace, "m", "p")
    main, child = Agent(store, session, "main"), Agent(store, session, "a1")
    guard = Guard(Settings(workspace=workspace), mode="ask", answerable=True)
    waiting = asyncio.create_task(main.admit(guard, bash("make test", "c1")))
    await until(lambda: guard.pending_reviews())
    assert [d.call_id for d in guard.pending_reviews()] == ["c1"]
    assert main.statuses == [pb.AGENT_STATUS_AWAITING_APPROVAL]
    # another agent's reading call is judged and admitted meanwhile
    read = pb.ToolCall(id="c2", name="read_file", arguments='{"path": "a.txt"}')
    assert await asyncio.wait_for(child.admit(guard, read), 5) is None
    assert not waiting.done()

    guard.decide("c1", approve=True)
    assert await asyncio.wait_for(waiting, 5) is None
    assert main.statuses == [pb.AGENT_STATUS_AWAITING_APPROVAL, pb.AGENT_STATUS_RUNNING]
    (answer,) = events(store, session, "review_decided")
    assert (answer.agent_id, answer.review_decided.call_id, answer.review_decided.approved) == ("main", "c1", True)
    assert guard.pending_reviews() == []


async def test_a_denial_with_a_reason_is_the_models_error_result(store: Store, workspace: Path) -> None:
    session = store.create_session(workspace, "m", "p")
    agent = Agent(store, session, "main")
    guard = Guard(Settings(workspace=workspace), mode="ask", answerable=True)
    waiting = asyncio.create_task(agent.admit(guard, write("notes.md", "c1")))
    await until(lambda: guard.pending_reviews())
    guard.decide("c1", approve=False, reason="write it under docs/ instead")
    result = await asyncio.wait_for(waiting, 5)
    assert result is not None and result.is_error
    assert "The person denied this call: write it under docs/ instead" in result.error
    (answer,) = events(store, session, "review_decided")
    assert not answer.review_decided.approved and answer.review_decided.reason == "write it under docs/ instead"
    assert not (workspace / "notes.md").exists()


async def test_remember_approves_the_tool_for_the_session_and_the_calls_waiting(store: Store, workspace: Path) -> None:
    session = store.create_session(workspace, "m", "p")
    agent = Agent(store, session, "main")
    guard = Guard(Settings(workspace=workspace), mode="ask", answerable=True)
    first = asyncio.create_task(agent.admit(guard, write("a.md", "c1")))
    second = asyncio.create_task(agent.admit(guard, write("b.md", "c2")))
    command = asyncio.create_task(agent.admit(guard, bash("make", "c3")))
    await until(lambda: len(guard.pending_reviews()) == 3)
    assert agent.statuses == [pb.AGENT_STATUS_AWAITING_APPROVAL]  # once for the agent, not per call
    guard.decide("c1", approve=True, remember=True)
    assert await asyncio.wait_for(first, 5) is None and await asyncio.wait_for(second, 5) is None
    assert [d.call_id for d in guard.pending_reviews()] == ["c3"]  # another tool still waits
    assert agent.statuses == [pb.AGENT_STATUS_AWAITING_APPROVAL]
    assert await agent.admit(guard, write("c.md", "c4")) is None  # later calls of the tool run
    guard.decide("c3", approve=False)
    result = await asyncio.wait_for(command, 5)
    assert result is not None and "no reason given" in result.error
    assert agent.statuses[-1] == pb.AGENT_STATUS_RUNNING
    decided = [e.review_decided for e in events(store, session, "review_decided")]
    assert [(d.call_id, d.approved, d.remember) for d in decided] == [
        ("c1", True, True),
        ("c2", True, False),
        ("c3", False, False),
    ]


async def test_remember_with_a_denial_denies_the_tool_or_command_for_the_session_and_the_calls_waiting(
    store: Store, workspace: Path
) -> None:
    session = store.create_session(workspace, "m", "p")
    agent = Agent(store, session, "main")
    guard = Guard(Settings(workspace=workspace), mode="ask", answerable=True)
    first = asyncio.create_task(agent.admit(guard, write("a.md", "c1")))
    second = asyncio.create_task(agent.admit(guard, write("b.md", "c2")))
    command = asyncio.create_task(agent.admit(guard, bash("make", "c3")))
    await until(lambda: len(guard.pending_reviews()) == 3)
    guard.decide("c1", approve=False, reason="not today", remember=True)
    denied = [await asyncio.wait_for(t, 5) for t in (first, second)]
    assert "They denied every write_file call for the rest of the session" in denied[0].error  # type: ignore[union-attr]
    assert "the person denied every write_file call for the rest of the session (their reason: not today)" in (
        denied[1].error  # type: ignore[union-attr]
    )
    assert [d.call_id for d in guard.pending_reviews()] == ["c3"]  # another tool still waits
    guard.mode = "auto"
    later = await agent.admit(guard, write("c.md", "c4"))  # blocked without asking, in auto mode too
    assert later is not None and "Blocked by the guard (person)" in later.error
    assert guard.check(pb.ToolCall(id="c5", name="write_file", arguments="{}")).verdict == pb.GUARD_VERDICT_BLOCK
    guard.decide("c3", approve=False, remember=True)
    await asyncio.wait_for(command, 5)
    assert "(no reason given)" in guard.check(pb.ToolCall(name="bash", arguments='{"command": "make"}')).reason
    assert guard.check(pb.ToolCall(name="bash", arguments='{"command": "make test"}')).verdict != pb.GUARD_VERDICT_BLOCK
    decided = [e.review_decided for e in events(store, session, "review_decided")]
    assert [(d.call_id, d.approved, d.remember) for d in decided] == [
        ("c1", False, True),
        ("c2", False, False),
        ("c3", False, True),
    ]


async def test_deciding_an_unknown_call_names_the_waiting_ones(workspace: Path) -> None:
    guard = Guard(Settings(workspace=workspace), mode="ask", answerable=True)
    with pytest.raises(NotWaiting, match="no call 'nope' waits for review"):
        guard.decide("nope", approve=True)


async def test_a_cancelled_wait_leaves_no_pending_review(store: Store, workspace: Path) -> None:
    session = store.create_session(workspace, "m", "p")
    agent = Agent(store, session, "main")
    guard = Guard(Settings(workspace=workspace), mode="ask", answerable=True)
    waiting = asyncio.create_task(agent.admit(guard, bash("make")))
    await until(lambda: guard.pending_reviews())
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert guard.pending_reviews() == []
    with pytest.raises(NotWaiting):
        guard.decide("c1", approve=True)


# --- what the person sees -----------------------------------------------------------------------------


def test_a_write_and_an_edit_are_shown_as_diffs(workspace: Path) -> None:
    (workspace / "a.py").write_text("x = 1\ny = 2\n")
    args = {"path": "a.py", "old_text": "y = 2", "new_text": "y = 3"}
    edit = pb.ToolCall(name="edit_file", arguments=json.dumps(args))
    shown = describe_call(edit, workspace)
    assert "-y = 2" in shown and "+y = 3" in shown and "a/a.py" in shown
    overwrite = pb.ToolCall(name="write_file", arguments=json.dumps({"path": "a.py", "content": "z = 0\n"}))
    assert "-x = 1" in describe_call(overwrite, workspace) and "+z = 0" in describe_call(overwrite, workspace)
    new = pb.ToolCall(name="write_file", arguments=json.dumps({"path": "new.txt", "content": "hello\n"}))
    assert "new file new.txt" in describe_call(new, workspace) and "+hello" in describe_call(new, workspace)
    missing = pb.ToolCall(name="edit_file", arguments=json.dumps({"path": "a.py", "old_text": "q", "new_text": "r"}))
    assert "old_text not found" in describe_call(missing, workspace)


def test_commands_and_urls_are_shown_whole_with_control_characters_escaped(workspace: Path) -> None:
    command = "printf '\x1b]0;pwned\x07' && rm -rf build"
    shown = describe_call(bash(command), workspace)
    assert "\x1b" not in shown and "\\x1b]0;pwned\\x07" in shown and "rm -rf build" in shown
    fetch = pb.ToolCall(name="web_fetch", arguments=json.dumps({"url": "https://example.com/a?b=c"}))
    assert describe_call(fetch, workspace) == "fetch https://example.com/a?b=c"
    tmux = pb.ToolCall(name="tmux", arguments=json.dumps({"action": "new", "window": "srv", "command": "npm start"}))
    assert describe_call(tmux, workspace) == "tmux new in window srv\n$ npm start"


async def test_a_review_carries_what_the_person_is_shown_and_a_record_does_not(store: Store, workspace: Path) -> None:
    (workspace / "a.py").write_text("x = 1\n")
    session = store.create_session(workspace, "m", "p")
    agent = Agent(store, session, "main")
    guard = Guard(Settings(workspace=workspace), mode="ask", answerable=False)
    edit = pb.ToolCall(
        id="c1", name="edit_file", arguments=json.dumps({"path": "a.py", "old_text": "1", "new_text": "2"})
    )
    await agent.admit(guard, edit)
    await agent.admit(guard, pb.ToolCall(id="c2", name="read_file", arguments='{"path": "a.py"}'))
    reviewed, recorded = (e.guard_decision for e in events(store, session, "guard_decision"))
    assert reviewed.verdict == REVIEW and reviewed.shown == describe_call(edit, workspace)
    assert "-x = 1" in reviewed.shown and "+x = 2" in reviewed.shown
    assert recorded.verdict == RECORD and recorded.shown == ""
