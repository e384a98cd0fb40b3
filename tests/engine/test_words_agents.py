"""The texts of subagents the model reads, pinned whole (issue 36 item 8): the subagent tool's
answers and refusals (list, cancel, message, a bad create, a child's answer, a started async child),
the Inbox message that brings a child's end (completed, failed, timed out, with the hint on an
undone task) and another agent's message, and the turn limit as a child's cause. Through the real
tree, loop and SQLite store and litellm's HTTP to the scripted server (`run_agent`), the Inbox's own
`drain_text` for the item kinds. A change of wording is a reviewed diff (`pytest --inline-snapshot=review`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from inline_snapshot import snapshot

from tests.conftest import run_agent
from tests.engine.test_agents import create, route
from tests.scripted_server import ScriptedModel, call, reply
from tests.words import transcript
from workbench.config.settings import Settings
from workbench.core.feedback import model_text
from workbench.engine.inbox import Inbox
from workbench.pb import workbench_pb2 as pb


async def test_the_subagent_tools_refusals(settings: Settings, scripted_model: ScriptedModel) -> None:
    settings.max_total_children = 1
    sent = [
        call("subagent", action="list"),
        call("subagent", action="cancel", prompt="look at the logs"),
        call("subagent", action="cancel", id="a9"),
        call("subagent", action="message", id="main", text="hello"),
        call("subagent", action="message", id="a9", text="hello"),
        call("subagent", action="message", id="main"),
        call("subagent", action="create", text="count the files"),
        call("subagent", action="create", prompt="count the files", tools=["read_file", "web_fetch"]),
        call("subagent", action="create", prompt="count the files", timeout=-5),
        call("subagent", action="create", prompt="  "),
        create("COUNT: count the files", mode="sync", name="counter"),
        create("AGAIN: count them again", mode="sync"),
        call("subagent", action="cancel", id="a1"),
        call("subagent", action="message", id="a1", text="thanks"),
    ]
    route(scripted_model, {"ROOT": [*[reply("", c) for c in sent], reply("done")], "COUNT": [reply("3 files")]})
    run = await run_agent(settings, "ROOT: try the subagent tool", ["subagent", "read_file"])
    assert [model_text(r) for r in run.results()] == snapshot(
        [
            "You have started no subagents.",
            "Error: cancel needs the subagent's id; call subagent(action='list') to see them (you have no subagents: to start one on this prompt, call subagent with action='create')",
            "Error: no subagent 'a9' of main; you have started no subagents",
            "Error: an agent cannot message itself",
            "Error: no agent 'a9'; you have started no subagents",
            "Error: message needs text: what to tell the agent",
            'Error: prompt is required to create a subagent; you sent the task as text, which is for action=\'message\'. Send subagent(action="create", mode="async", prompt="count the files")',
            "Error: unknown tool(s) in tools: web_fetch; a subagent may use these tools of its parent: subagent, read_file",
            "Error: timeout is in seconds and must be 0 (none) or more, got -5",
            "Error: prompt is required to create a subagent: the task it should do, self-contained",
            "3 files",
            "Error: total subagent limit reached: this run has started 1 of at most 1 subagents (setting max_total_children); do the rest yourself or wait for running subagents and reuse their results",
            "Error: subagent a1 has already ended (completed); nothing to cancel",
            "Error: agent a1 has already ended (completed); messages reach only queued or running agents",
        ]
    )


@pytest.mark.slow  # the children's timings keep their order on a loaded machine: about 12 s
async def test_children_and_what_comes_back(settings: Settings, scripted_model: ScriptedModel) -> None:
    """A sync child's answer; async children started (the first still running when the next
    start: its reply takes 12 s), one messaged and cancelled, one timing out after 8 s: their
    ends come in the Inbox in that order."""
    route(
        scripted_model,
        {
            "ROOT": [
                reply("", create("CALC: what is 6 times 7?", mode="sync", name="calc")),
                reply("", create("LISTER: list the files", name="lister")),
                reply("", create("SLEEPER: wait a while", name="sleeper", timeout=8)),
                reply("", create("WAITER: wait for a message", name="waiter")),
                reply("", call("subagent", action="message", id="a4", text="hurry up")),
                reply("", call("subagent", action="list")),
                reply("", call("subagent", action="cancel", id="a4")),
                *[reply("waiting")] * 8,
            ],
            "CALC": [reply("42")],
            "LISTER": [reply("two files: a.txt and b.txt", delay=12)],
            "SLEEPER": [reply("still thinking", delay=30)],
            "WAITER": [reply("still waiting", delay=30)],
        },
    )
    run = await run_agent(settings, "ROOT: delegate", ["subagent", "read_file"])
    said = [model_text(r) for r in run.results()]
    listed = said.pop(5).splitlines()  # the list: its elapsed times and activities vary
    assert [line.split("\t")[:4] for line in listed] == snapshot(
        [
            ["id", "name", "mode", "status"],
            ["a1", "calc", "sync", "completed"],
            ["a2", "lister", "async", "running"],
            ["a3", "sleeper", "async", "running"],
            ["a4", "waiter", "async", "running"],
        ]
    )
    assert said == snapshot(
        [
            "42",
            "Started subagent lister (a2) in async mode: running. Its result will arrive in your Inbox; keep working, or end your turn without tool calls to wait for it. (1 running, 0 queued)",
            "Started subagent sleeper (a3) in async mode: running. Its result will arrive in your Inbox; keep working, or end your turn without tool calls to wait for it. (2 running, 0 queued)",
            "Started subagent waiter (a4) in async mode: running. Its result will arrive in your Inbox; keep working, or end your turn without tool calls to wait for it. (3 running, 0 queued)",
            "Message put in the Inbox of waiter (a4); it reads it at its next turn.",
            "Cancelled subagent a4: it is cancelled.",
        ]
    )
    inbox = [m for body in scripted_model.requests for m in body["messages"] if "[Inbox" in str(m.get("content"))]
    assert list(dict.fromkeys(transcript([m]) for m in inbox)) == snapshot(
        [
            """\
[user]
[Inbox: 1 item]
- subagent waiter (a4) was cancelled
  cause: cancelled by main\
""",
            """\
[user]
[Inbox: 1 item]
- subagent sleeper (a3) timed out
  cause: timed out after 8 s
  its task is not done: do it yourself with your tools, or start a new subagent for it\
""",
            """\
[user]
[Inbox: 1 item]
- subagent lister (a2) completed
  result: two files: a.txt and b.txt\
""",
        ]
    )


def item(**fields: Any) -> pb.InboxItem:
    return pb.InboxItem(child_id="a2", child_name="helper", **fields)


def test_the_inbox_message_for_each_kind_of_item() -> None:
    inbox = Inbox(limit=1)
    inbox.put(item(kind=pb.INBOX_KIND_COMPLETION, status=pb.AGENT_STATUS_COMPLETED, result="all 12 tests pass"))
    inbox.put(item(kind=pb.INBOX_KIND_COMPLETION, status=pb.AGENT_STATUS_FAILED, cause="model call failed: 500"))
    inbox.put(item(kind=pb.INBOX_KIND_COMPLETION, status=pb.AGENT_STATUS_TIMED_OUT, result="half done"))
    inbox.put(item(kind=pb.INBOX_KIND_COMPLETION, status=pb.AGENT_STATUS_CANCELLED, cause="cancelled by main"))
    inbox.put(item(kind=pb.INBOX_KIND_MESSAGE, text="the first note"))
    inbox.put(item(kind=pb.INBOX_KIND_MESSAGE, text="use port 8081 instead"))
    assert inbox.drain_text() == snapshot("""\
[Inbox: 5 items]
(note: 1 older message(s) were dropped because the Inbox was full)
- subagent helper (a2) completed
  result: all 12 tests pass
- subagent helper (a2) failed
  cause: model call failed: 500
  its task is not done: do it yourself with your tools, or start a new subagent for it
- subagent helper (a2) timed out
  result: half done
  its task is not done: do it yourself with your tools, or start a new subagent for it
- subagent helper (a2) was cancelled
  cause: cancelled by main
- message from helper (a2): use port 8081 instead\
""")
    bare = Inbox(hints=False)
    bare.put(item(kind=pb.INBOX_KIND_COMPLETION, status=pb.AGENT_STATUS_FAILED))
    assert bare.drain_text() == snapshot("""\
[Inbox: 1 item]
- subagent helper (a2) failed
  cause: it ended without a result or a cause\
""")


async def test_the_turn_limit_and_the_budget(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("a\n")
    settings.max_turns = 1
    scripted_model.add(reply("", call("read_file", path="a.txt")))
    run = await run_agent(settings, "read a.txt", ["read_file"])
    settings.max_turns, settings.max_tokens = 0, 20
    scripted_model.add(reply("", call("read_file", path="a.txt"), usage=(15, 10)))
    spent = await run_agent(settings, "read a.txt", ["read_file"])
    assert (run.outcome.reason, spent.outcome.reason) == snapshot(
        ("turn limit reached (1 model calls)", "token budget exhausted: 25 of 20 tokens used")
    )


async def test_what_a_child_and_a_fork_read(settings: Settings, scripted_model: ScriptedModel) -> None:
    """A child's system prompt ends with who it is and whom it answers; a fork's task says it is one."""
    route(
        scripted_model,
        {
            "ROOT": [
                reply("", create("KID: say hi", mode="sync", name="kid")),
                reply("", create("FORKED: go on from here", mode="fork", name="twin")),
                *[reply("waiting")] * 4,
            ],
            "KID": [reply("hi")],
            "FORKED": [reply("went on")],
        },
    )
    await run_agent(settings, "ROOT: delegate", ["subagent", "read_file"])
    kid = next(r["messages"] for r in scripted_model.requests if "KID:" in str(r["messages"][-1].get("content")))
    fork = next(r["messages"] for r in scripted_model.requests if "FORKED:" in str(r["messages"][-1].get("content")))
    system = kid[0]["content"]
    assert system[system.index("result itself") :] == snapshot("""\
result itself (the number, name or fact asked for, or what you changed).

You are a subagent (kid, id a1) started by agent main. Work on the task you are
given; your final answer (a reply without tool calls) is what main receives, so make it
complete and self-contained.\
""")
    assert transcript(kid[1:]) == snapshot("""\
[user]
KID: say hi\
""")
    assert transcript(fork[-1:]) == snapshot("""\
[user]
[You are a fork of the agent whose conversation is above (subagent twin, id a2). Your final answer goes back to that agent.]

FORKED: go on from here\
""")
