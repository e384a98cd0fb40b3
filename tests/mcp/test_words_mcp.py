"""The texts of MCP tools the model reads, pinned whole (issue 36 item 8): a tool's definition, its
result (text, structured, an image not shown), its failures (an isError result, an exception, the
server gone), and a tool the server does not offer. Arguments the server refuses are left out: that
text is the SDK's (pydantic's, by its version). Against the real probe server over stdio (tests/mcp/probe_server.py; marked slow as the
other MCP tests). A change of wording is a reviewed diff (`pytest --inline-snapshot=review`)."""

from __future__ import annotations

import pytest
from inline_snapshot import snapshot

from tests.mcp.conftest import probe, with_servers
from tests.mcp.test_manager import context, started
from tests.words import said
from workbench.config.settings import Settings
from workbench.model.gateway import tools_to_wire
from workbench.tools.registry import Toolbox

pytestmark = pytest.mark.slow


async def test_an_mcp_tool_and_its_texts(settings: Settings) -> None:
    # a generous timeout: on a loaded machine the probe takes seconds to start (2 s and 8 s were too short);
    # so no call here waits for it to run out (test_manager.py checks the text of a call that hangs)
    manager = await started(with_servers(settings, probe(sandbox="off", timeout=60)))
    try:
        box = Toolbox(["read_file", *manager.patterns()], manager)
        ctx = context(settings, [])
        (echo,) = [d for d in tools_to_wire(box.definitions()) if d["function"]["name"] == "probe__echo"]
        assert echo == snapshot(
            {
                "type": "function",
                "function": {
                    "name": "probe__echo",
                    "description": """\
Return the text unchanged.
[MCP server probe]\
""",
                    "parameters": {
                        "properties": {"text": {"type": "string", "title": "Text"}},
                        "type": "object",
                        "title": "echoArguments",
                        "required": ["text"],
                    },
                },
            }
        )
        assert await said(box, ctx, "probe__echo", {"text": "hello"}) == snapshot("hello")
        assert await said(box, ctx, "probe__add", {"a": 2, "b": 3}) == snapshot("""\
{
  "sum": 5
}\
""")
        assert await said(box, ctx, "probe__picture", {}) == snapshot("""\
[image image/png, 64 bytes: not shown to the model]
a pixel\
""")
        assert await said(box, ctx, "probe__refuse", {"reason": "quota"}) == snapshot(
            "Error: MCP server probe: tool refuse reported an error: refused: quota. Read it, correct the arguments or the approach, and call it again only if that can change the outcome"
        )
        assert await said(box, ctx, "probe__explode", {}) == snapshot(
            "Error: MCP server probe: tool explode reported an error: Error executing tool explode. Read it, correct the arguments or the approach, and call it again only if that can change the outcome"
        )
        assert await said(box, ctx, "probe__nothing", {}) == snapshot(
            "Error: MCP server probe has no tool nothing; its tools: probe__echo, probe__add, probe__refuse, probe__explode, probe__hang, probe__progress, probe__die, probe__picture, probe__grow, probe__shrinkable, probe__write_file, probe__connect, probe__environment, probe__ask_person"
        )
        assert await said(box, ctx, "probe__die", {}) == snapshot(
            "Error: MCP server probe exited during the call of die (it exited; its last stderr line: probe: the last words before dying); it is being restarted: you may call it once more"
        )
    finally:
        await manager.close()
