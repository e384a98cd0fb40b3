"""The texts a model reads when its call cannot run as sent, pinned whole (issue 36 item 8): an
unknown tool (and what to call instead), arguments that are not one JSON object, arguments that do
not fit the tool's schema, the same errors with recovery hints off, an error held to the output
limit. Each is made by a real Toolbox call on a real workspace; a change of wording is a reviewed
diff (`pytest --inline-snapshot=review`, README "Run the tests")."""

from __future__ import annotations

import json
from pathlib import Path

from inline_snapshot import snapshot

from tests.words import said, tool_ctx
from workbench.tools.registry import Toolbox


async def test_arguments_that_do_not_fit_the_schema(workspace: Path, tmp_path: Path) -> None:
    box, ctx = Toolbox(), tool_ctx(workspace, tmp_path)
    assert await said(box, ctx, "read_file", {}) == snapshot(
        'Error: invalid arguments: missing required argument \'path\'. Expected the schema {"type":"object","properties":{"path":{"type":"string","description":"file path relative to the workspace root (or absolute)"},"offset":{"type":"integer","description":"first line to read, 1-based; a negative number counts from the end (-20: the last 20 lines)","default":1},"limit":{"type":"integer","description":"largest number of lines to read","default":2000}},"required":["path"],"additionalProperties":false}'
    )
    assert await said(box, ctx, "read_file", "") == snapshot(
        'Error: invalid arguments: missing required argument \'path\'. Expected the schema {"type":"object","properties":{"path":{"type":"string","description":"file path relative to the workspace root (or absolute)"},"offset":{"type":"integer","description":"first line to read, 1-based; a negative number counts from the end (-20: the last 20 lines)","default":1},"limit":{"type":"integer","description":"largest number of lines to read","default":2000}},"required":["path"],"additionalProperties":false}'
    )
    assert await said(box, ctx, "read_file", {"path": "a.txt", "file": "b.txt"}) == snapshot(
        'Error: invalid arguments: unknown argument \'file\'. Expected the schema {"type":"object","properties":{"path":{"type":"string","description":"file path relative to the workspace root (or absolute)"},"offset":{"type":"integer","description":"first line to read, 1-based; a negative number counts from the end (-20: the last 20 lines)","default":1},"limit":{"type":"integer","description":"largest number of lines to read","default":2000}},"required":["path"],"additionalProperties":false}'
    )
    assert await said(box, ctx, "read_file", {"path": "a.txt", "offset": "ten"}) == snapshot(
        'Error: invalid arguments: argument \'offset\' must be integer, got str \'ten\'. Expected the schema {"type":"object","properties":{"path":{"type":"string","description":"file path relative to the workspace root (or absolute)"},"offset":{"type":"integer","description":"first line to read, 1-based; a negative number counts from the end (-20: the last 20 lines)","default":1},"limit":{"type":"integer","description":"largest number of lines to read","default":2000}},"required":["path"],"additionalProperties":false}'
    )
    assert await said(box, ctx, "read_file", {"path": "a.txt", "offset": True}) == snapshot(
        'Error: invalid arguments: argument \'offset\' must be integer, got boolean. Expected the schema {"type":"object","properties":{"path":{"type":"string","description":"file path relative to the workspace root (or absolute)"},"offset":{"type":"integer","description":"first line to read, 1-based; a negative number counts from the end (-20: the last 20 lines)","default":1},"limit":{"type":"integer","description":"largest number of lines to read","default":2000}},"required":["path"],"additionalProperties":false}'
    )
    assert await said(box, ctx, "read_file", {"path": "a.txt", "limit": 2.5}) == snapshot(
        'Error: invalid arguments: argument \'limit\' must be integer, got float 2.5. Expected the schema {"type":"object","properties":{"path":{"type":"string","description":"file path relative to the workspace root (or absolute)"},"offset":{"type":"integer","description":"first line to read, 1-based; a negative number counts from the end (-20: the last 20 lines)","default":1},"limit":{"type":"integer","description":"largest number of lines to read","default":2000}},"required":["path"],"additionalProperties":false}'
    )
    assert await said(box, ctx, "read_file", {"path": 7}) == snapshot(
        'Error: invalid arguments: argument \'path\' must be string, got int 7. Expected the schema {"type":"object","properties":{"path":{"type":"string","description":"file path relative to the workspace root (or absolute)"},"offset":{"type":"integer","description":"first line to read, 1-based; a negative number counts from the end (-20: the last 20 lines)","default":1},"limit":{"type":"integer","description":"largest number of lines to read","default":2000}},"required":["path"],"additionalProperties":false}'
    )
    assert await said(box, ctx, "edit_file", {"path": "a.txt", "old_text": "x", "new_text": None}) == snapshot(
        'Error: invalid arguments: argument \'new_text\' must be string, got NoneType None. Expected the schema {"type":"object","properties":{"path":{"type":"string","description":"file path relative to the workspace root"},"old_text":{"type":"string","description":"the exact text to replace, with enough surrounding lines to be unique"},"new_text":{"type":"string","description":"the replacement text"},"replace_all":{"type":"boolean","description":"replace every occurrence instead of exactly one","default":false}},"required":["path","old_text","new_text"],"additionalProperties":false}'
    )
    assert await said(box, ctx, "tmux", {"action": "open"}) == snapshot(
        'Error: invalid arguments: argument \'action\' must be one of new, send, capture, wait, list, kill, got \'open\'. Expected the schema {"type":"object","properties":{"action":{"type":"string","enum":["new","send","capture","wait","list","kill"],"description":"new, send, capture, wait, list or kill"},"window":{"type":"string","description":"the window\'s name (letters, digits, . _ + -)"},"command":{"type":"string","description":"for new: the program to run, as a shell command line"},"keys":{"type":"string","description":"for send: space-separated tmux key names, e.g. \\"Enter\\", \\"C-c\\", \\"Up Up Enter\\""},"text":{"type":"string","description":"for send: literal text to type"},"lines":{"type":"integer","description":"for capture: the last N lines including scrollback (default: the visible screen)"},"pattern":{"type":"string","description":"for wait: a regex to wait for (default: wait for the program to exit)"},"timeout":{"type":"number","description":"for wait: seconds to wait (default 30)"}},"required":["action"],"additionalProperties":false}'
    )
    assert await said(box, ctx, "subagent", {"prompt": "p", "tools": ["bash", 1, {"x": 1}]}) == snapshot(
        'Error: invalid arguments: argument \'tools\'[1] must be string, got int 1; argument \'tools\'[2] must be string, got dict {\'x\': 1}. Expected the schema {"type":"object","properties":{"action":{"type":"string","enum":["create","list","cancel","message"],"description":"create (the default), list, cancel or message","default":"create"},"prompt":{"type":"string","description":"create: the task, self-contained (an async or sync child does not see this conversation)","default":""},"mode":{"type":"string","enum":["sync","async","fork"],"description":"create: sync (wait for the answer), async (result in your Inbox) or fork (async, with a copy of this conversation)","default":"async"},"name":{"type":"string","description":"create: a short name shown in lists and the Inbox","default":""},"tools":{"type":"array","items":{"type":"string"},"description":"create: the subset of your tools the child may use (default, or empty: all of yours); an MCP server\'s tools by a glob such as \\"github__*\\""},"model":{"type":"string","description":"create: another model for the child; leave empty (your own model) unless the task names one","default":""},"timeout":{"type":"number","description":"create: seconds the child may run before it is stopped (0: no limit)","default":0},"id":{"type":"string","description":"cancel, message: the subagent\'s id","default":""},"text":{"type":"string","description":"message: the text to put in that agent\'s Inbox; it reads it at its next turn","default":""}},"required":[],"additionalProperties":false}'
    )
    assert await said(box, ctx, "bash", {"command": ["ls", "-l"]}) == snapshot(
        'Error: invalid arguments: argument \'command\' must be string, got list [\'ls\', \'-l\']. Expected the schema {"type":"object","properties":{"command":{"type":"string","description":"the bash command line or script"},"timeout":{"type":"number","description":"seconds to wait before giving up (default 120); the command then keeps running in a tmux window you can inspect or stop with the tmux tool"}},"required":["command"],"additionalProperties":false}'
    )


async def test_long_or_many_problems_are_bounded(workspace: Path, tmp_path: Path) -> None:
    box, ctx = Toolbox(), tool_ctx(workspace, tmp_path)
    assert await said(box, ctx, "read_file", {"path": "a.txt", "offset": "x" * 500}) == snapshot(
        'Error: invalid arguments: argument \'offset\' must be integer, got str \'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\'… (shortened: 500 characters). Expected the schema {"type":"object","properties":{"path":{"type":"string","description":"file path relative to the workspace root (or absolute)"},"offset":{"type":"integer","description":"first line to read, 1-based; a negative number counts from the end (-20: the last 20 lines)","default":1},"limit":{"type":"integer","description":"largest number of lines to read","default":2000}},"required":["path"],"additionalProperties":false}'
    )
    assert await said(box, ctx, "read_file", {"path": "a.txt", "n" * 300: 1}) == snapshot(
        'Error: invalid arguments: unknown argument \'nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn\'… (shortened: 300 characters). Expected the schema {"type":"object","properties":{"path":{"type":"string","description":"file path relative to the workspace root (or absolute)"},"offset":{"type":"integer","description":"first line to read, 1-based; a negative number counts from the end (-20: the last 20 lines)","default":1},"limit":{"type":"integer","description":"largest number of lines to read","default":2000}},"required":["path"],"additionalProperties":false}'
    )
    many = {"path": "a.txt", **{f"extra{i}": i for i in range(14)}}
    assert await said(box, ctx, "read_file", many) == snapshot(
        'Error: invalid arguments: unknown argument \'extra0\'; unknown argument \'extra1\'; unknown argument \'extra2\'; unknown argument \'extra3\'; unknown argument \'extra4\'; unknown argument \'extra5\'; unknown argument \'extra6\'; unknown argument \'extra7\'; unknown argument \'extra8\'; unknown argument \'extra9\'; and 4 more problems. Expected the schema {"type":"object","properties":{"path":{"type":"string","description":"file path relative to the workspace root (or absolute)"},"offset":{"type":"integer","description":"first line to read, 1-based; a negative number counts from the end (-20: the last 20 lines)","default":1},"limit":{"type":"integer","description":"largest number of lines to read","default":2000}},"required":["path"],"additionalProperties":false}'
    )
    deep = {"path": "a.txt", "offset": [[[[["deep"]]]]]}
    assert await said(box, ctx, "read_file", deep) == snapshot(
        'Error: invalid arguments: argument \'offset\' must be integer, got list [[[[...]]]]. Expected the schema {"type":"object","properties":{"path":{"type":"string","description":"file path relative to the workspace root (or absolute)"},"offset":{"type":"integer","description":"first line to read, 1-based; a negative number counts from the end (-20: the last 20 lines)","default":1},"limit":{"type":"integer","description":"largest number of lines to read","default":2000}},"required":["path"],"additionalProperties":false}'
    )


async def test_arguments_that_are_not_one_json_object(workspace: Path, tmp_path: Path) -> None:
    box, ctx = Toolbox(), tool_ctx(workspace, tmp_path)
    assert await said(box, ctx, "read_file", '{"path": "a.txt"') == snapshot(
        'Error: arguments are not valid JSON (Expecting \',\' delimiter: line 1 column 17 (char 16)); send one JSON object matching the schema {"type":"object","properties":{"path":{"type":"string","description":"file path relative to the workspace root (or absolute)"},"offset":{"type":"integer","description":"first line to read, 1-based; a negative number counts from the end (-20: the last 20 lines)","default":1},"limit":{"type":"integer","description":"largest number of lines to read","default":2000}},"required":["path"],"additionalProperties":false}'
    )
    assert await said(box, ctx, "read_file", "path=a.txt") == snapshot(
        'Error: arguments are not valid JSON (Expecting value: line 1 column 1 (char 0)); send one JSON object matching the schema {"type":"object","properties":{"path":{"type":"string","description":"file path relative to the workspace root (or absolute)"},"offset":{"type":"integer","description":"first line to read, 1-based; a negative number counts from the end (-20: the last 20 lines)","default":1},"limit":{"type":"integer","description":"largest number of lines to read","default":2000}},"required":["path"],"additionalProperties":false}'
    )
    assert await said(box, ctx, "read_file", '["a.txt"]') == snapshot(
        'Error: arguments must be a JSON object, not list; send one JSON object matching the schema {"type":"object","properties":{"path":{"type":"string","description":"file path relative to the workspace root (or absolute)"},"offset":{"type":"integer","description":"first line to read, 1-based; a negative number counts from the end (-20: the last 20 lines)","default":1},"limit":{"type":"integer","description":"largest number of lines to read","default":2000}},"required":["path"],"additionalProperties":false}'
    )
    assert await said(box, ctx, "read_file", '"a.txt"') == snapshot(
        'Error: arguments must be a JSON object, not str; send one JSON object matching the schema {"type":"object","properties":{"path":{"type":"string","description":"file path relative to the workspace root (or absolute)"},"offset":{"type":"integer","description":"first line to read, 1-based; a negative number counts from the end (-20: the last 20 lines)","default":1},"limit":{"type":"integer","description":"largest number of lines to read","default":2000}},"required":["path"],"additionalProperties":false}'
    )
    assert await said(box, ctx, "read_file", "[" * 100_000 + "]" * 100_000) == snapshot(
        'Error: argument nesting too deep: the arguments hold arrays or objects nested inside each other beyond what can be read; send one JSON object matching the schema {"type":"object","properties":{"path":{"type":"string","description":"file path relative to the workspace root (or absolute)"},"offset":{"type":"integer","description":"first line to read, 1-based; a negative number counts from the end (-20: the last 20 lines)","default":1},"limit":{"type":"integer","description":"largest number of lines to read","default":2000}},"required":["path"],"additionalProperties":false}'
    )


async def test_an_unknown_tool_and_what_to_call_instead(workspace: Path, tmp_path: Path) -> None:
    ctx = tool_ctx(workspace, tmp_path)
    box = Toolbox(["read_file", "edit_file", "bash"])
    assert await said(box, ctx, "readfile", {"path": "a.txt"}) == snapshot(
        "Error: unknown tool 'readfile'; available tools: read_file, edit_file, bash. Did you mean read_file?"
    )
    assert await said(box, ctx, "get_log_level", {"path": "config/app.toml"}) == snapshot(
        'Error: unknown tool \'get_log_level\'; available tools: read_file, edit_file, bash. To read \'config/app.toml\', call read_file: {"name": "read_file", "arguments": {"path": "config/app.toml"}}.'
    )
    assert await said(box, ctx, "pytest", {"args": ["-q", "tests/a b.py"]}) == snapshot(
        'Error: unknown tool \'pytest\'; available tools: read_file, edit_file, bash. To run the program pytest, call bash: {"name": "bash", "arguments": {"command": "pytest -q \'tests/a b.py\'"}}.'
    )
    assert await said(box, ctx, "cp", {"source": "a.txt", "destination": "b.txt"}) == snapshot(
        'Error: unknown tool \'cp\'; available tools: read_file, edit_file, bash. To run the program cp, call bash: {"name": "bash", "arguments": {"command": "cp a.txt b.txt"}}.'
    )
    assert await said(box, ctx, "mkdir", {}) == snapshot(
        'Error: unknown tool \'mkdir\'; available tools: read_file, edit_file, bash. To run the program mkdir, call bash: {"name": "bash", "arguments": {"command": "mkdir"}}.'
    )
    assert await said(box, ctx, "sed", {"expression": "s/a/b/", "in_place": True}) == snapshot(
        "Error: unknown tool 'sed'; available tools: read_file, edit_file, bash. To run the program sed, call bash with its whole command line (sed and its arguments)."
    )
    assert await said(box, ctx, "github__create_issue", {"title": "t"}) == snapshot(
        "Error: unknown tool 'github__create_issue'; available tools: read_file, edit_file, bash"
    )
    assert await said(box, ctx, "x" * 200, {}) == snapshot(
        "Error: unknown tool 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'… (shortened: 200 characters); available tools: read_file, edit_file, bash"
    )
    assert await said(Toolbox(["read_file"]), ctx, "cat", {"file": "a.txt"}) == snapshot(
        "Error: unknown tool 'cat'; available tools: read_file"
    )
    assert await said(Toolbox([]), ctx, "read_file", {"path": "a.txt"}) == snapshot(
        "Error: unknown tool 'read_file'; available tools: (none)"
    )


async def test_the_same_errors_with_recovery_hints_off(workspace: Path, tmp_path: Path) -> None:
    """The `recovery_hints` setting off (to measure what hints are worth): each error's first clause."""
    ctx = tool_ctx(workspace, tmp_path, recovery_hints=False)
    box = Toolbox(["read_file", "bash"])
    assert await said(box, ctx, "readfile", {"path": "a.txt"}) == snapshot("Error: unknown tool 'readfile'")
    assert await said(box, ctx, "pytest", {}) == snapshot("Error: unknown tool 'pytest'")
    assert await said(box, ctx, "read_file", {}) == snapshot(
        "Error: invalid arguments: missing required argument 'path'"
    )
    assert await said(box, ctx, "read_file", "[1]") == snapshot("Error: arguments must be a JSON object, not list")
    assert await said(box, ctx, "read_file", {"path": "missing.txt"}) == snapshot("Error: missing.txt does not exist")


async def test_an_error_longer_than_the_output_limit(workspace: Path, tmp_path: Path) -> None:
    ctx = tool_ctx(workspace, tmp_path, output_limit=400)
    text = await said(Toolbox(), ctx, "read_file", json.dumps({"path": "a.txt", "offset": "x" * 150, "n": 2}))
    assert text == snapshot("""\
Error: invalid arguments: unknown argument 'n'; argument 'offset' must be integer, got str 'xxxxxxxxxxxxxxx
[... 412 characters of this error cut from the middle ...]
"largest number of lines to read","default":2000}},"required":["path"],"additionalProperties":false}\
""")
