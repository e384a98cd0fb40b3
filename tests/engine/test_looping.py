"""A looping agent stops for the person (workbench/engine/looping.py), through the real Session,
loop, guard and SQLite store and litellm's HTTP to the scripted server: the model that sends
`read_file same.txt` forever makes at most repeat_stop + 1 model calls, then waits for the person
(or, with no person to ask, its run ends STOPPED), and no model call follows the stop."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.engine.test_agents import create, route
from tests.scripted_server import ScriptedModel, call, reply
from tests.waiting import until
from workbench.config.settings import Settings
from workbench.engine.looping import JUDGE
from workbench.pb import workbench_pb2 as pb
from workbench.session.catalog import list_sessions
from workbench.session.session import Session

pytestmark = pytest.mark.tmux

FOREVER = 60  # replies the scripted model has: as many as a run could ask for


def of(events: list[pb.Event], kind: str, agent: str | None = None) -> list[Any]:
    return [getattr(e, kind) for e in events if e.WhichOneof("kind") == kind and agent in (None, e.agent_id)]


def same_read_forever(model: ScriptedModel) -> None:
    model.add(*[reply("", call("read_file", path="same.txt")) for _ in range(FOREVER)])


async def test_headless_the_looping_root_stops_after_k_plus_one_calls(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    (workspace / "same.txt").write_text("the same\n")
    same_read_forever(scripted_model)
    session = await Session.open(settings, answerable=False)
    events: list[pb.Event] = []
    session.subscribe(events.append)
    try:
        session.send("read same.txt")
        outcome = await session.wait()
        await asyncio.sleep(0.5)  # nothing more is asked of the model after the stop
    finally:
        await session.close()
    k = settings.repeat_stop
    assert k == 3
    assert len(scripted_model.requests) == k + 1
    assert outcome.status == pb.RUN_STATUS_STOPPED
    assert outcome.reason == f"stopped: agent main repeated read_file(same.txt) {k + 1} times"
    results = [r.result for r in of(events, "tool_call_finished")]
    assert [r.is_error for r in results] == [False, False, True, True]  # ran, ran, refused, stopped
    assert results[-1].metadata["loop_stopped"] and "the run stops here" in results[-1].error
    (notice,) = [n for n in of(events, "notice") if n.level == "error"]
    assert notice.text.startswith(outcome.reason)
    assert session.info.status == pb.RUN_STATUS_STOPPED


async def test_the_looping_agent_waits_for_the_person_whose_note_reaches_it(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    (workspace / "same.txt").write_text("the same\n")
    same_read_forever(scripted_model)
    session = await Session.open(settings, interactive=True)
    events: list[pb.Event] = []
    session.subscribe(events.append)
    try:
        session.send("read same.txt")
        await until(session.pending_reviews)
        (review,) = session.pending_reviews()
        await asyncio.sleep(0.5)  # it waits: no model call while the person has not answered
        assert len(scripted_model.requests) == settings.repeat_stop + 1
        assert review.judge == JUDGE and review.call.name == "read_file"
        assert "looping" in review.reason and "read_file(same.txt) 3 times" in review.reason
        root = next(a for a in session.agents() if a.id == "main")
        assert root.status == pb.AGENT_STATUS_AWAITING_APPROVAL
        session.decide(review.call_id, False, "stop reading; the answer is 'the same'")
        await until(lambda: len(scripted_model.requests) == settings.repeat_stop + 2)
        noted = scripted_model.requests[-1]["messages"]
        assert noted[-1] == {"role": "user", "content": "stop reading; the answer is 'the same'"}
        assert "the person stopped it and wrote to you" in noted[-2]["content"]
        # it repeats once more: the person is asked again at once, and lets it go on this time
        await until(lambda: session.pending_reviews() and session.pending_reviews()[0].call_id != review.call_id)
        (again,) = session.pending_reviews()
        session.decide(again.call_id, True)
        # let go on, it counts from zero: 3 more repeats (each refused by repeats.py), then it asks again
        await until(lambda: {d.call_id for d in session.pending_reviews()} - {review.call_id, again.call_id})
        assert len(scripted_model.requests) == 5 + settings.repeat_stop
        await session.cancel()
    finally:
        await session.close()
    users = [e.message for e in events if e.WhichOneof("kind") == "message" and e.message.role == pb.ROLE_USER]
    assert users[-1].author == pb.AUTHOR_PERSON and users[-1].text.startswith("stop reading")
    let_go = [r.result for r in of(events, "tool_call_finished") if r.result.call_id == again.call_id]
    assert let_go[0].metadata["repeat_refused"]
    assert "loop_stopped" not in let_go[0].metadata  # it went on: repeats refused it as before


async def test_headless_a_looping_child_fails_into_its_parents_inbox(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    (workspace / "same.txt").write_text("the same\n")
    route(
        scripted_model,
        {
            "ROOT": [reply("", create("CHILD: read same.txt")), reply("Waiting."), reply("The child looped.")],
            "CHILD": [reply("", call("read_file", path="same.txt"))] * FOREVER,
        },
    )
    session = await Session.open(settings, answerable=False)
    events: list[pb.Event] = []
    session.subscribe(events.append)
    try:
        session.send("ROOT task")
        outcome = await session.wait()
    finally:
        await session.close()
    assert outcome.status == pb.RUN_STATUS_FINISHED and outcome.text == "The child looped."
    (item,) = of(events, "inbox_item", "main")
    assert item.status == pb.AGENT_STATUS_FAILED
    assert item.cause == "stopped: agent a1 repeated read_file(same.txt) 4 times"
    child_calls = [r for r in scripted_model.requests if "CHILD" in r["messages"][1]["content"]]
    assert len(child_calls) == settings.repeat_stop + 1
    (child_run,) = of(events, "run_finished", "a1")
    assert child_run.status == pb.RUN_STATUS_STOPPED


async def test_a_stopped_run_stays_stopped_on_resume(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    (workspace / "same.txt").write_text("the same\n")
    same_read_forever(scripted_model)
    session = await Session.open(settings, answerable=False)
    try:
        session.send("read same.txt")
        await session.wait()
    finally:
        await session.close()
    resumed = await Session.open(settings, resume=session.id, answerable=False)
    try:
        (root,) = [a for a in resumed.agents() if a.id == "main"]
        assert root.status == pb.AGENT_STATUS_FAILED  # ended, not INTERRUPTED
        assert resumed.info.status == pb.RUN_STATUS_STOPPED
    finally:
        await resumed.close()
    (listed,) = list_sessions(settings)
    assert listed.status == pb.RUN_STATUS_STOPPED


async def test_repeat_stop_0_never_stops(settings: Settings, scripted_model: ScriptedModel, workspace: Path) -> None:
    (workspace / "same.txt").write_text("the same\n")
    settings.repeat_stop = 0
    settings.max_turns = 8
    same_read_forever(scripted_model)
    session = await Session.open(settings, answerable=False)
    try:
        session.send("read same.txt")
        outcome = await session.wait()
    finally:
        await session.close()
    assert outcome.status == pb.RUN_STATUS_BUDGET_EXHAUSTED and len(scripted_model.requests) == 8


def crashed_while_looping(settings: Settings, looping: list[str]) -> str:
    """A session as the store holds it after its process died: main ran (a1 its async child), and
    the agents in `looping` waited for the person on the repeat detector's review."""
    from workbench.engine.recorder import Recorder
    from workbench.engine.store import Store

    store = Store(settings.db_path)
    try:
        sid = store.create_session(settings.workspace, settings.model, "read same.txt")
        for agent_id, parent in (("main", ""), ("a1", "main")):
            status = pb.AGENT_STATUS_AWAITING_APPROVAL if agent_id in looping else pb.AGENT_STATUS_RUNNING
            info = pb.AgentInfo(id=agent_id, name=agent_id, parent_id=parent, status=status)
            info.mode = pb.SPAWN_MODE_ASYNC if parent else pb.SPAWN_MODE_ROOT
            store.save_agent(sid, info)
            if agent_id in looping:
                read = pb.ToolCall(id=f"c-{agent_id}", name="read_file", arguments='{"path": "same.txt"}')
                reason = f"agent {agent_id} is looping: it made read_file(same.txt) 3 times in a row. Let it go on"
                Recorder(store, sid, agent_id).emit(
                    pb.GuardDecision(
                        call_id=read.id, verdict=pb.GUARD_VERDICT_REVIEW, judge=JUDGE, reason=reason, call=read
                    )
                )
        store.flush()
    finally:
        store.close()
    return sid


async def test_an_agent_left_waiting_on_its_loop_review_stays_stopped_after_a_crash(
    settings: Settings, scripted_model: ScriptedModel
) -> None:
    sid = crashed_while_looping(settings, ["a1"])
    scripted_model.add(reply("noted: a1 was stopped"))
    resumed = await Session.open(settings, resume=sid, answerable=False)
    events: list[pb.Event] = []
    resumed.subscribe(events.append)
    try:
        agents = {a.id: a.status for a in resumed.agents()}
        assert agents == {"main": pb.AGENT_STATUS_INTERRUPTED, "a1": pb.AGENT_STATUS_FAILED}
        resumed.send("go on")
        await resumed.wait()
    finally:
        await resumed.close()
    (a1,) = [e.agent_finished for e in events if e.WhichOneof("kind") == "agent_finished" and e.agent_id == "a1"]
    assert a1.cause.startswith("stopped: agent a1 is looping: it made read_file(same.txt) 3 times in a row")
    told = [m["content"] for m in scripted_model.requests[-1]["messages"] if m["role"] == "user"]
    assert any("a1" in t and "stopped: agent a1 is looping" in t for t in told)  # its parent reads why


async def test_a_root_left_waiting_on_its_loop_review_leaves_the_session_stopped(settings: Settings) -> None:
    sid = crashed_while_looping(settings, ["main"])
    from workbench.engine.store import Store
    from workbench.session.rebuild import mark_interrupted

    store = Store(settings.db_path)
    try:
        ended = mark_interrupted(store, sid)
        assert {a: s for a, (s, _) in ended.items()} == {
            "main": pb.AGENT_STATUS_FAILED,
            "a1": pb.AGENT_STATUS_INTERRUPTED,
        }
        assert store.sessions(sid)[0].status == pb.RUN_STATUS_INTERRUPTED
    finally:
        store.close()
    only_root = crashed_while_looping(settings, ["main", "a1"])
    store = Store(settings.db_path)
    try:
        mark_interrupted(store, only_root)
        assert store.sessions(only_root)[0].status == pb.RUN_STATUS_STOPPED
    finally:
        store.close()
