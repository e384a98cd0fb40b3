"""The texts the model reads around its calls' results, pinned whole (issue 36 item 8): the closing
line after the last results on the wire (content, paths, nothing found, a pending child; none after a
failure of a real call), the results of calls it wrote as text given back as one user message with
their closing line, and why a call written as text cannot run (unreadable JSON with the spot and the
call written right, a tool not offered, arguments not an object). Results come from real tool calls
on a real workspace; the wire from the gateway's own `messages_to_wire`. A change of wording is a
reviewed diff (`pytest --inline-snapshot=review`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from inline_snapshot import snapshot

from tests.words import steady, tool_ctx, transcript
from workbench.engine.calls_in_text import find_calls
from workbench.model.gateway import messages_to_wire
from workbench.pb import workbench_pb2 as pb
from workbench.tools.registry import Toolbox, ToolContext

BOX = Toolbox(["read_file", "ls", "grep", "edit_file", "bash"])
SCHEMAS = {name: t.schema for name, t in BOX.tools.items()}


async def turn(ctx: ToolContext, *calls: tuple[str, dict[str, Any]], from_text: bool = False) -> str:
    """One reply's calls run for real, and the wire the model reads next (the last results
    reminded with their closing line, as for a model that gets it), from the first result on."""
    reply = pb.Message(role=pb.ROLE_ASSISTANT, text="Looking." if from_text else "")
    messages = [pb.Message(role=pb.ROLE_USER, text="the task"), reply]
    for n, (name, args) in enumerate(calls):
        call = reply.tool_calls.add(id=f"c{n}", name=name, arguments=json.dumps(args), from_text=from_text)
        result = await BOX.invoke(call, ctx.for_call(call.id))
        messages.append(pb.Message(role=pb.ROLE_TOOL, tool_result=result))
    wire = messages_to_wire(messages, remind=True)
    return steady(transcript(wire[2:]), (ctx.workspace, "<ws>"))


def workspace_ctx(workspace: Path, tmp_path: Path) -> ToolContext:
    (workspace / "app.toml").write_text('port = 8080\nlog_level = "info"\n')
    (workspace / "docs").mkdir()
    return tool_ctx(workspace, tmp_path)


async def test_the_closing_line_after_real_calls(workspace: Path, tmp_path: Path) -> None:
    ctx = workspace_ctx(workspace, tmp_path)
    assert await turn(ctx, ("read_file", {"path": "app.toml"})) == snapshot("""\
[tool]
     1	port = 8080
     2	log_level = "info"

If this answers the task, reply now with the answer in plain words, without a JSON block; else make the next call.\
""")
    assert await turn(ctx, ("ls", {})) == snapshot("""\
[tool]
docs/
app.toml  (31 B)

That lists paths, not what the files hold: if the task asks what a file holds, read it first (read_file) and answer from its text; if the paths themselves answer the task, reply now with them in plain words; else make the next call.\
""")
    assert await turn(ctx, ("grep", {"pattern": "timeout"})) == snapshot("""\
[tool]
no matches for 'timeout' in the workspace; 1 file searched; the search is case-sensitive (start the pattern with (?i) to ignore case)

It found nothing: no line of the 1 file searched matches 'timeout' (case-sensitive). If finding nothing answers the task, reply with that in plain words; else make the next call.\
""")
    assert await turn(ctx, ("read_file", {"path": "app.tml"})) == snapshot("""\
[tool]
Error: app.tml does not exist; did you mean app.toml? Send read_file(path="app.toml")\
""")
    assert await turn(ctx, ("read_file", {"path": "app.toml"}), ("ls", {})) == snapshot("""\
[tool]
     1	port = 8080
     2	log_level = "info"

[tool]
docs/
app.toml  (31 B)

That lists paths, not what the files hold: if the task asks what a file holds, read it first (read_file) and answer from its text; if the paths themselves answer the task, reply now with them in plain words; else make the next call.\
""")


async def test_results_of_calls_written_as_text(workspace: Path, tmp_path: Path) -> None:
    ctx = workspace_ctx(workspace, tmp_path)
    assert await turn(ctx, ("read_file", {"path": "app.toml"}), from_text=True) == snapshot("""\
[user]
Result of your read_file call:
     1	port = 8080
     2	log_level = "info"

If this answers the task, reply now with the answer in plain words, without a JSON block; else make the next call.\
""")
    assert await turn(ctx, ("ls", {}), from_text=True) == snapshot("""\
[user]
Result of your ls call:
docs/
app.toml  (31 B)

That lists paths, not what the files hold: if the task asks what a file holds, read it first (read_file) and answer from its text; if the paths themselves answer the task, reply now with them in plain words; else make the next call.\
""")
    assert await turn(ctx, ("grep", {"pattern": "timeout"}), from_text=True) == snapshot("""\
[user]
Result of your grep call:
no matches for 'timeout' in the workspace; 1 file searched; the search is case-sensitive (start the pattern with (?i) to ignore case)

It found nothing: no line of the 1 file searched matches 'timeout' (case-sensitive). If finding nothing answers the task, reply with that in plain words; else make the next call.\
""")
    assert await turn(ctx, ("grep", {"pattern": "x", "glob": "*.rs"}), from_text=True) == snapshot("""\
[user]
Result of your grep call:
Error: the glob '*.rs' matched no file in the workspace, so nothing was searched; the workspace holds 1 .toml file

A call failed (the glob '*.rs' matched no file in the workspace, so nothing was searched): correct it as its error says and send it again as a JSON block.\
""")
    assert await turn(ctx, ("read_file", {"path": "app.tml"}), from_text=True) == snapshot("""\
[user]
Result of your read_file call:
Error: app.tml does not exist; did you mean app.toml? Send read_file(path="app.toml")

A call failed: correct it as its error says and send it again as a JSON block.\
""")
    assert await turn(ctx, ("read_file", {}), from_text=True) == snapshot("""\
[user]
Result of your read_file call:
Error: invalid arguments: missing required argument 'path'. Expected the schema {"type":"object","properties":{"path":{"type":"string","description":"file path relative to the workspace root (or absolute)"},"offset":{"type":"integer","description":"first line to read, 1-based; a negative number counts from the end (-20: the last 20 lines)","default":1},"limit":{"type":"integer","description":"largest number of lines to read","default":2000}},"required":["path"],"additionalProperties":false}

A call failed: correct it as its error says and send it again as a JSON block.\
""")
    assert await turn(ctx, ("read_file", {"path": "app.toml"}), ("ls", {}), from_text=True) == snapshot("""\
[user]
Result of your read_file call:
     1	port = 8080
     2	log_level = "info"

Result of your ls call:
docs/
app.toml  (31 B)

That lists paths, not what the files hold: if the task asks what a file holds, read it first (read_file) and answer from its text; if the paths themselves answer the task, reply now with them in plain words; else make the next call.\
""")


def test_the_closing_line_after_a_pending_child() -> None:
    """An async subagent's start (metadata `pending`, subagent.py): as text, and as a real call."""
    started = pb.ToolResult(call_id="c0", name="subagent", output="Started subagent helper (a1) in async mode.")
    started.metadata["pending"] = True
    for from_text in (True, False):
        reply = pb.Message(role=pb.ROLE_ASSISTANT)
        reply.tool_calls.add(id="c0", name="subagent", arguments="{}", from_text=from_text)
        wire = messages_to_wire([reply, pb.Message(role=pb.ROLE_TOOL, tool_result=started)], remind=True)
        assert transcript(wire[1:]) == (
            snapshot("""\
[user]
Result of your subagent call:
Started subagent helper (a1) in async mode.

Its result comes later, in your Inbox: do not guess it. Reply without a JSON block to wait for it, or make the next call.\
""")
            if from_text
            else snapshot("""\
[tool]
Started subagent helper (a1) in async mode.\
""")
        )


def texts(reply: str, lenient: bool = False) -> list[str]:
    calls, _ = find_calls(reply, BOX.tools, schemas=SCHEMAS, lenient=lenient)
    return [c.error or f"{c.name} {c.arguments}" for c in calls]


def test_why_a_call_written_as_text_cannot_run() -> None:
    commented = '```json\n{\n  "name": "grep",\n  "arguments": {\n    "pattern": "def login",  // the pattern\n    "glob": "*.py"\n  }\n}\n```'
    assert texts(commented) == snapshot(
        [
            """\
your reply's text holds what looks like a tool call, but it is not valid JSON (Expecting property name enclosed in double quotes: line 4 column 30 (char 66)): '{\\n  "name": "grep",\\n  "arguments": {\\n    "pattern": "def login",  // the pattern\\n    "glob": "*.py"\\n  }\\n}'.
It stops being readable at line 4, column 30:
    "pattern": "def login",  // the pattern
                             ^
Write the call as strict JSON: double quotes, no comments, no trailing commas, for example {"name": "grep", "arguments": {"pattern": "...", "glob": "..."}} (optional arguments: path, glob).\
"""
        ]
    )
    assert texts('<tool_call>{"name": "read_file", "arguments": "{path: a.txt}"}</tool_call>') == snapshot(
        [
            'the arguments of the read_file call written in your reply\'s text are not valid JSON (Expecting property name enclosed in double quotes: line 1 column 2 (char 1)). Write the call as strict JSON: double quotes, no comments, no trailing commas, for example {"name": "read_file", "arguments": {"path": "..."}} (optional arguments: offset, limit).'
        ]
    )
    assert texts('<tool_call>{"name": "read_file", "arguments": ["a.txt"]}</tool_call>') == snapshot(
        [
            'the arguments of the read_file call written in your reply\'s text are not a JSON object. Call one of the offered tools with its arguments as one JSON object: {"name": "<tool>", "arguments": {...}}.'
        ]
    )
    assert texts('<tool_call>{"name": "cat", "arguments": {"path": "a.txt"}}</tool_call>') == snapshot(
        [
            'your reply\'s text holds a call to \'cat\', which is not one of the offered tools (read_file, ls, grep, edit_file, bash). To run the program cat, call bash: {"name": "bash", "arguments": {"command": "cat a.txt"}}. Call one of the offered tools with its arguments as one JSON object: {"name": "<tool>", "arguments": {...}}.'
        ]
    )
    assert texts('<tool_call>{"name": "get_config", "arguments": {"file": "app.toml"}}</tool_call>') == snapshot(
        [
            'your reply\'s text holds a call to \'get_config\', which is not one of the offered tools (read_file, ls, grep, edit_file, bash). To read \'app.toml\', call read_file: {"name": "read_file", "arguments": {"path": "app.toml"}}. Call one of the offered tools with its arguments as one JSON object: {"name": "<tool>", "arguments": {...}}.'
        ]
    )
    assert texts('<tool_call>{"tool_name": "pytest", "args": "-q"}</tool_call>') == snapshot(
        [
            'the arguments of the pytest call written in your reply\'s text are not valid JSON (Expecting value: line 1 column 1 (char 0)). Call one of the offered tools with its arguments as one JSON object: {"name": "<tool>", "arguments": {...}}.'
        ]
    )
    assert texts('<tool_call>{"arguments": {"path": "a.txt"}}</tool_call>') == snapshot(
        [
            'your reply\'s text holds what looks like a tool call, but it is not an object with a "name" and "arguments": \'{"arguments": {"path": "a.txt"}}\'. Call one of the offered tools with its arguments as one JSON object: {"name": "<tool>", "arguments": {...}}.'
        ]
    )
    assert texts(
        "<tool_call>{'name': 'read_file', 'arguments': {'path': 'a.txt',}}</tool_call>", lenient=True
    ) == snapshot(['read_file {"path": "a.txt"}'])
