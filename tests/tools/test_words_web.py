"""The texts of web_search and web_fetch the model reads, pinned whole (issue 36 item 8): hits, a
search that failed or found nothing, a query or URL refused before anything is sent, a page, an
HTTP error with what the page says, a binary body, a private address refused. Against local HTTP
servers (tests/tools/test_web.py's `serve`: nothing leaves 127.0.0.1), their varying port written
`<port>`. A change of wording is a reviewed diff (`pytest --inline-snapshot=review`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from inline_snapshot import snapshot

from tests.tools.test_web import SEARX_HITS, Server, serve  # noqa: F401 - serve: the fixture
from tests.words import said, tool_ctx
from workbench.tools.registry import Toolbox

BOX = Toolbox(["web_search", "web_fetch"])


async def web(server: Server | None, workspace: Path, tmp_path: Path, name: str, **args: Any) -> str:
    settings: dict[str, Any] = {"web_allow_hosts": ["127.0.0.1"]}
    if server is not None:
        settings["searxng_url"] = server.url
    text = await said(BOX, tool_ctx(workspace, tmp_path, **settings), name, args)
    return text.replace(f":{server.port}", ":<port>") if server is not None else text


async def test_web_search(workspace: Path, tmp_path: Path, serve: Callable[..., Server]) -> None:  # noqa: F811
    searx = serve({"/search": lambda h: h.json(SEARX_HITS)})
    assert await web(searx, workspace, tmp_path, "web_search", query="python asyncio", max_results=2) == snapshot("""\
2 results from searxng for "python asyncio" (http://127.0.0.1:<port>/search?q=python+asyncio&format=json)

1. asyncio docs
   https://docs.python.org/3/library/asyncio.html
   Async I/O

2. Real Python
   https://realpython.com/async-io-python/
   A walkthrough\
""")
    assert await web(searx, workspace, tmp_path, "web_search", query="python asyncio", max_results=50) == snapshot("""\
3 results from searxng for "python asyncio" (http://127.0.0.1:<port>/search?q=python+asyncio&format=json)
(max_results is capped at 20)

1. asyncio docs
   https://docs.python.org/3/library/asyncio.html
   Async I/O

2. Real Python
   https://realpython.com/async-io-python/
   A walkthrough

3. PEP 3156
   https://peps.python.org/pep-3156/
   Asynchronous IO\
""")
    assert await web(searx, workspace, tmp_path, "web_search", query="  ") == snapshot(
        "Error: web search failed: the query is empty; no results were produced"
    )
    empty = serve({"/search": lambda h: h.json({"results": [], "unresponsive_engines": [["google", "timeout"]]})})
    assert await web(empty, workspace, tmp_path, "web_search", query="nothing") == snapshot(
        "Error: web search failed: searxng returned no results for 'nothing' (unresponsive engines: google: timeout); no results were produced"
    )
    broken = serve({"/search": lambda h: h.reply(403, "text/html", b"<h1>Forbidden</h1>")})
    assert await web(broken, workspace, tmp_path, "web_search", query="x") == snapshot(
        "Error: web search failed: SearXNG at http://127.0.0.1:<port>/search?q=x&format=json answered HTTP 403 Forbidden: this SearXNG instance has JSON output switched off; add `json` to `search.formats` in its settings.yml, or use another backend; no results were produced"
    )


async def test_web_fetch(workspace: Path, tmp_path: Path, serve: Callable[..., Server]) -> None:  # noqa: F811
    page = b"<html><head><title>Docs</title></head><body><h1>Install</h1><p>Run <code>pip install x</code>.</p></body></html>"
    site = serve(
        {
            "/docs": lambda h: h.reply(200, "text/html", page),
            "/gone": lambda h: h.reply(404, "text/html", b"<p>This page moved to /docs.</p>"),
            "/logo.png": lambda h: h.reply(200, "image/png", b"\x89PNG\r\n\x1a\n" + bytes(64)),
            "/old": lambda h: h.redirect("/docs"),
        }
    )
    url = f"http://127.0.0.1:{site.port}"
    assert await web(site, workspace, tmp_path, "web_fetch", url=f"{url}/docs") == snapshot("""\
[http://127.0.0.1:<port>/docs: HTTP 200, text/html, 112 bytes]
# Docs

# Install

Run `pip install x`.\
""")
    assert await web(site, workspace, tmp_path, "web_fetch", url=f"{url}/old", max_chars=20) == snapshot("""\
[http://127.0.0.1:<port>/docs (redirected from http://127.0.0.1:<port>/old): HTTP 200, text/html, 112 bytes]
# Docs

# Install

Run `pip \n\
[... cut at max_chars=20 of 31 characters; fetch again with a larger max_chars]\
""")
    assert await web(site, workspace, tmp_path, "web_fetch", url=f"{url}/gone") == snapshot(
        "Error: HTTP 404 Not Found from http://127.0.0.1:<port>/gone; the page says: <p>This page moved to /docs.</p>"
    )
    assert await web(site, workspace, tmp_path, "web_fetch", url=f"{url}/logo.png") == snapshot(
        "http://127.0.0.1:<port>/logo.png: image/png, 72 bytes. This is not text, so web_fetch shows no content; download it with bash (curl -o FILE URL) if you need the file."
    )


async def test_urls_refused_before_anything_is_sent(workspace: Path, tmp_path: Path) -> None:
    assert await web(None, workspace, tmp_path, "web_fetch", url="example.com/docs") == snapshot(
        "Error: the URL 'example.com/docs' has no scheme; web_fetch takes a full URL such as https://example.com/docs"
    )
    assert await web(None, workspace, tmp_path, "web_fetch", url="ftp://example.com/file") == snapshot(
        "Error: the URL 'ftp://example.com/file' uses the scheme ftp: web_fetch only fetches http:// and https:// URLs"
    )
    assert await web(None, workspace, tmp_path, "web_fetch", url="http:///path") == snapshot(
        "Error: the URL 'http:///path' has no host: http:///path"
    )
    assert await web(None, workspace, tmp_path, "web_fetch", url="https://example.com", max_chars=0) == snapshot(
        "Error: max_chars must be at least 1, got 0"
    )
    assert await web(None, workspace, tmp_path, "web_fetch", url="http://10.0.0.7/admin") == snapshot(
        "Error: refused to fetch http://10.0.0.7/admin: 10.0.0.7 resolves to 10.0.0.7, which is not a public address. web_fetch only reaches public addresses; a person can allow this host with web.allow_hosts in their user config"
    )
