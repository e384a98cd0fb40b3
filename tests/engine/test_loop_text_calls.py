"""Calls written as text, read leniently for a model litellm does not know (issue 28 item 3),
through the loop, a real SQLite store and litellm's HTTP to the scripted server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests.conftest import run_agent
from tests.scripted_server import ScriptedModel, reply
from workbench.config.settings import Settings
from workbench.engine.calls_in_text import WROTE_RESULT
from workbench.pb import workbench_pb2 as pb
from workbench.session.session import Session

AUTH = "def login(user):\n    return user.active\n"
COMMENTED = (  # the block, sent fourteen times: a corrected call with a comment inside
    '```json\n{\n  "name": "grep",\n  "arguments": {\n    "pattern": "def login",  // Corrected pattern\n'
    '    "glob": "*.py"\n  }\n}\n```'
)
INVENTED = (  # the reply: an XML call, then a result the model made up
    '<tools>\n<read_file path="src/auth.py" limit="1000" />\n</tools>\n'
    "<result>\ndef login(self, username, password):\n    return True\n</result>"
)


def started(run_events: list[pb.Event]) -> list[pb.ToolCall]:
    return [e.tool_call_started.call for e in run_events if e.WhichOneof("kind") == "tool_call_started"]


def user_text(body: dict[str, object]) -> str:
    messages = body["messages"]
    assert isinstance(messages, list)
    return str(messages[-1]["content"])


async def test_a_block_with_a_comment_runs_as_a_repaired_call(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    (workspace / "auth.py").write_text(AUTH)
    scripted_model.add(reply(COMMENTED), reply("login is defined in auth.py, line 1."))
    run = await run_agent(settings, "Where is login defined?", ["grep", "read_file"])
    assert run.outcome.status == pb.RUN_STATUS_FINISHED
    (grep,) = started(run.events)
    assert grep.from_text and grep.repaired and json.loads(grep.arguments) == {"pattern": "def login", "glob": "*.py"}
    (result,) = run.results()
    assert not result.is_error and result.output == "auth.py:1:def login(user):"
    assert user_text(scripted_model.requests[1]).startswith("Result of your grep call:\nauth.py:1:def login(user):")


async def test_a_known_model_gets_the_spot_and_the_call_written_right_not_a_repair(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    """Lenient reading is for models litellm does not know: a hosted model's text is read strictly."""
    settings.model = "openai/gpt-4o"  # known to litellm's table; still served by the scripted server
    scripted_model.add(reply(COMMENTED), reply("I will write it without the comment."))
    run = await run_agent(settings, "Where is login defined?", ["grep", "read_file"])
    (grep,) = started(run.events)
    assert not grep.repaired and grep.arguments == "{}"
    (result,) = run.results()
    assert result.is_error and "It stops being readable at line 4, column 30:" in result.error
    assert '{"name": "grep", "arguments": {"pattern": "...", "glob": "..."}}' in result.error


async def test_an_xml_call_with_an_invented_result_runs_and_is_not_the_answer(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    """Issue 28, failure 4: the reply was taken as the final answer and no call ran."""
    (workspace / "src").mkdir()
    (workspace / "src/auth.py").write_text(AUTH)
    scripted_model.add(reply(INVENTED), reply("login takes one argument, user."))
    run = await run_agent(settings, "What arguments does login in src/auht.py take?", ["read_file"])
    assert run.outcome.text == "login takes one argument, user."
    (read,) = started(run.events)
    assert read.repaired and json.loads(read.arguments) == {"path": "src/auth.py", "limit": 1000}
    (result,) = run.results()
    assert result.output.startswith("     1\tdef login(user):")
    assert list(result.notes) == [WROTE_RESULT.format(name="read_file")]
    sent = user_text(scripted_model.requests[1])
    assert "def login(user):" in sent and "that text was made up, not the call's result" in sent


async def test_the_same_unreadable_block_again_and_again_stops_for_the_person(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    """The loop stop (engine/looping.py) covers a rejected block sent again: repeat_stop + 1
    model calls, not the turn limit (the issue's run: fourteen rejections, 15 calls)."""
    settings.model = "openai/gpt-4o"  # read strictly: the block stays unreadable
    scripted_model.add(*[reply(COMMENTED) for _ in range(15)])
    session = await Session.open(settings, answerable=False)
    try:
        session.send("Where is login defined?")
        outcome = await session.wait()
        await asyncio.sleep(0.3)
    finally:
        await session.close()
    assert outcome.status == pb.RUN_STATUS_STOPPED and "repeated grep" in outcome.reason
    assert len(scripted_model.requests) == settings.repeat_stop + 1


@pytest.mark.tmux
async def test_programs_written_as_tools_run_as_their_bash_calls_in_order(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    (workspace / "app.ini").write_text("[app]\n")
    mkdir = '<tools>\n{"type": "function", "function": {"name": "mkdir", "arguments": {"path": "build"}}}\n</tools>'
    cp = '<tools>\n{"name": "cp", "arguments": {"source": "app.ini", "destination": "build/app.ini"}}\n</tools>'
    scripted_model.add(reply(f"{mkdir}\n{cp}"), reply("The folder is made and app.ini is in it."))
    run = await run_agent(settings, "Make a folder named build and copy app.ini into it.")
    assert (workspace / "build" / "app.ini").read_text() == "[app]\n"
    calls = started(run.events)
    assert [(c.name, json.loads(c.arguments), c.from_text, c.repaired) for c in calls] == [
        ("bash", {"command": "mkdir build"}, True, True),
        ("bash", {"command": "cp app.ini build/app.ini"}, True, True),
    ]
    results = run.results()
    assert [r.is_error for r in results] == [False, False]
    assert results[0].notes[-1].startswith("mkdir is a program, not one of the offered tools: your mkdir call ran")
    sent = str(scripted_model.requests[1]["messages"])
    assert "To run a program, call bash with its command line." in sent
