"""`workbench export` as Markdown: the root first, each message labelled by who wrote it, a
partial reply kept. A real run (scripted model server, real SQLite) and a fixed event stream."""

from __future__ import annotations

import pytest

from tests.conftest import run_agent
from tests.scripted_server import Router, ScriptedModel, call, reply
from tests.tui_events import EventLog
from workbench.cli.commands.export import export, markdown
from workbench.config.settings import Settings
from workbench.pb import workbench_pb2 as pb


@pytest.mark.tmux  # a real run (its tmux server starts only for a shell; marked to be safe)
async def test_the_parent_comes_first_and_each_message_says_who_wrote_it(
    settings: Settings, scripted_model: ScriptedModel
) -> None:
    router = Router(
        CHILD=[reply("child done")],
        parent=[
            reply("", call("subagent", {"action": "create", "mode": "async", "name": "kid", "prompt": "CHILD: x"})),
            reply("waiting"),
            reply("all done"),
        ],
    )
    scripted_model.add(*[router] * 5)
    run = await run_agent(settings, "parent task")
    text = "\n".join(export(settings, run.events[0].session_id, "md"))
    assert text.index("**Person:** parent task") < text.index("## subagent kid")  # the parent's prompt first
    assert "**Task from main:** CHILD: x" in text  # the child's prompt, written by its parent
    assert "**Inbox:** [Inbox: 1 item]" in text  # the delivery of its result, not the person's words
    assert text.count("**Person:**") == 1


def test_an_interrupted_reply_is_kept_as_partial() -> None:
    log = EventLog()
    log.spawn("main", "main", "tell a long story")
    log.run("tell a long story")
    log.add("main", "text_delta", pb.TextDelta(text="Once upon "))
    log.add("main", "text_delta", pb.TextDelta(text="a time"))
    log.add("main", "run_finished", pb.RunFinished(status=pb.RUN_STATUS_CANCELLED, reason="cancelled"))
    info = pb.SessionInfo(id="s1", title="story")
    agents = [pb.AgentInfo(id="main", name="main")]
    text = "\n".join(markdown(info, agents, log.events))
    assert "**Agent (interrupted, partial):** Once upon a time" in text
    assert "run cancelled: cancelled" not in text and "_run cancelled_" in text


def test_a_reason_that_repeats_its_status_is_said_once() -> None:
    log = EventLog()
    log.spawn("main", "main", "loop")
    log.run("loop")
    log.spawn("a1", "kid", "x", parent="main")
    finished = pb.AgentFinished(agent_id="a1", status=pb.AGENT_STATUS_CANCELLED, cause="cancelled by main")
    log.add("a1", "agent_finished", finished)
    reason = "stopped: agent main repeated bash(ls) 3 times"
    log.add("main", "run_finished", pb.RunFinished(status=pb.RUN_STATUS_STOPPED, reason=reason))
    info = pb.SessionInfo(id="s1", title="loop")
    agents = [pb.AgentInfo(id="main", name="main"), pb.AgentInfo(id="a1", name="kid", parent_id="main")]
    text = "\n".join(markdown(info, agents, log.events))
    assert "_run stopped: agent main repeated bash(ls) 3 times_" in text and "stopped: stopped" not in text
    assert "_was cancelled by main_" in text and "cancelled: cancelled" not in text
