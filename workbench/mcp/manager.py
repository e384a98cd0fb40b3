"""The session's MCP servers: started in the background as the session opens, shared by every agent.

`tools()` is what the registry offers (`seams.ToolSource`): each enabled server's tools as
`SERVER__tool` registry tools, from the live list once the server is up and, before that, from
the cache of its last start, so the first model request does not wait for a server it knows.
A server with no cache yet (its first start in this data folder) starts as the session opens,
and the first request waits for it (`settle`, up to `mcp_startup_timeout`). `close()` stops every server and kills
whatever carries the session's MCP marker; a record in the data folder lets the leftovers
reaper do the same after a kill -9 of Workbench.
"""

from __future__ import annotations

import asyncio
import contextlib
import fnmatch
import json
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from workbench.config.mcp_servers import McpServer
from workbench.config.settings import Settings
from workbench.mcp.connection import ServerConnection
from workbench.mcp.deferred import LISTER, REVEAL_MAX, lister_tool, matching, too_many
from workbench.mcp.names import exposed_names, server_prefix
from workbench.pb import workbench_pb2 as pb
from workbench.terminal.leftovers import kill_marked, owner_record, records_dir, remove_record, write_record
from workbench.tools.registry import Tool, ToolContext

IDLE_START = 0.5  # seconds after opening with no prompt sent that the servers start
# events that show the first model request went out: the servers start then
AFTER_REQUEST = frozenset({"text_delta", "usage_update", "retry_wait", "stream_discarded", "run_finished"})
Subscribe = Callable[[Callable[[pb.Event], None]], Callable[[], None]]  # the store's, for one session
DESCRIPTION_LIMIT = 1024  # characters of a server's tool description offered to the model


def marker_of(session_id: str) -> str:
    """The value of WORKBENCH_SESSION every MCP server process of the session carries."""
    return f"mcp-{session_id}"


class McpManager:
    """Every enabled MCP server of one session (`settings.mcp_servers`)."""

    def __init__(self, settings: Settings, session_dir: Path, session_id: str):
        self.settings, self.session_id = settings, session_id
        self.marker = marker_of(session_id)
        # the sandboxes' own folders; the reaper removes it after a kill -9 (its name starts with workbench-MARKER)
        self.scratch = Path(tempfile.gettempdir()) / f"workbench-{self.marker}"
        self.connections: dict[str, ServerConnection] = {
            name: ServerConnection(server, settings, session_dir / "mcp" / name, self.marker, self.scratch)
            for name, server in settings.mcp_servers.items()
            if server.enabled
        }
        for connection in self.connections.values():
            connection.on_change = self._changed
        self.notes: list[str] = []  # renamed tools, for `workbench mcp list` and the log
        self.revealed: set[str] = set()  # deferred servers whose tools the model listed, all of them
        self.revealed_tools: dict[str, set[str]] = {}  # and the tools it listed by a match
        self._deferred: set[str] = set()  # servers offered as one line of mcp__tools now
        self._tools: dict[str, Tool] | None = None
        self._origin: dict[str, tuple[str, str]] = {}  # exposed name -> (server, tool)
        self._offered_before: dict[str, tuple[str, str]] = {}  # every name offered in this session
        self._record: Path | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._watch: Callable[[], None] | None = None
        self._started_at = 0.0  # the loop's time when `start` ran
        self._settling: asyncio.Future[None] | None = None
        self._startup_notes: list[str] = []  # servers the first request went without, told once

    # --- the session's life ----------------------------------------------------------------------

    def start_soon(self) -> None:
        """Start the servers as the session opens when one has no cached tool list (the first
        request waits for it: `settle`). Else never in the way of the first model request: a prompt
        sent at once (headless) starts them once its request went out (that request offers the tools
        cached from their last start, `start_after_request`); else they start after IDLE_START
        seconds (the person is typing)."""
        if any(not c.cached for c in self.connections.values()):
            self.start()
        elif self.connections:
            self._timer = asyncio.get_running_loop().call_later(IDLE_START, self.start)

    def start_after_request(self, subscribe: Subscribe) -> None:
        """A prompt was sent: start at the first event that shows its model request went out."""
        if self._timer is None or self._watch is not None:
            return  # started already (or no server), or waiting for that request already
        self._timer.cancel()

        def after_request(event: pb.Event) -> None:
            if event.WhichOneof("kind") in AFTER_REQUEST:
                self.start()

        self._watch = subscribe(after_request)

    def _not_scheduled(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._watch is not None:
            self._watch()
            self._watch = None

    def start(self) -> None:
        """Start every enabled server in the background (returns at once)."""
        self._not_scheduled()
        if not self.connections:
            return
        if self._record is None:
            self._started_at = asyncio.get_running_loop().time()
            self.scratch.mkdir(mode=0o700, exist_ok=True)
            record = owner_record(self.session_id, self.marker)
            record.dir = str(self.scratch)
            self._record = write_record(records_dir(self.settings.data_dir), record)
        for connection in self.connections.values():
            connection.start()

    async def settle(self) -> list[str]:
        """Before a model request: wait for the servers with no cached tool list until each is up or
        failed, up to `mcp_startup_timeout` seconds from their start (once: later requests find it
        done). The notes of the servers it goes without, for the first caller only."""
        if self._settling is None:
            self._settling = asyncio.ensure_future(self._settle())
        await asyncio.shield(self._settling)
        notes, self._startup_notes = self._startup_notes, []
        return notes

    async def _settle(self) -> None:
        waiting = {name: c for name, c in self.connections.items() if not c.cached}
        limit = self.settings.mcp_startup_timeout
        if not waiting or limit <= 0:
            return
        self.start()
        left = self._started_at + limit - asyncio.get_running_loop().time()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(max(left, 0.0)):
                await asyncio.gather(*(c.ready() for c in waiting.values()))
        for name, connection in waiting.items():
            if connection.state == "failed":
                self._startup_notes.append(
                    f"MCP server {name} failed to start ({connection.reason}); the model's requests go without "
                    "its tools (`workbench mcp list` shows it)"
                )
            elif connection.state != "ready":
                self._startup_notes.append(
                    f"MCP server {name} did not start within {limit:g} s (mcp_startup_timeout); the first model "
                    "request goes without its tools, offered from the turn after it is up"
                )

    async def close(self) -> None:
        """Stop every server; nothing of them is left (their marker is scanned for)."""
        self._not_scheduled()
        if self._settling is not None:
            self._settling.cancel()
        await asyncio.gather(*(c.stop() for c in self.connections.values()), return_exceptions=True)
        if self._record is not None:
            await asyncio.to_thread(kill_marked, self.marker)
            shutil.rmtree(self.scratch, ignore_errors=True)
            remove_record(self._record)
            self._record = None

    def summary(self) -> str:
        """The enabled servers in words, those without their sandbox marked: `probe, docker (sandbox off)`."""
        return ", ".join(
            f"{name} (sandbox off)" if c.server.transport == "stdio" and not c.server.sandboxed else name
            for name, c in self.connections.items()
        )

    def _changed(self) -> None:
        self._tools = None

    # --- what the registry offers ---------------------------------------------------------------

    def patterns(self) -> list[str]:
        """The tool selectors of an agent that may use every server (`github__*`, ...), and the
        lister of deferred servers when servers may be deferred."""
        lister = [LISTER] if self.settings.mcp_defer_above and self.connections else []
        return [f"{server_prefix(name)}*" for name in self.connections] + lister

    def tools(self) -> dict[str, Tool]:
        """Every offered MCP tool by its exposed name (live lists, else the cached ones)."""
        if self._tools is None:
            self._tools, self._origin, self.notes = {}, {}, []
            deferred: dict[str, tuple[int, str]] = {}
            for name, connection in self.connections.items():
                listed = [t for t in connection.tools if _offered(connection.server, t["name"])]
                limit = self.settings.mcp_defer_above
                if limit and len(listed) > limit and name not in self.revealed:
                    deferred[name] = (len(listed), connection.instructions[:120])
                    chosen = self.revealed_tools.get(name, set())
                    listed = [t for t in listed if t["name"] in chosen]  # the ones a listing offered
                names, notes = exposed_names(name, [t["name"] for t in listed], set(self._tools))
                self.notes += notes
                for spec in listed:
                    exposed = names[spec["name"]]
                    self._tools[exposed] = self._tool(exposed, connection, spec)
                    self._origin[exposed] = (name, spec["name"])
            self._offered_before.update(self._origin)
            self._deferred = set(deferred)
            if deferred:
                self._tools[LISTER] = lister_tool(deferred, self._reveal)
        return self._tools

    def _reveal(self, server: str, match: str) -> tuple[list[tuple[str, str]], str]:
        """Offer a deferred server's tools matching `match` (all: '') from now on, at most REVEAL_MAX:
        each (exposed name, first line of description); or none, and why (too many matched)."""
        connection = self.connections[server]
        listed = [t for t in connection.tools if _offered(connection.server, t["name"])]
        chosen = matching(listed, match)
        if len(chosen) > REVEAL_MAX:
            return [], too_many(server, len(chosen), match, [t["name"] for t in chosen])
        if not match:
            self.revealed.add(server)
        self.revealed_tools.setdefault(server, set()).update(t["name"] for t in chosen)
        self._tools = None
        tools = self.tools()
        names = {t["name"] for t in chosen}
        return [
            (exposed, (tools[exposed].definition.description.splitlines() or [""])[0])
            for exposed, origin in self._origin.items()
            if origin[0] == server and origin[1] in names
        ], ""

    def missing(self, exposed: str) -> str:
        """Why an MCP tool the model named is not offered: which server, what failed, what to try.
        A `SERVER__tool` name of a configured server never offered gets the server's state."""
        if exposed in self.tools():  # offered now (to other agents)
            return ""
        found = self._offered_before.get(exposed)
        if found is None:
            return self._state_of_server(exposed)
        connection = self.connections[found[0]]
        if connection.state == "failed":
            return _not_running(found[0], connection.reason)
        now = ", ".join(n for n, origin in self._origin.items() if origin[0] == found[0]) or "(none)"
        return f"MCP server {found[0]} no longer offers {found[1]} (its tool list changed); its tools now: {now}"

    def _state_of_server(self, exposed: str) -> str:
        """For a name of the form `SERVER__tool` of a configured server: starting, failed (why),
        disabled, deferred (the call that lists its tools), or its tools; '' for any other name."""
        prefixes = sorted(((server_prefix(n), n) for n in self.settings.mcp_servers), key=lambda p: -len(p[0]))
        name = next((n for prefix, n in prefixes if exposed.startswith(prefix)), None)
        if name is None:
            return ""
        connection = self.connections.get(name)
        if connection is None:
            return (
                f"MCP server {name} is switched off (enabled = false in its [mcp.servers.{name}] table); its tools "
                "cannot be used in this session. Do the task another way, or tell the person"
            )
        if connection.state == "failed":
            return _not_running(name, connection.reason)
        listed = ", ".join(n for n, origin in self._origin.items() if origin[0] == name)
        if connection.state != "ready":  # not started yet, starting, restarting
            since = f" ({time.monotonic() - connection.began_at:.0f} s so far)" if connection.began_at else ""
            known = f"; its tools from its last start: {listed}" if listed else ""
            return (
                f"MCP server {name} is still starting{since}: {exposed} is not offered yet{known}. Its tools are "
                "offered from your first turn after it is up; do other parts of the task meanwhile"
            )
        self.tools()
        if name in self._deferred:
            tool = exposed.removeprefix(server_prefix(name))
            lister = json.dumps({"name": LISTER, "arguments": {"server": name, "match": tool}})
            return f"MCP server {name}'s tools are not offered until you list them (it has many): call {lister}"
        tool = exposed.removeprefix(server_prefix(name))
        return f"MCP server {name} has no tool {tool}; its tools: {listed or '(none)'}"

    def origins(self) -> dict[str, tuple[str, str]]:
        """Every offered tool: exposed name -> (server name, the server's own tool name)."""
        self.tools()
        return dict(self._origin)

    def origin(self, exposed: str) -> tuple[McpServer, str] | None:
        """The server and the server's own tool name behind an exposed name (the guard reads it)."""
        self.tools()
        found = self._origin.get(exposed)
        if found is None:
            return None
        return self.connections[found[0]].server, found[1]

    def _tool(self, exposed: str, connection: ServerConnection, spec: dict[str, Any]) -> Tool:
        server, tool = connection.server, spec["name"]
        schema = spec["inputSchema"] if isinstance(spec.get("inputSchema"), dict) else {"type": "object"}
        schema = {"type": "object", "properties": {}, **schema}
        hint = " (the server says it only reads)" if spec.get("readOnlyHint") else ""
        description = (spec.get("description") or tool)[:DESCRIPTION_LIMIT]
        definition = pb.ToolDefinition(name=exposed, description=f"{description}\n[MCP server {server.name}{hint}]")
        definition.parameters.update(json.loads(json.dumps(schema)))

        async def call(ctx: ToolContext, **args: Any) -> str:
            def progress(done: float, total: float | None, message: str | None) -> None:
                of = f"/{total:g}" if total else ""
                ctx.on_output(ctx.call_id, f"[progress {done:g}{of}{': ' + message if message else ''}]\n")

            return await connection.call(tool, args, progress)

        read_only = any(fnmatch.fnmatchcase(tool, g) for g in server.read_only)
        return Tool(exposed, call, schema, definition, read_only)  # no `arguments`: the server checks them


def _not_running(server: str, reason: str) -> str:
    return (
        f"MCP server {server} is not running ({reason}); its tools cannot be used in this session. Do the task "
        "another way, or tell the person"
    )


def _offered(server: McpServer, tool: str) -> bool:
    """The server's `tools` allow list (globs on the server's own tool names); empty: all."""
    return not server.tools or any(fnmatch.fnmatchcase(tool, g) for g in server.tools)
