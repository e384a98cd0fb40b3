"""A real MCP server for the tests, the benchmark and the README's example (the SDK's MCPServer).

Run it over stdio: `python tests/mcp/probe_server.py`; over Streamable HTTP on 127.0.0.1:
`python tests/mcp/probe_server.py --http PORT`. Its tools cover what Workbench must handle:
a result, an isError result, an exception, a hang, progress, an exit mid-call, a tool list that
changes, an image, structured content, a write to a path and a network connection (for the sandbox).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import socket
import sys
from pathlib import Path

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, ImageContent, TextContent
from pydantic import BaseModel

server = MCPServer("probe", instructions="Test server for Workbench.", log_level="WARNING")
PIXEL = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 56).decode()


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool()
def add(a: int, b: int) -> dict[str, int]:
    """Add two numbers; the sum comes back as structured content."""
    return {"sum": a + b}


@server.tool()
def refuse(reason: str = "no") -> CallToolResult:
    """Answer with an isError result."""
    return CallToolResult(content=[TextContent(type="text", text=f"refused: {reason}")], is_error=True)


@server.tool()
def explode() -> str:
    """Raise an exception inside the tool."""
    raise RuntimeError("the probe tool exploded")


@server.tool()
async def hang(seconds: float = 3600) -> str:
    """Sleep for `seconds` (longer than any timeout of the tests)."""
    marker = os.environ.get("PROBE_HANG_MARKER")
    try:
        await asyncio.sleep(seconds)
    except BaseException:
        if marker:
            Path(marker).write_text("cancelled")
        raise
    return "woke"


@server.tool()
async def progress(steps: int, ctx: Context) -> str:
    """Report progress `steps` times, then answer."""
    for i in range(steps):
        await ctx.report_progress(i + 1, steps, f"step {i + 1} of {steps}")
        await asyncio.sleep(0.01)
    return f"done {steps} steps"


@server.tool()
def die() -> str:
    """Exit the server process in the middle of the call."""
    spew = float(os.environ.get("PROBE_DIE_STDERR_MB", "0"))  # a server that fills its stderr first
    line = b"probe: noise on stderr " + b"x" * 100 + b"\n"
    for _ in range(int(spew * 1e6 / len(line))):
        os.write(2, line)
    os.write(2, b"probe: the last words before dying\n")
    os._exit(3)


@server.tool()
def picture() -> list[ImageContent | TextContent]:
    """Return an image and a caption."""
    return [ImageContent(type="image", data=PIXEL, mime_type="image/png"), TextContent(type="text", text="a pixel")]


@server.tool()
async def grow(ctx: Context) -> str:
    """Add the tool `extra` and remove `shrinkable`, then tell the client the list changed."""
    server.add_tool(extra)
    server.remove_tool("shrinkable")
    await ctx.notify_tools_changed()
    if hasattr(ctx.session, "send_tool_list_changed"):
        await ctx.session.send_tool_list_changed()
    return "grown"


def extra() -> str:
    """A tool that appears after grow."""
    return "extra here"


@server.tool()
def shrinkable() -> str:
    """A tool that vanishes after grow."""
    return "still here"


@server.tool()
def write_file(path: str, text: str = "x") -> str:
    """Write text to a path (to try the sandbox)."""
    try:
        Path(path).write_text(text)
    except OSError as err:
        raise ToolError(f"cannot write {path}: {err.strerror}") from err
    return f"wrote {path}"


@server.tool()
def connect(host: str, port: int) -> str:
    """Open a TCP connection (to try the sandbox's network)."""
    try:
        with socket.create_connection((host, port), timeout=3):
            return "connected"
    except OSError as err:
        raise ToolError(f"cannot connect to {host}:{port}: {err.strerror or err}") from err


@server.tool()
def environment(name: str) -> str:
    """The value of an environment variable, or '(unset)'."""
    return os.environ.get(name, "(unset)")


class Answer(BaseModel):
    answer: str


@server.tool()
async def ask_person(ctx: Context) -> str:
    """Ask the client's person a question (elicitation), which Workbench refuses."""
    result = await ctx.elicit("Which branch?", Answer)
    return f"answered: {result}"


def add_generated_tools(count: int) -> None:
    """PROBE_MANY_TOOLS=N: N more tools (`generated_0000`, ...), each with a schema of its own, as a
    server that wraps a large API has (about 370 bytes of definition each)."""

    def make(i: int):  # type: ignore[no-untyped-def]
        def tool(record_id: str, fields: list[str], limit: int = 10, include_archived: bool = False) -> str:
            return f"generated {i}: {record_id}"

        return tool

    for i in range(count):
        server.add_tool(
            make(i),
            name=f"generated_{i:04d}",
            description=f"Look up records of kind {i} by id, with the fields asked for and a limit on how many.",
        )


def main() -> None:
    add_generated_tools(int(os.environ.get("PROBE_MANY_TOOLS", "0")))
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, default=0, help="serve Streamable HTTP on 127.0.0.1:PORT")
    args = parser.parse_args()
    if args.http:
        server.run("streamable-http", host="127.0.0.1", port=args.http)
    else:
        server.run()


if __name__ == "__main__":
    sys.exit(main())
