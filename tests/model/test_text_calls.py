"""The closing line after a turn's results follows what they are (issue 28, item 2): content may
be answered from, paths are to be read first, an empty search says why, a failure says to fix."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.conftest import run_agent
from tests.scripted_server import ScriptedModel, call, reply
from workbench.config.settings import Settings
from workbench.model.gateway import messages_to_wire
from workbench.model.text_calls import ECHO_FIX, ECHO_NEXT, ECHO_READ, ECHO_WAIT, closing_line, echo_empty
from workbench.pb import workbench_pb2 as pb


def result(name: str = "read_file", *, error: str = "", **flags: object) -> pb.ToolResult:
    out = pb.ToolResult(name=name, output="x", error=error, is_error=bool(error))
    out.metadata.update(flags)
    return out


def test_the_line_follows_the_kind_and_the_strongest_kind_wins() -> None:
    content, paths = result(), result("glob", discovery=True)
    empty = result("grep", empty=True, why_empty="no line of the 2 files searched matches 'HOST'")
    assert closing_line([content]) == ECHO_NEXT
    assert closing_line([paths]) == closing_line([content, paths]) == ECHO_READ
    assert closing_line([empty, paths]) == echo_empty("no line of the 2 files searched matches 'HOST'")
    assert echo_empty("x").startswith("\n\nIt found nothing: x. If finding nothing answers the task")
    assert closing_line([result("subagent", pending=True), empty]) == ECHO_WAIT
    assert closing_line([content, result(error="boom")]) == ECHO_FIX
    missed = result("grep", error="...", empty=True, why_empty="the glob 'src/*.py' matched no file")
    assert closing_line([missed]) == (
        "\n\nA call failed (the glob 'src/*.py' matched no file): correct it as its error says and send it "
        "again as a JSON block."
    )
    assert closing_line([result("bash", error="timed out", partial=True)]) == ECHO_NEXT  # printed: content


def test_real_calls_get_no_line_after_a_failure_or_a_start() -> None:
    assert closing_line([result(error="boom")], as_text=False) == ""
    assert closing_line([result("subagent", pending=True)], as_text=False) == ""
    assert closing_line([result("ls", discovery=True)], as_text=False) == ECHO_READ


def conversation(*results: pb.ToolResult, from_text: bool) -> list[pb.Message]:
    reply_ = pb.Message(role=pb.ROLE_ASSISTANT, text="calling")
    for n, r in enumerate(results):
        c = reply_.tool_calls.add(id=f"c{n}", name=r.name, arguments="{}")
        c.from_text = from_text
        r.call_id = c.id
    return [pb.Message(role=pb.ROLE_USER, text="task"), reply_] + [
        pb.Message(role=pb.ROLE_TOOL, tool_result=r) for r in results
    ]


def test_text_calls_of_one_reply_go_back_in_one_message_with_one_line() -> None:
    wire = messages_to_wire(conversation(result(), result("glob", discovery=True), from_text=True))
    assert [m["role"] for m in wire] == ["user", "assistant", "user"]
    assert wire[2]["content"] == ("Result of your read_file call:\nx\n\nResult of your glob call:\nx" + ECHO_READ)


def test_real_calls_get_the_line_only_with_the_reminder_and_only_at_the_end() -> None:
    messages = conversation(result("ls", discovery=True), from_text=False)
    assert messages_to_wire(messages)[-1]["content"] == "x"
    assert messages_to_wire(messages, remind=True)[-1]["content"] == "x" + ECHO_READ


# --- through the loop: what the runs did, with the lines they get now ------------------


def last_tool_text(body: dict[str, Any]) -> str:
    return [m for m in body["messages"] if m["role"] in ("tool", "user")][-1]["content"]


async def test_after_a_glob_that_found_the_file_the_model_is_told_to_read_it_not_to_answer(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    """Issue 28, failure 1: told "if this answers the task, reply now" after a glob that listed
    config/server.toml, the 1.5B model answered "The port is 8080" without reading it."""
    (workspace / "config").mkdir()
    (workspace / "config/server.toml").write_text("port = 9090\n")
    scripted_model.add(
        reply("", call("glob", pattern="**/server.toml")),
        reply("", call("read_file", path="config/server.toml")),
        reply("The port is 9090."),
    )
    run = await run_agent(settings, "What port does server.toml set?", ["glob", "read_file"])
    assert run.outcome.text == "The port is 9090."
    after_glob, after_read = (last_tool_text(r) for r in scripted_model.requests[1:])
    assert after_glob == "config/server.toml" + ECHO_READ
    assert after_read.endswith(ECHO_NEXT)


async def test_a_text_call_grep_that_found_no_line_says_what_was_searched(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    (workspace / "app.py").write_text("PORT = 1\n")
    (workspace / "main.py").write_text("import app\n")
    block = '```json\n{"name": "grep", "arguments": {"pattern": "HOST"}}\n```'
    scripted_model.add(reply(block), reply("HOST is not set anywhere."))
    await run_agent(settings, "Where is HOST set?", ["grep"])
    echoed = last_tool_text(scripted_model.requests[1])
    assert echoed.startswith("Result of your grep call:\nno matches for 'HOST' in the workspace; 2 files searched")
    assert echoed.endswith(echo_empty("no line of the 2 files searched matches 'HOST' (case-sensitive)"))


async def test_a_text_call_grep_whose_glob_matched_nothing_is_a_failed_call_with_its_cause(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    """Issue 28, failure 2: "no matches ... 0 files searched" was answered as "No matches found."."""
    (workspace / "app.py").write_text("PORT = 1\n")
    block = '```json\n{"name": "grep", "arguments": {"pattern": "PORT", "glob": "src/**/*.py"}}\n```'
    scripted_model.add(reply(block), reply("ok"))
    await run_agent(settings, "Where is PORT set?", ["grep"])
    echoed = last_tool_text(scripted_model.requests[1])
    assert "the workspace's 1 .py file is at the top level: app.py" in echoed
    assert echoed.endswith(
        "A call failed (the glob 'src/**/*.py' matched no file in the workspace, so nothing was searched): "
        "correct it as its error says and send it again as a JSON block."
    )
