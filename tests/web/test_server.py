"""`workbench web`'s gate, with real sockets: aiohttp's server on a free port of 127.0.0.1, an aiohttp
client for the pages and the websocket. A tab's app here is a small Python process (the browser tests
in test_browser.py run Workbench itself)."""

from __future__ import annotations

import asyncio
import socket
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web

from workbench.cli.main import main
from workbench.web.server import Limits, Starts, WebServer, bind

TOKEN = "the-right-token-0123456789"
# A tab's app that lives until its input closes (as the web driver's app does): the gate's tests need
# no Workbench app behind the websocket.
IDLE_APP = [sys.executable, "-c", "import sys; sys.stdin.buffer.read()"]


@dataclass
class Served:
    server: WebServer
    base: str
    port: int

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def cookies(self, token: str = TOKEN) -> dict[str, str]:
        return {self.server.cookie: token}


async def serving(limits: Limits = Limits()) -> AsyncIterator[Served]:
    listener = bind("127.0.0.1", 0)
    port = listener.getsockname()[1]
    server = WebServer(IDLE_APP, TOKEN, port, limits=limits)
    runner = web.AppRunner(server.application(), access_log=None)
    await runner.setup()
    await web.SockSite(runner, listener).start()
    try:
        yield Served(server, f"http://127.0.0.1:{port}", port)
    finally:
        await runner.cleanup()


@pytest.fixture
async def served() -> AsyncIterator[Served]:
    async for s in serving():
        yield s


async def get(url: str, cookies: dict[str, str] | None = None) -> tuple[int, str, aiohttp.ClientResponse]:
    async with (
        aiohttp.ClientSession(cookies=cookies) as client,
        client.get(url, allow_redirects=False) as response,
    ):
        return response.status, await response.text(), response


@pytest.mark.parametrize("path", ["/", "/?token=wrong", "/?token=", "/static/js/textual.js", "/ws", "/download/x"])
async def test_without_the_token_everything_is_403_and_nothing_of_the_app(served: Served, path: str) -> None:
    status, body, _ = await get(served.base + path)
    assert status == 403
    assert "token" in body and "<html" not in body.lower() and "textual" not in body.lower()


async def test_a_wrong_cookie_is_403(served: Served) -> None:
    status, _, _ = await get(served.base + "/", cookies=served.cookies("the-right-token-012345678X"))
    assert status == 403


async def test_the_token_sets_a_cookie_and_leaves_the_address(served: Served) -> None:
    status, _, response = await get(f"{served.base}/?token={TOKEN}")
    assert status == 303 and response.headers["Location"] == "/"
    cookie = response.cookies[served.server.cookie]
    assert cookie.value == TOKEN and cookie["httponly"] and cookie["samesite"] == "Strict"
    assert served.server.cookie.endswith(str(served.port))  # two servers on one host keep their cookies apart
    status, body, response = await get(served.base + "/", cookies=served.cookies())
    assert status == 200 and "/static/js/textual.js" in body and 'id="terminal"' in body
    assert "frame-ancestors 'none'" in response.headers["Content-Security-Policy"]
    assert "googleapis" not in body  # nothing fetched from elsewhere
    assert response.headers["Cache-Control"] == "no-store"
    status, body, response = await get(served.base + "/static/js/textual.js", cookies=served.cookies())
    assert status == 200 and "WebSocket" in body
    assert response.headers["Cache-Control"] == "private, max-age=3600"  # textual-serve's script, for a reload


async def open_tab(served: Served, origin: str | None) -> tuple[int, aiohttp.ClientWebSocketResponse | None]:
    headers = {"Origin": origin} if origin is not None else {}
    client = aiohttp.ClientSession(cookies=served.cookies())
    try:
        socket_ = await client.ws_connect(served.base + "/ws?width=80&height=24", headers=headers, origin=origin)
    except aiohttp.WSServerHandshakeError as err:
        await client.close()
        return err.status, None
    socket_._test_client = client  # type: ignore[attr-defined]  # closed with the socket below
    return 101, socket_


async def close_tab(socket_: aiohttp.ClientWebSocketResponse) -> None:
    await socket_.close()
    await socket_._test_client.close()  # type: ignore[attr-defined]


@pytest.mark.parametrize("origin", [None, "http://evil.example", "http://127.0.0.1:1", "null", "file://"])
async def test_the_websocket_refuses_another_origin(served: Served, origin: str | None) -> None:
    status, socket_ = await open_tab(served, origin)
    assert status == 403 and socket_ is None
    assert served.server.tabs_started == 0  # no app started for it


async def test_the_websocket_of_the_page_own_origin_opens_a_tab(served: Served) -> None:
    status, socket_ = await open_tab(served, served.origin)
    assert status == 101 and socket_ is not None
    await socket_.send_json(["ping", "42"])
    assert await asyncio.wait_for(socket_.receive_json(), 10) == ["pong", "42"]
    assert served.server.tabs == 1
    await close_tab(socket_)
    for _ in range(100):
        if served.server.tabs == 0:
            break
        await asyncio.sleep(0.05)
    assert served.server.tabs == 0


async def test_a_flood_of_tabs_is_bounded(capsys: pytest.CaptureFixture[str]) -> None:
    async for served in serving(Limits(tabs=2, starts=3, window=60)):
        opened = [await open_tab(served, served.origin) for _ in range(3)]
        assert [status for status, _ in opened] == [101, 101, 503]  # two apps at once, the most
        for _, socket_ in opened[:2]:
            assert socket_ is not None
            await close_tab(socket_)
        while served.server.tabs:
            await asyncio.sleep(0.05)
        status, socket_ = await open_tab(served, served.origin)  # the third start in the window
        assert status == 101 and socket_ is not None
        await close_tab(socket_)
        while served.server.tabs:
            await asyncio.sleep(0.05)
        status, _ = await open_tab(served, served.origin)  # the fourth: refused until the window moves on
        assert status == 429
        assert served.server.tabs_started == 3
        for _ in range(5):
            assert (await open_tab(served, served.origin))[0] == 429
    said = capsys.readouterr().err.splitlines()  # the server's terminal: once for each kind of refusal
    assert said == [
        "workbench web: tab refused: 2 open, the most at once",
        "workbench web: tab refused: 3 started in 60 s",
    ]


def test_starts_in_a_sliding_window() -> None:
    starts = Starts(limit=2, window=10)
    assert starts.take(now=0) and starts.take(now=1) and not starts.take(now=2)
    assert starts.retry_after(now=2) == 8
    assert starts.take(now=10.5)  # the first has left the window


def test_a_busy_port_is_one_line_and_exit_2(
    tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    try:
        code = main(["web", "--port", str(port), "--workspace", str(workspace), "--data-dir", str(tmp_path / "d")])
    finally:
        taken.close()
    err = capsys.readouterr().err
    assert code == 2
    assert err == f"workbench: port {port} on 127.0.0.1 is in use: choose another with --port\n"


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--port", "70000"], "--port 70000 is not a port (0 to 65535)"),
        (["--host", "no-such-host.invalid"], "no-such-host.invalid is not an address here"),
    ],
)
def test_bad_flags_are_one_line(
    tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str], flags: list[str], message: str
) -> None:
    code = main(["web", *flags, "--workspace", str(workspace), "--data-dir", str(tmp_path / "d")])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith(f"workbench: {message}") and err.count("\n") == 1


def test_each_tab_runs_the_app_with_the_flags_given(tmp_path: Path, workspace: Path) -> None:
    from workbench.cli.commands.web import tab_argv, tab_env
    from workbench.cli.main import parse

    args = parse(["web", "--model", "openai/x", "--api-key", "sk-secret", "--approval", "auto", "--allow-net",
                  "--workspace", str(workspace), "--data-dir", "rel-data"])  # fmt: skip
    argv = tab_argv(args, "abc123")
    assert argv[1:3] == ["-m", "workbench.cli.main"]
    assert argv[3:] == ["--model", "openai/x", "--workspace", str(workspace), "--data-dir",
                        str(Path("rel-data").resolve()), "--approval", "auto", "--engine", "require",
                        "--resume", "abc123", "--allow-net"]  # fmt: skip  # ID: attached in the engine
    assert tab_argv(parse(["web", "--no-engine"]), "abc123")[3:] == ["--engine", "off", "--resume", "abc123"]
    assert tab_argv(parse(["web", "--engine", "auto"]), None)[3:] == ["--engine", "auto"]
    assert tab_argv(parse(["web"]), None)[3:] == []  # the setting `engine` decides, as in a terminal
    assert "sk-secret" not in " ".join(argv)  # a command line is visible to every user of the machine
    assert tab_env(args) == {"WORKBENCH_API_KEY": "sk-secret"}


def test_an_unknown_session_is_one_line_and_exit_2(
    tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["web", "nosuchsession", "--workspace", str(workspace), "--data-dir", str(tmp_path / "d")])
    err = capsys.readouterr().err
    assert code == 2 and "nosuchsession" in err and err.count("\n") == 1


@pytest.mark.slow
def test_listening_beyond_this_machine_warns_in_one_line(tmp_path: Path, workspace: Path) -> None:
    from tests.web.browser import Served

    web = Served(["--host", "0.0.0.0", "--workspace", str(workspace), "--data-dir", str(tmp_path / "d")], tmp_path)
    try:
        warning = web.err.read_text().splitlines()[0]
        assert warning.startswith(
            "workbench: warning: listening on 0.0.0.0, reachable from other machines, without TLS"
        )
        assert "ssh -L" in warning and "reverse proxy" in warning and web.token not in warning
        assert web.url.startswith(f"http://{socket.gethostname()}:")
    finally:
        assert web.stop() == 0  # SIGTERM: the server stops cleanly
    served = Served(["--workspace", str(workspace), "--data-dir", str(tmp_path / "d2")], tmp_path)
    try:
        assert "warning" not in served.err.read_text()  # 127.0.0.1: no warning
        assert served.url.startswith("http://127.0.0.1:")
    finally:
        served.stop()
