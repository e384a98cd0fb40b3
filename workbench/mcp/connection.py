"""One MCP server of the session: started in the background, its tools listed (and cached), its calls.

The SDK's `Client` is entered and left in one task of its own (its anyio scopes require it),
which then waits until the session stops it or the connection is lost. A lost connection (the
server exited, or the HTTP endpoint went away) is restarted once; after a second loss the
server's tools fail with the reason. Each start writes the tool list to a cache keyed by the
hash of the server's table, so the next session's first model request can offer the tools
before the server has started.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import logging
import shutil
import time
from collections.abc import Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.config.mcp_servers import McpServer, ServerConfigError
from workbench.config.settings import Settings
from workbench.core.feedback import Feedback
from workbench.mcp.stderr_log import StderrLog
from workbench.mcp.stray import StrayReplies, is_unreadable_line, line_of, shown, watched

if TYPE_CHECKING:  # the SDK takes ~0.8 s to import: in a thread, when the first server starts
    from mcp import Client

log = logging.getLogger("workbench")
RESTARTS = 1  # a server that exits is started again once; then its tools fail with the reason
START_LIMIT = 60.0  # seconds a start may take when the server's timeout is 0 (no limit)
Progress = Callable[[float, float | None, str | None], None]


class ServerConnection:
    """One configured server: its state, its tools, its calls."""

    def __init__(self, server: McpServer, settings: Settings, folder: Path, marker: str, scratch: Path):
        self.server, self.settings, self.marker, self.scratch = server, settings, marker, scratch
        self.folder = folder  # the session's folder for this server: its stderr log
        self.cache_path = settings.data_dir / "mcp-cache" / f"{server.table_hash.removeprefix('sha256:')}.json"
        self.state = "not started"  # starting, ready, failed, stopped
        self.reason = ""
        self.tools: list[dict[str, Any]] = self._read_cache()  # name, description, inputSchema, annotations
        self.cached = self.cache_path.is_file()  # an earlier start listed its tools: the first request offers them
        self.live = False  # `tools` come from this start (not the cache)
        self.instructions = ""  # what the server says it is for (its instructions)
        self.started_in = 0.0
        self.ready_at = 0.0  # time.monotonic() when it was last up
        self.began_at = 0.0  # time.monotonic() when its first start began
        self.restarts = 0
        self.on_change: Callable[[], None] = lambda: None
        self.client: Client | None = None
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._lost = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._up = False  # this start got as far as listing the tools
        self._errlog: StderrLog | None = None  # the stderr of a stdio server's current start
        self.stray = StrayReplies()  # what the server sent that answered nothing (this start)

    # --- the cache of the last start's tools ---------------------------------------------------

    def _read_cache(self) -> list[dict[str, Any]]:
        try:
            tools = json.loads(self.cache_path.read_text())
        except (OSError, ValueError):
            return []
        return (
            [t for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)]
            if isinstance(tools, list)
            else []
        )

    def _write_cache(self) -> None:
        with contextlib.suppress(OSError):
            self.cache_path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.cache_path.with_suffix(".tmp")
            tmp.write_text(json.dumps(self.tools))
            tmp.replace(self.cache_path)

    # --- starting and stopping -------------------------------------------------------------------

    def start(self) -> None:
        """Start the server in the background (never waits for it)."""
        if self._task is None:
            self.began_at = time.monotonic()
            self._task = asyncio.create_task(self._run(), name=f"mcp server {self.server.name}")

    async def ready(self) -> None:
        """Wait until the server is up, or has failed (see `state`, `reason`)."""
        self.start()
        await self._ready.wait()

    async def stop(self) -> None:
        self._stop.set()
        if self._task is not None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(self._task, 10)
        self.state = "stopped" if self.state != "failed" else self.state

    async def _run(self) -> None:
        while not self._stop.is_set():
            self._lost.clear()
            self._up = False
            try:
                await self._serve()
            except Exception as err:  # failed to start, or lost: one line of why
                self.reason = self.reason if self._lost.is_set() else _why(err, self.server) + await self._stderr_tail()
                log.info("MCP server %s: %s", self.server.name, self.reason)
            finally:
                self.client, self.live = None, False
            if self._stop.is_set():
                break
            if self.restarts >= RESTARTS or not self._up:  # never came up, or lost twice
                self.state = "failed"
                self._ready.set()
                self.on_change()
                return
            self.restarts += 1
            self.state = "restarting"
            self._ready.clear()

    async def _serve(self) -> None:
        self.state, self._errlog = "starting", None
        began = time.monotonic()
        await asyncio.to_thread(load_sdk)  # not on the event loop: the first model request goes on meanwhile
        from mcp import Client

        self.folder.mkdir(parents=True, exist_ok=True)
        async with AsyncExitStack() as stack:
            self.stray = StrayReplies()
            client = Client(
                watched(self._target(stack), self.stray),
                message_handler=self._on_message,
                read_timeout_seconds=None,
                cache=None,
            )
            limit = self.server.timeout or START_LIMIT
            async with asyncio.timeout(limit):
                await stack.enter_async_context(client)
                if self._errlog is not None:
                    self._errlog.spawned()
                listing = await client.list_tools()
            self.client = client
            self.instructions = " ".join((client.instructions or "").split())
            self._take(listing.tools)
            self.ready_at = time.monotonic()
            self.started_in = self.ready_at - began
            self.state, self._up = "ready", True
            self.reason = self.reason if self._lost.is_set() else ""  # lost while listing: why is kept
            self._ready.set()
            self.on_change()
            listener = asyncio.create_task(self._listen(client), name=f"mcp {self.server.name} listen")
            try:
                done = asyncio.create_task(self._stop.wait())
                lost = asyncio.create_task(self._lost.wait())
                await asyncio.wait({done, lost}, return_when=asyncio.FIRST_COMPLETED)
                done.cancel()
                lost.cancel()
            finally:
                listener.cancel()
                with contextlib.suppress(BaseException):
                    await listener
            if self._lost.is_set() and not self._stop.is_set():
                raise ConnectionError(self.reason or "the connection was lost")

    def _target(self, stack: AsyncExitStack) -> Any:
        """The transport: the server's stderr goes to its log file (bounded), not the person's terminal."""
        from mcp.client.stdio import stdio_client

        from workbench.mcp.launch import NotStartable, http_transport, stdio_parameters

        try:
            if self.server.transport == "http":
                http, transport = http_transport(self.server)
                stack.push_async_callback(http.aclose)
                return transport
            scratch = self.scratch / self.server.name  # the sandbox's own folder (not in the hidden data folder)
            shutil.rmtree(scratch, ignore_errors=True)
            stack.callback(shutil.rmtree, scratch, True)
            self._errlog = StderrLog(self.folder / "stderr.log")
            stack.callback(self._errlog.spawned)
            return stdio_client(stdio_parameters(self.settings, self.server, scratch, self.marker), self._errlog.writer)
        except ServerConfigError as err:
            raise NotStartable(f"MCP server {self.server.name}: {err}") from err

    # --- the tool list -------------------------------------------------------------------------------

    def _take(self, tools: list[Any]) -> None:
        self.tools = [
            {
                "name": t.name,
                "description": t.description or "",
                "inputSchema": t.input_schema or {"type": "object", "properties": {}},
                "readOnlyHint": bool(t.annotations and t.annotations.read_only_hint),
            }
            for t in tools
        ]
        self.live = True
        self._write_cache()

    async def refresh(self) -> None:
        """List the tools again (the server said its list changed)."""
        client = self.client
        if client is None:
            return
        with contextlib.suppress(Exception):
            listing = await client.list_tools()
            self._take(listing.tools)
            self.on_change()

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, Exception):  # a line that is not JSON-RPC, or a transport fault: the connection is gone
            self._note_lost(
                f"it sent a line that is not a JSON-RPC message: {shown(line_of(message))}"
                if is_unreadable_line(message)
                else f"the connection failed: {message}"
            )
        elif getattr(message, "method", "") == "notifications/tools/list_changed":
            asyncio.get_running_loop().create_task(self.refresh())

    async def _listen(self, client: Client) -> None:
        """On a 2026-07-28 connection, list changes arrive on a subscription of their own."""
        with contextlib.suppress(Exception):
            async with client.listen(tools_list_changed=True) as subscription:
                async for _event in subscription:
                    await self.refresh()

    def _note_lost(self, why: str) -> None:
        """The connection is gone: calls from now on wait for the restart (or fail with `why`)."""
        self.reason, self.client, self.state = why, None, "restarting"
        self._ready.clear()
        self._lost.set()

    # --- calls -----------------------------------------------------------------------------------------

    async def call(self, tool: str, args: dict[str, Any], report: Progress) -> str:
        """Call `tool` of this server; its output, or Feedback that names the server and what to try."""
        from mcp.shared.exceptions import MCPError
        from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

        from workbench.mcp.results import outcome, refused_request

        name = self.server.name
        await self._wait_started()
        client = self.client
        if client is None:
            raise Feedback(
                f"MCP server {name} is not running ({self.reason or self.state}); its tools cannot be used in "
                "this session. Do the task another way, or tell the person (`workbench mcp list` shows why)"
            )
        if self.live and tool not in {t["name"] for t in self.tools}:
            offered = ", ".join(t["name"] for t in self.tools) or "(none)"
            raise Feedback(
                f"MCP server {name} no longer offers the tool {tool} (its tool list changed); its tools now: {offered}"
            )

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            report(progress, total, message)

        timeout = self.server.timeout or None
        began = time.monotonic()
        try:
            result = await client.call_tool(tool, args, read_timeout_seconds=timeout, progress_callback=on_progress)
        except MCPError as err:
            if err.code == REQUEST_TIMEOUT or "timed out" in err.message:
                said = self.stray.since(began)
                instead = f"; it sent instead a reply to no request of this call: {said}" if said else ""
                raise Feedback(
                    f"MCP server {name}: tool {tool} did not answer within {self.server.timeout:g} s (its timeout "
                    f"setting){instead}; the call was cancelled. Try smaller input, or another way"
                ) from err
            if err.code == CONNECTION_CLOSED:
                lost = self._lost.is_set()  # lost for a reason of its own (what it sent), not by exiting
                if not lost:
                    self._note_lost(f"it exited{await self._stderr_tail()}")
                again = (
                    "it is being restarted: you may call it once more"
                    if self.restarts < RESTARTS
                    else "it is not restarted again"
                )
                what = "failed" if lost else "exited"
                raise Feedback(f"MCP server {name} {what} during the call of {tool} ({self.reason}); {again}") from err
            refused = refused_request(name, tool, err.message)
            raise refused or Feedback(f"MCP server {name}: tool {tool} failed: {err.message}") from err
        return outcome(name, tool, result)

    async def _wait_started(self) -> None:
        """A call before the server is up waits for its start (bounded by its start limit)."""
        if self.state in ("ready", "failed"):
            return
        self.start()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self.server.timeout or START_LIMIT):
                await self._ready.wait()

    async def _stderr_tail(self) -> str:
        """The server's last stderr line, once its stderr closed (it exited; waited for up to 2 s)."""
        errlog = self._errlog
        if errlog is None:
            return ""
        last = await asyncio.to_thread(errlog.last_line, 2.0)
        return f"; its last stderr line: {last[:200]}" if last else ""


def load_sdk() -> None:
    """Import the MCP SDK's parts the connections use (call it in a thread)."""
    for module in ("mcp", "mcp.client.stdio", "mcp.client.streamable_http", "mcp_types", "httpx2"):
        importlib.import_module(module)


def _why(err: BaseException, server: McpServer) -> str:
    if isinstance(err, Feedback):
        return err.message
    if isinstance(err, TimeoutError):
        return f"it did not start within {server.timeout or START_LIMIT:g} s"
    if isinstance(err, ExceptionGroup):
        inner = err.exceptions[0]
        return _why(inner, server)
    text = str(err) or type(err).__name__
    return f"it could not be started: {text}"
