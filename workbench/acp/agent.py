"""Workbench as an ACP agent (`WorkbenchAgent`): the protocol's requests on in-process Sessions.

- initialize: protocol version 1 (the client's when it asks for one this SDK speaks), the
  capabilities (load and list sessions; prompts of text, resource links and embedded text
  resources), the agent's name and version. It imports nothing of the engine: the first reply is
  fast, and litellm's import starts in the background right after it (with the engine, not at all:
  the sessions run there).
- session/new: `cwd` becomes the workspace (the settings are loaded for it, so its project
  config applies), the client's MCP servers join the configured ones (client_servers.py); the
  model is checked first, with a one-line error the client shows.
- session/load: a stored session of that workspace, its conversation replayed as updates.
- session/list, session/set_mode (the approval modes ask, auto, read-only), session/prompt,
  session/cancel. Their work is in live.py.

Errors are JSON-RPC errors with a message a person can act on; nothing is ever written to
stdout but the protocol (server.py).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp import PROTOCOL_VERSION, RequestError
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    SessionCapabilities,
    SessionInfo,
    SessionListCapabilities,
    SessionMode,
    SessionModeState,
    SetSessionModeResponse,
)

from workbench import __version__
from workbench.acp.client_servers import RefusedServer, join, tables
from workbench.config.settings import ConfigError, Settings

if TYPE_CHECKING:
    from workbench.acp.live import LiveSession
    from workbench.session.port import SessionPort

log = logging.getLogger("workbench.acp")

Tables = dict[str, dict[str, Any]]  # MCP servers as config tables, by name
SettingsFor = Callable[[Path], Settings]  # the settings in force for a workspace (flags, env, config files)
INVALID = -32602  # JSON-RPC's invalid params: the request names something that is not there or not usable
PROMPT_CHARS = 1_000_000  # a prompt longer than this is refused, not sent to the model
MODES = {  # the approval modes (config's APPROVAL_MODES), in the order an editor lists them
    "ask": "Ask before any call that changes something or reaches out",
    "auto": "Run calls without asking; the guard's rules still ask or block",
    "read-only": "Only reading calls run; others are refused",
}


def bad(message: str) -> RequestError:
    return RequestError(INVALID, message)


class WorkbenchAgent:
    """The ACP agent: one process, any number of sessions (see the module's doc)."""

    def __init__(self, settings_for: SettingsFor, *, preload: bool = True):
        """`preload`: import litellm after initialize, for sessions in this process; not when they
        go to the engine (setting `engine` not off: litellm is the engine's; a session that opens
        here after all imports it then, as the TUI does)."""
        self.settings_for = settings_for
        self.client: Client | None = None
        self.sessions: dict[str, LiveSession] = {}
        self.preloading = not preload

    def on_connect(self, conn: Client) -> None:
        self.client = conn

    async def initialize(
        self, protocol_version: int, client_capabilities: Any = None, client_info: Any = None, **kwargs: Any
    ) -> InitializeResponse:
        if not self.preloading:  # litellm (2-5 s) imports while the client sends session/new
            self.preloading = True
            asyncio.get_running_loop().call_later(0.05, _preload)
        version = protocol_version if 1 <= protocol_version <= PROTOCOL_VERSION else PROTOCOL_VERSION
        return InitializeResponse(
            protocol_version=version,
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(image=False, audio=False, embedded_context=True),
                mcp_capabilities=McpCapabilities(http=True, sse=False),
                session_capabilities=SessionCapabilities(list=SessionListCapabilities()),
            ),
            agent_info=Implementation(name="workbench", title="Workbench", version=__version__),
            auth_methods=[],
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        return None  # Workbench needs no sign-in: the model's key comes from flags, env or config

    # --- sessions -----------------------------------------------------------------------------

    def _settings(self, cwd: str, mcp_servers: list[Any] | None = None) -> Settings:
        path = Path(cwd)
        if not path.is_absolute():
            raise bad(f"cwd must be an absolute path, got {cwd!r}")
        if not path.exists():
            raise bad(f"cwd {cwd} does not exist")
        if not path.is_dir():
            raise bad(f"cwd {cwd} is not a folder")
        try:
            return join(self.settings_for(path), mcp_servers)
        except (ConfigError, RefusedServer) as err:
            raise bad(str(err)) from err

    def _tables(self, cwd: str, mcp_servers: list[Any] | None) -> Tables:
        """The client's MCP servers as config tables by name (checked by `_settings` first)."""
        return tables(self.settings_for(Path(cwd)), mcp_servers) if mcp_servers else {}

    async def _open(self, settings: Settings, resume: str | None = None, servers: Tables | None = None) -> LiveSession:
        """The session in the engine (setting `engine` not off; a live one by id first), else in
        this process; `servers`: the client's MCP servers (in `settings` already), for the engine."""
        from workbench.acp.live import LiveSession
        from workbench.session.errors import SessionError

        if not settings.model:
            raise bad(
                "no model configured: start `workbench acp --model PROVIDER/MODEL` (e.g. openai/gpt-4.1), "
                'set WORKBENCH_MODEL, or put model = "..." in ~/.config/workbench/config.toml'
            )
        try:
            session = await _in_engine(settings, resume, servers or {}) if settings.engine != "off" else None
            if session is None:
                session = await _in_process(settings, resume)
        except SessionError as err:
            raise bad(str(err)) from err
        assert self.client is not None, "a request before the connection was made"
        live = LiveSession(session, self.client)
        await live.prepare()
        return live

    def _modes(self, live: LiveSession) -> SessionModeState:
        return SessionModeState(
            current_mode_id=live.session.approval,
            available_modes=[SessionMode(id=m, name=m, description=MODES[m]) for m in MODES],
        )

    async def new_session(self, cwd: str, mcp_servers: list[Any] | None = None, **kwargs: Any) -> NewSessionResponse:
        live = await self._open(self._settings(cwd, mcp_servers), servers=self._tables(cwd, mcp_servers))
        self.sessions[live.id] = live
        live.start()
        return NewSessionResponse(session_id=live.id, modes=self._modes(live))

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> LoadSessionResponse:
        settings = self._settings(cwd, mcp_servers)
        if session_id in self.sessions:
            raise bad(f"session {session_id} is already open in this connection")
        live = await self._open(settings, resume=session_id, servers=self._tables(cwd, mcp_servers))
        self.sessions[live.id] = live
        await live.replay()
        live.start()
        return LoadSessionResponse(modes=self._modes(live))

    async def list_sessions(self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any) -> Any:
        from workbench.session.catalog import list_sessions

        settings = self._settings(cwd) if cwd else self.settings_for(Path.cwd())
        found = await asyncio.to_thread(list_sessions, settings)
        shown = [s for s in found if cwd is None or Path(s.workspace) == Path(cwd)]
        return ListSessionsResponse(
            sessions=[
                SessionInfo(
                    session_id=s.id,
                    cwd=s.workspace,
                    title=s.title or None,
                    updated_at=s.updated.ToJsonString() if s.HasField("updated") else None,
                )
                for s in shown
            ]
        )

    def _live(self, session_id: str) -> LiveSession:
        live = self.sessions.get(session_id)
        if live is None:
            raise bad(
                f"no session {session_id!r} is open here: create one with session/new or open it with session/load"
            )
        return live

    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> SetSessionModeResponse:
        live = self._live(session_id)
        if mode_id not in MODES:
            raise bad(f"no mode {mode_id!r}: the modes are {', '.join(MODES)}")
        for _ in MODES:
            if live.session.approval == mode_id:
                break
            live.session.cycle_approval()
        return SetSessionModeResponse()

    # --- turns ----------------------------------------------------------------------------------

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> Any:
        live = self._live(session_id)
        text = prompt_text(prompt)
        if not text.strip():
            raise bad("the prompt is empty: say what the agent should do")
        if len(text) > PROMPT_CHARS:
            raise bad(
                f"the prompt is {len(text):,} characters, over the limit of {PROMPT_CHARS:,}: "
                "attach large files as resource links and let the agent read them"
            )
        return await live.prompt(text)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        live = self.sessions.get(session_id)
        if live is None:
            log.warning("session/cancel for %r, which is not open here", session_id)
            return
        await live.cancel()

    async def close_all(self) -> None:
        """The client went away: every session's run is cancelled and the session closed."""
        for live in list(self.sessions.values()):
            try:
                await live.close()
            except Exception:
                log.exception("closing session %s", live.id)
        self.sessions.clear()


def prompt_text(blocks: list[Any]) -> str:
    """The prompt as the model reads it: text as it is, a resource link as a reference to read,
    an embedded text resource with its URI; images, audio and binary resources are named, not sent."""
    parts: list[str] = []
    for block in blocks:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)
        elif kind == "resource_link":
            parts.append(f"[{block.name}]({block.uri})")
        elif kind == "resource":
            resource = block.resource
            text = getattr(resource, "text", None)
            if text is not None:
                parts.append(f"<context uri={resource.uri!r}>\n{text}\n</context>")
            else:
                parts.append(f"(a binary resource was attached and not sent: {resource.uri})")
        else:
            parts.append(f"(an {kind or 'unknown'} block was attached and not sent: Workbench takes text)")
    return "\n".join(parts)


async def _in_process(settings: Settings, resume: str | None) -> SessionPort:
    from workbench.session.session import Session
    from workbench.session.startup import check_model

    await asyncio.to_thread(check_model, settings)
    return await Session.open(settings, resume, interactive=True)


async def _in_engine(settings: Settings, resume: str | None, servers: Tables) -> SessionPort | None:
    """The session in the engine, opened with these settings in the client's cwd and the client's
    MCP servers (a live one by id first); None with `engine = auto` and no engine answering (one
    is started for next time)."""
    import json

    from workbench.config.choices import FLAG_SETTINGS
    from workbench.service.attach import open_in_engine, open_request

    flags = {name: getattr(settings, name) for name in FLAG_SETTINGS}
    request = open_request(flags, resume, interactive=True, answerable=True)
    request.cwd = str(settings.workspace)  # the client's cwd, not this process's
    for name, table in servers.items():
        request.mcp_servers[name] = json.dumps(table)
    return await open_in_engine(settings, request, attach=resume or "")


def _preload() -> None:
    from workbench.session.startup import preload

    preload()
