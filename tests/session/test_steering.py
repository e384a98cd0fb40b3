"""Steering any agent (Session.send(prompt, agent_id)), through the real Session, loop, tree,
SQLite store, tmux server and litellm's HTTP to the scripted server: a note reaches a running
child at its next request while the root and its sibling go on; a note to the root wakes it
and leaves its children running; a finished child says it finished."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.engine.test_agents import create, route, user_texts
from tests.scripted_server import ScriptedModel, call, reply
from tests.waiting import EventLog
from workbench.config.settings import Settings
from workbench.pb import workbench_pb2 as pb
from workbench.session.errors import SessionError
from workbench.session.session import Session

CHILD_NOTE = "NOTE for one: write it in blue"
ROOT_NOTE = "NOTE for main: keep waiting for both"

pytestmark = pytest.mark.tmux


def answer_if(note: str, with_note: str, without: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def answer(body: dict[str, Any]) -> dict[str, Any]:
        return reply(with_note if any(note in t for t in user_texts(body)) else without)

    return answer


def root_reply(body: dict[str, Any]) -> dict[str, Any]:
    texts = "\n".join(user_texts(body))
    both = texts.count("completed") >= 2 or ("(a1) completed" in texts and "(a2) completed" in texts)
    return reply("Both done." if both else "Waiting.")


@pytest.mark.slow
async def test_steering_a_running_child_changes_its_next_request_and_nothing_else_stops(
    settings: Settings, scripted_model: ScriptedModel
) -> None:
    route(
        scripted_model,
        {
            "ROOT": [reply("", create("CHILD ONE: draw", name="one"), create("CHILD TWO: paint", name="two"))]
            + [root_reply] * 10,
            "CHILD ONE": [
                reply("", call("bash", command="sleep 1.5; echo one")),
                answer_if(CHILD_NOTE, "one: drawn in blue", "one: drawn"),
            ],
            "CHILD TWO": [reply("", call("bash", command="sleep 2.5; echo two")), reply("two: painted")],
        },
    )
    log = EventLog()
    session = await Session.open(settings, answerable=False)
    session.subscribe(log)
    try:
        session.send("ROOT task")
        await log.until(lambda es: len([e for e in log.of("tool_call_started") if e.agent_id in ("a1", "a2")]) == 2)
        session.send(CHILD_NOTE, agent_id="a1")
        session.send(ROOT_NOTE)  # the root, while it waits on its children
        outcome = await session.wait()
        with pytest.raises(SessionError, match=r"agent one \(a1\) has finished \(completed\).*CHILD ONE: draw"):
            session.send("too late", agent_id="a1")
        with pytest.raises(SessionError, match="no agent 'a9'"):
            session.send("nobody", agent_id="a9")
    finally:
        await session.close()
    assert outcome.status == pb.RUN_STATUS_FINISHED and outcome.text == "Both done."
    finished = {e.agent_finished.agent_id: e.agent_finished for e in log.of("agent_finished")}
    assert finished["a1"].status == finished["a2"].status == pb.AGENT_STATUS_COMPLETED
    assert finished["a1"].result == "one: drawn in blue" and finished["a2"].result == "two: painted"
    # the child's next request holds the note, as the person's words, after its tool result
    one = [r for r in scripted_model.requests if "CHILD ONE" in user_texts(r)[0]]
    assert len(one) == 2 and CHILD_NOTE not in str(one[0]["messages"])
    assert one[1]["messages"][-1] == {"role": "user", "content": CHILD_NOTE}
    notes = [e for e in log.of("message", "a1") if e.message.role == pb.ROLE_USER and e.message.text == CHILD_NOTE]
    assert len(notes) == 1 and notes[0].message.author == pb.AUTHOR_PERSON
    assert [e.prompt_queued.text for e in log.of("prompt_queued", "a1")] == [CHILD_NOTE]
    # the root read its note while both children still ran, and no child was cancelled
    two = [r for r in scripted_model.requests if "CHILD TWO" in user_texts(r)[0]]
    assert len(two) == 2
    root = [r for r in scripted_model.requests if user_texts(r)[0] == "ROOT task"]
    noted = next(i for i, r in enumerate(root) if ROOT_NOTE in user_texts(r))
    assert not any("[Inbox" in t for t in user_texts(root[noted])), "the root's note came with the children's ends"
    assert not [e for e in log.of("agent_finished") if e.agent_finished.status == pb.AGENT_STATUS_CANCELLED]
