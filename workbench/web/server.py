"""`workbench web`'s server: each browser tab a Workbench app, served with textual-serve.

textual-serve runs a Textual app as a child process with its web driver and relays its output to
xterm.js in the page over a websocket (its `AppService`, its `textual.js`). This module is the
gate around that, which textual-serve's own `Server` does not have:

- a random token: `/?token=T` sets a cookie (HttpOnly, SameSite=Strict, named for the port) and
  redirects to `/`, so the token leaves the address bar; the page, its static files and the
  websocket need the cookie, and anything else is 403 with one line of text, nothing of the app;
- the websocket's Origin must be the page's own (scheme://Host): another site's page cannot open
  a tab even where the browser would send the cookie;
- tabs are bounded: at most `Limits.tabs` app processes at once (503 past that) and at most
  `Limits.starts` started in any `Limits.window` seconds (429 with Retry-After), so a flood of
  reconnects costs a few processes, not one each;
- no access log (the first request's line holds the token); the children never see the token.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import shlex
import signal
import socket
import sys
import time
from asyncio.subprocess import Process
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import textual_serve
from aiohttp import WSMsgType, web
from textual_serve.app_service import AppService
from textual_serve.download_manager import DownloadManager

from workbench.web.page import CONTENT_SECURITY_POLICY, page

log = logging.getLogger("workbench.web")  # what it logs never holds the token, nor a URL's query

STATIC = Path(textual_serve.__file__).parent / "static"  # textual.js, xterm.css, the Roboto Mono font
FORBIDDEN = "403: this page needs the URL with its token, as `workbench web` printed it\n"
STOP_GRACE = 5.0  # seconds a tab's app has to quit before it is killed


@dataclass(frozen=True)
class Limits:
    tabs: int = 8  # app processes at once
    starts: int = 12  # tabs started in any `window` seconds
    window: float = 60.0


class Starts:
    """A sliding window of the last tab starts: `take` is False once `limit` fall in `window`."""

    def __init__(self, limit: int, window: float) -> None:
        self.limit, self.window = limit, window
        self._times: deque[float] = deque()

    def take(self, now: float | None = None) -> bool:
        now = time.monotonic() if now is None else now
        while self._times and now - self._times[0] >= self.window:
            self._times.popleft()
        if len(self._times) >= self.limit:
            return False
        self._times.append(now)
        return True

    def retry_after(self, now: float | None = None) -> int:
        now = time.monotonic() if now is None else now
        return max(1, int(self.window - (now - self._times[0]) + 0.999)) if self._times else 1


class Tab(AppService):
    """One tab's app process: textual-serve's AppService with our environment, started without a
    shell (the process killed is the app) in a session of its own (Ctrl-C at the server's terminal
    reaches the server, which asks each app to quit), and stopped for sure."""

    def __init__(self, argv: Sequence[str], env: Mapping[str, str], **kwargs: Any) -> None:
        super().__init__(shlex.join(argv), **kwargs)
        self._argv = list(argv)
        self._extra_env = dict(env)

    def _build_environment(self, width: int = 80, height: int = 24) -> dict[str, str]:
        environment = super()._build_environment(width, height)
        environment.update(self._extra_env)
        return environment

    async def _open_app_process(self, width: int = 80, height: int = 24) -> Process:
        self._process = process = await asyncio.create_subprocess_exec(
            *self._argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=self._build_environment(width=width, height=height),
            start_new_session=True,
        )
        assert process.stdin is not None
        self._stdin = process.stdin
        return process

    async def run(self) -> None:
        """Relay the app's output until it ends; then close the tab's websocket (the page says the
        app has ended), also when the app died without saying so."""
        try:
            await super().run()
        finally:
            with contextlib.suppress(Exception):
                await self.remote_close()

    async def stop(self) -> None:
        """Ask the app to quit and close its input; kill it when it has not ended within STOP_GRACE seconds."""
        task = self._task
        if task is None:
            return
        with contextlib.suppress(Exception):  # a pipe already closed: the app has gone
            await self.send_meta({"type": "quit"})
            self.stdin.close()
        try:
            await asyncio.wait_for(asyncio.shield(task), STOP_GRACE)
        except TimeoutError:
            if self._process is not None and self._process.returncode is None:
                self._process.kill()
            await task
        self._task = None


def _cookie_name(port: int) -> str:
    return f"workbench_web_{port}"  # cookies are per host, not per port: two servers keep apart


class WebServer:
    """The aiohttp application: the gate, the page, the static files, the tabs' websockets."""

    def __init__(
        self,
        command: Sequence[str],
        token: str,
        port: int,
        *,
        env: Mapping[str, str] | None = None,
        title: str = "workbench",
        limits: Limits = Limits(),
    ) -> None:
        self.command = list(command)
        self.env = dict(env or {})
        self.title = title
        self.limits = limits
        self.cookie = _cookie_name(port)
        self._token = token.encode()
        self._starts = Starts(limits.starts, limits.window)
        self._sockets: set[web.WebSocketResponse] = set()
        self.tabs_started = 0
        self._downloads = DownloadManager()
        self._said: dict[str, float] = {}  # a refusal's kind -> when stderr last said it

    def application(self) -> web.Application:
        app = web.Application(middlewares=[self._gate])
        app.add_routes(
            [
                web.get("/", self._page),
                web.get("/ws", self._websocket),
                web.get("/download/{key}", self._download),
                web.get("/favicon.ico", _no_icon),
                web.static("/static", STATIC),
            ]
        )
        app.on_shutdown.append(self._close_tabs)
        return app

    @property
    def tabs(self) -> int:
        return len(self._sockets)

    def _holds(self, value: str | None) -> bool:
        return value is not None and hmac.compare_digest(value.encode(), self._token)

    @web.middleware
    async def _gate(self, request: web.Request, handler: Any) -> web.StreamResponse:
        if self._holds(request.cookies.get(self.cookie)):
            response: web.StreamResponse = await handler(request)
        elif request.path == "/" and self._holds(request.query.get("token")):
            response = web.Response(status=303, headers={"Location": "/"})  # the token leaves the address bar
            response.set_cookie(self.cookie, self._token.decode(), httponly=True, samesite="Strict", path="/")
        else:
            response = web.Response(status=403, text=FORBIDDEN)
        if not response.prepared:
            # textual-serve's own files (textual.js, 500 KB) kept by this browser for a reload; nothing else
            static = request.path.startswith("/static/") and response.status == 200
            response.headers["Cache-Control"] = "private, max-age=3600" if static else "no-store"
            response.headers["Referrer-Policy"] = "no-referrer"
            response.headers["X-Content-Type-Options"] = "nosniff"
        return response

    async def _page(self, request: web.Request) -> web.Response:
        try:
            font_size = max(6, min(int(request.query.get("fontsize", "16")), 48))
        except ValueError:
            font_size = 16
        return web.Response(
            text=page(self.title, font_size),
            content_type="text/html",
            headers={"Content-Security-Policy": CONTENT_SECURITY_POLICY},
        )

    def origin_ok(self, request: web.Request) -> bool:
        """The websocket's Origin is the page's own: same host and port as the request's Host."""
        origin = request.headers.get("Origin")
        if not origin:
            return False
        parts = urlsplit(origin)
        return parts.scheme in ("http", "https") and parts.netloc.lower() == request.host.lower()

    async def _websocket(self, request: web.Request) -> web.StreamResponse:
        if not self.origin_ok(request):
            self._refused(  # %r: another site's text, escaped
                "websocket refused: Origin %r is not this page's (Host %r)", request.headers.get("Origin"), request.host
            )
            return web.Response(status=403, text="403: the websocket's Origin is not this page's\n")
        if self.tabs >= self.limits.tabs:
            self._refused("tab refused: %d open, the most at once", self.tabs)
            return web.Response(status=503, text=f"503: {self.tabs} tabs are open, the most at once: close one\n")
        if not self._starts.take():
            retry = self._starts.retry_after()
            self._refused("tab refused: %d started in %g s", self.limits.starts, self.limits.window)
            return web.Response(
                status=429,
                text=f"429: {self.limits.starts} tabs started in {self.limits.window:g} s: wait {retry} s\n",
                headers={"Retry-After": str(retry)},
            )
        width = _size(request.query.get("width"), 80)
        height = _size(request.query.get("height"), 24)
        websocket = web.WebSocketResponse(heartbeat=15, max_msg_size=1 << 20)
        await websocket.prepare(request)
        self._sockets.add(websocket)
        self.tabs_started += 1
        log.info("tab opened from %s (%d open)", request.remote, self.tabs)
        tab = Tab(
            self.command,
            self.env,
            write_bytes=websocket.send_bytes,
            write_str=websocket.send_str,
            close=websocket.close,
            download_manager=self._downloads,
        )
        try:
            await tab.start(width, height)
            await _relay(websocket, tab)
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            self._sockets.discard(websocket)
            await tab.stop()
            await websocket.close()
            log.info("tab closed (%d open)", self.tabs)
        return websocket

    def _refused(self, message: str, *args: object) -> None:
        """Logged each time; said on stderr (the server's terminal) at most once a minute for each kind."""
        log.warning(message, *args)
        now = time.monotonic()
        if now - self._said.get(message, -60.0) >= 60.0:
            self._said[message] = now
            print(f"workbench web: {message % args}", file=sys.stderr, flush=True)

    async def _download(self, request: web.Request) -> web.StreamResponse:
        """A file the app delivers (textual's `deliver_text` / `deliver_binary`)."""
        try:
            meta = await self._downloads.get_download_metadata(request.match_info["key"])
        except KeyError:
            raise web.HTTPNotFound(text="no such download\n") from None
        response = web.StreamResponse()
        response.headers["Content-Type"] = meta.mime_type + (f"; charset={meta.encoding}" if meta.encoding else "")
        disposition = "inline" if meta.open_method == "browser" else "attachment"
        response.headers["Content-Disposition"] = f"{disposition}; filename={json.dumps(meta.file_name)}"
        await response.prepare(request)
        async for chunk in self._downloads.download(request.match_info["key"]):
            await response.write(chunk)
        await response.write_eof()
        return response

    async def _close_tabs(self, _app: web.Application) -> None:
        for websocket in list(self._sockets):
            await websocket.close(code=1001, message=b"server stopping")


async def _no_icon(_request: web.Request) -> web.Response:
    return web.Response(status=204)


def _size(value: str | None, default: int) -> int:
    try:
        return max(10, min(int(value or default), 1000))
    except ValueError:
        return default


async def _relay(websocket: web.WebSocketResponse, tab: Tab) -> None:
    """The page's messages to the app: keys ("stdin"), "resize", "ping", "blur", "focus"."""
    async for message in websocket:
        if message.type != WSMsgType.TEXT:
            continue
        try:
            envelope = json.loads(message.data)
            kind, data = envelope[0], envelope[1] if len(envelope) > 1 else None
        except (ValueError, TypeError, IndexError, KeyError):
            continue  # not the page's: ignored
        if kind == "stdin" and isinstance(data, str):
            await tab.send_bytes(data.encode("utf-8"))
        elif kind == "resize" and isinstance(data, dict):
            await tab.set_terminal_size(_size(data.get("width"), 80), _size(data.get("height"), 24))
        elif kind == "ping":
            await websocket.send_json(["pong", data])
        elif kind == "blur":
            await tab.blur()
        elif kind == "focus":
            await tab.focus()


class PortBusy(OSError):
    pass


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on host:port (port 0: one the system picks); PortBusy when it is taken."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except socket.gaierror as err:
        raise OSError(f"{host} is not an address here ({err.strerror})") from None
    listener = socket.socket(family, kind, proto)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # past TIME_WAIT, never a live listener
        listener.bind(address)
        listener.listen(128)
    except OSError as err:
        listener.close()
        if err.errno == 98:  # EADDRINUSE
            raise PortBusy(f"port {port} on {host} is in use: choose another with --port") from None
        raise OSError(f"cannot listen on {host}:{port}: {err.strerror}") from None
    listener.set_inheritable(False)
    return listener


def serve(server: WebServer, listener: socket.socket, ready: Callable[[], None] = lambda: None) -> None:
    """Serve until SIGINT or SIGTERM; the tabs' apps are asked to quit first. `ready` runs once the
    server answers and those signals stop it (the URL is printed then)."""
    asyncio.run(_serve(server, listener, ready))


async def _serve(server: WebServer, listener: socket.socket, ready: Callable[[], None]) -> None:
    runner = web.AppRunner(server.application(), access_log=None, handle_signals=False)
    await runner.setup()
    await web.SockSite(runner, listener).start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    ready()
    try:
        await stop.wait()
    finally:
        await runner.cleanup()
