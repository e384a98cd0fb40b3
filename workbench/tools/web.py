"""Web tools: web_search (a real search backend, with provenance) and web_fetch (guarded HTTP GET).

web_search asks one backend, the one the person configured (`search_backend`, else SearXNG when
its URL is set, else Brave or Tavily when a key is set, else ddgs), and never falls back to
another: a failure or an empty answer is an error result that says no results were produced.
The result's metadata records the backend, the request URL (keys never appear in it: Brave and
Tavily take theirs in headers, and userinfo and key-like query parameters are redacted) and the
number of hits; the loop publishes it in the tool_call_finished event.

web_fetch refuses every address that is not public (loopback, private, link-local, ...) unless
the user config lists the host in `web.allow_hosts`. The check sits in the network backend of
the HTTP client: each connection resolves its host once, checks every resolved address and then
connects to exactly those checked addresses, so the connection is pinned to what was checked
(no second DNS lookup to rebind) and every redirect hop, which opens its own connection, goes
through the same check. Redirects are followed here, a bounded number of times; the body is
streamed and reading stops at the size cap.
"""

from __future__ import annotations

import asyncio
import html
import ipaddress
import json
import re
import socket
import ssl
import zlib
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode, urljoin, urlsplit, urlunsplit

import httpcore
import httpx

from workbench.config import SEARCH_BACKENDS, Settings
from workbench.feedback import Feedback
from workbench.pb import workbench_pb2 as pb
from workbench.tools import ToolContext, tool

MAX_SEARCH_RESULTS = 20  # Brave and Tavily answer at most 20 per request
MAX_REDIRECTS = 5
USER_AGENT = "Mozilla/5.0 (compatible; workbench/0.1; +https://github.com/workbench)"
_KEYLIKE = re.compile(r"key|token|secret|password|passwd|auth|sig", re.IGNORECASE)


# --- provenance -------------------------------------------------------------------------------


def redact(url: str) -> str:
    """The URL as it may be recorded: no userinfo, key-like query parameters masked."""
    parts = urlsplit(url)
    netloc = parts.netloc.rpartition("@")[2]
    query = urlencode(
        [(k, "***" if _KEYLIKE.search(k) else v) for k, v in parse_qsl(parts.query, keep_blank_values=True)]
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


# --- web_search -------------------------------------------------------------------------------


@dataclass
class Hit:
    title: str
    url: str
    snippet: str


class SearchFailed(Exception):
    """One backend's failure, with what was asked of it (already redacted)."""

    def __init__(self, cause: str, request_url: str = "", status: int = 0):
        super().__init__(cause)
        self.cause = cause
        self.request_url = request_url
        self.status = status


def choose_backend(settings: Settings) -> str:
    """The configured backend; else SearXNG when its URL is set; else a keyed one; else ddgs."""
    if settings.search_backend:
        if settings.search_backend not in SEARCH_BACKENDS:
            raise SearchFailed(
                f"unknown search backend {settings.search_backend!r}; "
                f"set WORKBENCH_SEARCH_BACKEND to one of {', '.join(SEARCH_BACKENDS)}"
            )
        return settings.search_backend
    if settings.searxng_url:
        return "searxng"
    if settings.brave_api_key:
        return "brave"
    if settings.tavily_api_key:
        return "tavily"
    return "ddgs"


def _clean(text: Any) -> str:
    return " ".join(str(text or "").split())


class _Inflate:
    """Undo one Content-Encoding (gzip or deflate) with a bound on each call's output.

    httpx's own decoders inflate each network chunk whole, and stack encodings ("gzip, gzip"),
    so a few KB on the wire can become gigabytes in memory before any size cap is checked.
    Here every call returns at most `room` bytes and keeps the rest of its input pending.
    """

    def __init__(self, coding: str):
        self.coding = coding
        self.raw_deflate_tried = coding != "deflate"
        wbits = zlib.MAX_WBITS | 16 if coding in ("gzip", "x-gzip") else zlib.MAX_WBITS
        self.obj = zlib.decompressobj(wbits)
        self.started = False

    def __call__(self, data: bytes, room: int) -> bytes:
        out: list[bytes] = []
        got = 0
        while data and got < room and not self.obj.eof:
            try:
                piece = self.obj.decompress(data, room - got)
            except zlib.error as err:
                if not self.started and not self.raw_deflate_tried:  # deflate without its zlib header
                    self.raw_deflate_tried = True
                    self.obj = zlib.decompressobj(-zlib.MAX_WBITS)
                    continue
                raise Feedback(f"the body's {self.coding} content encoding is corrupt ({err})") from err
            self.started = True
            data = self.obj.unconsumed_tail
            out.append(piece)
            got += len(piece)
        return b"".join(out)


def _inflater(content_encoding: str) -> _Inflate | None:
    """A bounded decoder for the response's Content-Encoding; None when the body is not encoded."""
    codings = [c.strip().lower() for c in content_encoding.split(",")]
    codings = [c for c in codings if c and c != "identity"]
    if not codings:
        return None
    if len(codings) == 1 and codings[0] in ("gzip", "x-gzip", "deflate"):
        return _Inflate(codings[0])
    raise Feedback(
        f"the server sent the body with the content encoding {content_encoding!r}, which web_fetch does not "
        "decode (it asks for gzip or deflate, one layer)"
    )


async def _read_capped(response: httpx.Response, limit: int) -> tuple[bytes, bool]:
    """Read a streamed body up to `limit` decoded bytes; return it and whether more was left unread."""
    chunks: list[bytes] = []
    size = 0
    inflate = _inflater(response.headers.get("content-encoding", ""))
    async for raw in response.aiter_raw():
        chunk = raw if inflate is None else inflate(raw, limit - size + 1)
        room = limit - size
        if len(chunk) > room:
            chunks.append(chunk[:room])
            return b"".join(chunks), True
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks), False


async def _count_capped(response: httpx.Response, limit: int) -> tuple[int, bool]:
    """Count a streamed body's decoded bytes without keeping them, up to `limit`."""
    size = 0
    inflate = _inflater(response.headers.get("content-encoding", ""))
    async for raw in response.aiter_raw():
        size += len(raw) if inflate is None else len(inflate(raw, limit - size + 1))
        if size > limit:
            return limit, True
    return size, False


async def _search_json(
    settings: Settings,
    name: str,
    request: httpx.Request,
    explain_status: Callable[[int], str] = lambda status: "",
) -> Any:
    """Send one backend request; return its JSON, or raise SearchFailed with a cause to show."""
    shown = redact(str(request.url))
    try:
        async with httpx.AsyncClient(timeout=settings.web_timeout, follow_redirects=True) as client:
            response = await client.send(request, stream=True)
            try:
                body, more = await _read_capped(response, settings.web_max_bytes)
            finally:
                await response.aclose()
    except httpx.TimeoutException as err:
        raise SearchFailed(f"{name} at {shown} timed out after {settings.web_timeout:g} s", shown) from err
    except httpx.HTTPError as err:
        raise SearchFailed(
            f"{name} at {shown} could not be reached ({type(err).__name__}: {err or 'no detail'})", shown
        ) from err
    status = response.status_code
    if status >= 400:
        detail = explain_status(status) or _clean(body[:200].decode("utf-8", "replace"))
        raise SearchFailed(
            f"{name} at {shown} answered HTTP {status} {response.reason_phrase}" + (f": {detail}" if detail else ""),
            shown,
            status,
        )
    if more:
        raise SearchFailed(f"{name} at {shown} sent more than {settings.web_max_bytes:,} bytes", shown, status)
    try:
        return json.loads(body)
    except ValueError as err:
        preview = _clean(body[:120].decode("utf-8", "replace")) or "(empty body)"
        raise SearchFailed(
            f"{name} at {shown} answered with a body that is not JSON ({err}); it began: {preview}",
            shown,
            status,
        ) from err


def _results(data: Any, *path: str) -> list[dict[str, Any]]:
    for key in path:
        data = data.get(key) if isinstance(data, dict) else None
    if data is None:
        return []
    if not isinstance(data, list):
        raise ValueError(f"{'.'.join(path)} is {type(data).__name__}, not a list")
    return [item for item in data if isinstance(item, dict)]


async def _searxng(query: str, count: int, settings: Settings) -> tuple[list[Hit], str, str]:
    if not settings.searxng_url:
        raise SearchFailed("the searxng backend needs its URL: set WORKBENCH_SEARXNG_URL (or searxng_url)")
    base = settings.searxng_url.rstrip("/")
    endpoint = base if base.endswith("/search") else f"{base}/search"
    request = httpx.Request(
        "GET",
        endpoint,
        params={"q": query, "format": "json"},
        headers={"Accept": "application/json", "User-Agent": USER_AGENT},
    )
    shown = redact(str(request.url))

    def explain(status: int) -> str:
        if status == 403:
            return (
                "this SearXNG instance has JSON output switched off; add `json` to `search.formats` "
                "in its settings.yml, or use another backend"
            )
        return ""

    data = await _search_json(settings, "SearXNG", request, explain)
    try:
        items = _results(data, "results")
    except ValueError as err:
        raise SearchFailed(f"SearXNG at {shown} answered JSON without a result list ({err})", shown) from err
    hits = [Hit(_clean(i.get("title")), str(i.get("url") or ""), _clean(i.get("content"))) for i in items][:count]
    note = ""
    if not hits and isinstance(data, dict) and data.get("unresponsive_engines"):
        engines = ", ".join(
            ": ".join(str(part) for part in e) if isinstance(e, list) else str(e) for e in data["unresponsive_engines"]
        )
        note = f"unresponsive engines: {engines}"
    return hits, shown, note


async def _brave(query: str, count: int, settings: Settings) -> tuple[list[Hit], str, str]:
    if not settings.brave_api_key:
        raise SearchFailed("the brave backend needs an API key: set BRAVE_API_KEY (or brave_api_key)")
    request = httpx.Request(
        "GET",
        settings.brave_url,
        params={"q": query, "count": count},
        headers={
            "Accept": "application/json",
            "X-Subscription-Token": settings.brave_api_key,
            "User-Agent": USER_AGENT,
        },
    )
    shown = redact(str(request.url))
    explain = {401: "the API key was refused; check BRAVE_API_KEY", 429: "rate limited"}.get
    data = await _search_json(settings, "Brave", request, lambda status: explain(status, ""))
    try:
        items = _results(data, "web", "results")
    except ValueError as err:
        raise SearchFailed(f"Brave at {shown} answered JSON without a result list ({err})", shown) from err
    hits = [
        Hit(
            _clean(i.get("title")),
            str(i.get("url") or ""),
            _clean(html.unescape(re.sub(r"</?strong>", "", str(i.get("description") or "")))),
        )
        for i in items
    ][:count]
    return hits, shown, ""


async def _tavily(query: str, count: int, settings: Settings) -> tuple[list[Hit], str, str]:
    if not settings.tavily_api_key:
        raise SearchFailed("the tavily backend needs an API key: set TAVILY_API_KEY (or tavily_api_key)")
    request = httpx.Request(
        "POST",
        settings.tavily_url,
        json={"query": query, "max_results": count},
        headers={
            "Accept": "application/json",
            "Authorization": f"Bearer {settings.tavily_api_key}",
            "User-Agent": USER_AGENT,
        },
    )
    shown = redact(str(request.url))
    explain = {401: "the API key was refused; check TAVILY_API_KEY", 429: "rate limited"}.get
    data = await _search_json(settings, "Tavily", request, lambda status: explain(status, ""))
    try:
        items = _results(data, "results")
    except ValueError as err:
        raise SearchFailed(f"Tavily at {shown} answered JSON without a result list ({err})", shown) from err
    hits = [Hit(_clean(i.get("title")), str(i.get("url") or ""), _clean(i.get("content"))) for i in items]
    return hits[:count], shown, ""


def _ddgs_text(query: str, count: int, timeout: float) -> list[dict[str, Any]]:
    from ddgs import DDGS
    from ddgs.exceptions import DDGSException

    try:
        return DDGS(timeout=max(int(timeout), 1)).text(query, max_results=count)
    except DDGSException as err:
        if "no results" in str(err).lower():
            return []
        raise SearchFailed(f"ddgs failed ({type(err).__name__}: {err})") from err


async def _ddgs(query: str, count: int, settings: Settings) -> tuple[list[Hit], str, str]:
    # ddgs is synchronous and asks several engines itself; keep it off the event loop.
    try:
        items = await asyncio.to_thread(_ddgs_text, query, count, settings.web_timeout)
    except SearchFailed:
        raise
    except Exception as err:
        raise SearchFailed(f"ddgs failed ({type(err).__name__}: {err})") from err
    hits = [Hit(_clean(i.get("title")), str(i.get("href") or ""), _clean(i.get("body"))) for i in items]
    return hits[:count], "", ""


Backend = Callable[[str, int, Settings], Awaitable[tuple[list[Hit], str, str]]]
BACKENDS: dict[str, Backend] = {"searxng": _searxng, "brave": _brave, "tavily": _tavily, "ddgs": _ddgs}


@tool(read_only=True)
async def web_search(query: str, ctx: ToolContext, max_results: int = 8) -> pb.ToolResult:
    """Search the web; list each hit's title, URL and snippet, with the backend that answered.

    Args:
        query: what to search for, as you would type it into a search engine
        max_results: how many hits to list (1-20)
    """
    if not query.strip():
        raise Feedback("web search failed: the query is empty; no results were produced")
    if max_results < 1:
        raise Feedback(f"max_results must be between 1 and {MAX_SEARCH_RESULTS}, got {max_results}")
    count = min(max_results, MAX_SEARCH_RESULTS)
    settings = ctx.settings
    backend = ""
    try:
        backend = choose_backend(settings)
        hits, request_url, note = await BACKENDS[backend](query, count, settings)
    except SearchFailed as err:
        raise Feedback(
            f"web search failed: {err.cause}; no results were produced",
            metadata={
                "backend": backend,
                "query": query,
                "request_url": err.request_url,
                "status": err.status,
                "hits": 0,
            },
        ) from err
    metadata: dict[str, Any] = {
        "backend": backend,
        "query": query,
        "request_url": request_url,
        "hits": len(hits),
        "urls": [h.url for h in hits],
    }
    if not hits:
        cause = f"{backend} returned no results for {query!r}" + (f" ({note})" if note else "")
        raise Feedback(f"web search failed: {cause}; no results were produced", metadata=metadata)
    where = f" ({request_url})" if request_url else ""
    lines = [f'{len(hits)} results from {backend} for "{query}"{where}']
    if max_results > MAX_SEARCH_RESULTS:
        lines.append(f"(max_results is capped at {MAX_SEARCH_RESULTS})")
    for n, hit in enumerate(hits, 1):
        lines += ["", f"{n}. {hit.title or '(no title)'}", f"   {hit.url}"]
        if hit.snippet:
            lines.append(f"   {hit.snippet}")
    result = pb.ToolResult(output="\n".join(lines))
    result.metadata.update(metadata)
    return result


# --- web_fetch: address checks ----------------------------------------------------------------


class AddressRefused(Exception):
    def __init__(self, host: str, address: str):
        super().__init__(f"{host} resolves to {address}, which is not a public address")
        self.host = host
        self.address = address


class ResolveFailed(Exception):
    def __init__(self, host: str, err: BaseException):
        super().__init__(f"cannot resolve host {host} ({err})")
        self.host = host


def is_public(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """True for globally routable unicast addresses; loopback, private, link-local and the rest are not."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return is_public(address.ipv4_mapped)
        if address.is_site_local:  # fec0::/10: deprecated, but still routed as a private network
            return False
        if address.sixtofour is not None and not is_public(address.sixtofour):  # 2002::/16 embeds IPv4
            return False
        if address.teredo is not None and not all(is_public(a) for a in address.teredo):
            return False
    return address.is_global and not (address.is_multicast or address.is_reserved or address.is_unspecified)


class HostPolicy:
    """Which hosts and addresses web_fetch may reach: public ones, plus what the user allowed."""

    def __init__(self, allow_hosts: Iterable[str]):
        self.names: set[str] = set()
        self.networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
        for entry in allow_hosts:
            entry = entry.strip().lower().strip("[]")
            try:
                self.networks.append(ipaddress.ip_network(entry, strict=False))
            except ValueError:
                self.names.add(entry.rstrip("."))

    def allows(self, host: str, address: str) -> bool:
        ip = ipaddress.ip_address(address.split("%")[0])
        if is_public(ip) or host.lower().rstrip(".") in self.names:
            return True
        return any(ip in network for network in self.networks)


class CheckedBackend(httpcore.AsyncNetworkBackend):
    """Resolve, check every address, then connect to the checked addresses only (pinned)."""

    def __init__(self, policy: HostPolicy, timeout: float):
        self.policy = policy
        self.timeout = timeout
        self.inner = httpcore.AnyIOBackend()
        self.connected: list[tuple[str, str]] = []  # (host, checked address) of each connection

    async def resolve(self, host: str, port: int) -> list[str]:
        loop = asyncio.get_running_loop()
        try:
            infos = await asyncio.wait_for(loop.getaddrinfo(host, port, type=socket.SOCK_STREAM), timeout=self.timeout)
        except (OSError, TimeoutError, UnicodeError) as err:  # UnicodeError: a name IDNA cannot encode
            raise ResolveFailed(host, err) from err
        addresses: list[str] = []
        for info in infos:
            address = str(info[4][0])
            if address not in addresses:
                addresses.append(address)
        return addresses

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        addresses = await self.resolve(host, port)
        for address in addresses:  # every address, not just the first one we would use
            if not self.policy.allows(host, address):
                raise AddressRefused(host, address)
        error: Exception | None = None
        for address in addresses:
            try:
                stream = await self.inner.connect_tcp(
                    address, port, timeout=timeout, local_address=local_address, socket_options=socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as err:
                error = err
                continue
            self.connected.append((host, address))
            return stream
        raise error or httpcore.ConnectError(f"no address for {host}")

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("web_fetch does not use unix sockets")

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


def _client(settings: Settings, backend: CheckedBackend) -> httpx.AsyncClient:
    # trust_env=False on the client: a proxy from the environment would receive the connection
    # instead of the checked address. The transport keeps trust_env for CA bundle settings.
    transport = httpx.AsyncHTTPTransport(trust_env=True)
    transport._pool = httpcore.AsyncConnectionPool(  # the one way to give httpx a network backend
        ssl_context=httpx.create_ssl_context(trust_env=True),
        max_connections=4,
        network_backend=backend,
    )
    return httpx.AsyncClient(
        transport=transport,
        trust_env=False,
        follow_redirects=False,
        timeout=settings.web_timeout,
        headers={
            "User-Agent": USER_AGENT,
            "Accept": "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.9,*/*;q=0.5",
            "Accept-Encoding": "gzip, deflate",  # what _Inflate decodes, within the size cap
        },
    )


# --- web_fetch: content -----------------------------------------------------------------------

_HTML_TYPES = ("text/html", "application/xhtml+xml")
_TEXT_TYPES = (
    "application/json",
    "application/ld+json",
    "application/xml",
    "application/javascript",
    "application/x-javascript",
    "application/ecmascript",
    "application/x-yaml",
    "application/yaml",
    "application/toml",
    "application/x-sh",
    "application/sql",
    "application/graphql",
)


def _declared_kind(content_type: str) -> str:
    """'html', 'text' or 'binary' from the Content-Type; '' when it says nothing useful."""
    if content_type in _HTML_TYPES:
        return "html"
    if content_type.startswith("text/") or content_type in _TEXT_TYPES or content_type.endswith(("+json", "+xml")):
        return "text"
    if content_type and content_type != "application/octet-stream":
        return "binary"
    return ""


def _kind(content_type: str, head: bytes) -> str:
    """'html', 'text' or 'binary', from the Content-Type, else from the first bytes."""
    declared = _declared_kind(content_type)
    if declared:
        return declared
    sniff = head[:512].lstrip().lower()
    if sniff.startswith((b"<!doctype html", b"<html")):
        return "html"
    if b"\x00" in head[:4096]:
        return "binary"
    try:
        head[:4096].decode("utf-8")
    except UnicodeDecodeError as err:
        if err.start < len(head[:4096]) - 4:  # not just a character cut at the edge
            return "binary"
    return "text"


def html_to_markdown(body: bytes, charset: str | None, base_url: str) -> tuple[str, str]:
    """Readable Markdown and the page title, through BeautifulSoup and markdownify.

    Links are made absolute against the page's URL, so they can be fetched as they stand. A page
    nested too deeply for markdownify (100,000 <div>s) gives its plain text instead. CPU-bound on
    a big page: web_fetch runs it in a thread, off the event loop."""
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(body, "html.parser", from_encoding=charset)
    title = _clean(soup.title.get_text()) if soup.title else ""
    base = soup.find("base", href=True)
    base_url = urljoin(base_url, str(base["href"])) if base else base_url
    for tag in soup(["script", "style", "noscript", "template", "svg", "iframe", "head"]):
        tag.decompose()
    for link in soup.find_all("a", href=True):
        href = str(link["href"])
        if not href.startswith(("#", "javascript:", "mailto:")):
            link["href"] = urljoin(base_url, href)
    try:
        text = MarkdownConverter(heading_style="ATX", bullets="-", strip=["img"]).convert_soup(soup)
    except RecursionError:  # nesting deeper than markdownify's recursion can follow: the text alone
        text = soup.get_text("\n")
    text = re.sub(r"[ \t]+\n", "\n", text)
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    return text, title


def _decode(body: bytes, charset: str | None) -> str:
    try:
        return body.decode(charset or "utf-8", errors="replace")
    except LookupError:
        return body.decode("utf-8", errors="replace")


def _tls_problem(err: BaseException) -> str:
    seen: set[int] = set()
    current: BaseException | None = err
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ssl.SSLError):
            return getattr(current, "reason", None) or str(current)
        current = current.__cause__ or current.__context__
    text = str(err)
    return text if re.search(r"ssl|tls|certificate", text, re.IGNORECASE) else ""


@dataclass
class Fetched:
    url: str  # the final URL, after redirects
    status: int
    reason: str
    content_type: str
    charset: str | None
    declared: int | None  # Content-Length, when given
    body: bytes
    more: bool  # the body went on past the size cap


async def _fetch(client: httpx.AsyncClient, url: str, settings: Settings, hops: list[str]) -> Fetched:
    """GET `url`, following redirects ourselves (each hop checked), streaming up to the size cap."""
    current = url
    for _ in range(MAX_REDIRECTS + 1):
        hops.append(current)
        response = await client.send(client.build_request("GET", current), stream=True)
        try:
            if response.is_redirect:
                target = str(response.url.join(response.headers["location"]))
                _check_scheme(target, f"a redirect from {current}")
                if target in hops:
                    chain = " -> ".join([*hops, target])
                    raise Feedback(f"redirect loop fetching {url}: {chain}")
                current = target
                continue
            length = response.headers.get("content-length", "")
            mime = response.headers.get("content-type", "").split(";")[0].strip().lower()
            if _declared_kind(mime) == "binary" and response.status_code < 400:
                # not shown anyway: learn its size from the header, else by counting (capped)
                body, more = b"", False
                if not length.isdigit():
                    size, more = await _count_capped(response, settings.web_max_bytes)
                    length = "" if more else str(size)
            else:
                body, more = await _read_capped(response, settings.web_max_bytes)
            return Fetched(
                url=str(response.url),
                status=response.status_code,
                reason=response.reason_phrase,
                content_type=mime,
                charset=response.charset_encoding,
                declared=int(length) if length.isdigit() else None,
                body=body,
                more=more,
            )
        finally:
            await response.aclose()
    raise Feedback(f"too many redirects fetching {url}: more than {MAX_REDIRECTS} ({' -> '.join(hops)} -> {current})")


def _check_scheme(url: str, what: str) -> None:
    try:
        parts = urlsplit(url)
    except ValueError as err:  # "http://[::1": an unclosed IPv6 bracket
        raise Feedback(f"{what} is not a valid URL: {err}") from err
    if not parts.scheme and not url.startswith("//"):
        raise Feedback(f"{what} has no scheme; web_fetch takes a full URL such as https://{url}")
    if parts.scheme not in ("http", "https"):
        scheme = parts.scheme or "(none)"
        raise Feedback(
            f"{what} uses the scheme {scheme}: web_fetch only fetches http:// and https:// URLs"
            + ("; read local files with read_file" if scheme == "file" else "")
        )
    if not parts.hostname:
        raise Feedback(f"{what} has no host: {url}")


@tool(read_only=True)
async def web_fetch(url: str, ctx: ToolContext, max_chars: int | None = None) -> pb.ToolResult:
    """Fetch a web page over HTTP(S) and return it as readable text (HTML becomes Markdown).

    Args:
        url: the http:// or https:// URL to fetch
        max_chars: cut the returned text after this many characters
    """
    settings = ctx.settings
    url = url.strip()
    _check_scheme(url, f"the URL {url!r}")
    if max_chars is not None and max_chars < 1:
        raise Feedback(f"max_chars must be at least 1, got {max_chars}")
    backend = CheckedBackend(HostPolicy(settings.web_allow_hosts), settings.web_timeout)
    hops: list[str] = []
    metadata: dict[str, Any] = {"url": redact(url)}

    def failed(message: str, output: str = "") -> Feedback:
        metadata["redirects"] = [redact(h) for h in hops[1:]]
        metadata["connected"] = [f"{host} {address}" for host, address in backend.connected]
        return Feedback(message, output=output, metadata=metadata)

    deadline = settings.web_timeout * 3  # each step has web_timeout; the whole fetch has this
    try:
        async with asyncio.timeout(deadline), _client(settings, backend) as client:
            page = await _fetch(client, url, settings, hops)
    except Feedback as err:
        raise failed(err.message) from err
    except (httpx.InvalidURL, UnicodeError) as err:  # UnicodeError: a host name IDNA cannot encode
        raise failed(f"invalid URL {hops[-1] if hops else url}: {err}") from err
    except AddressRefused as err:
        where = f"{hops[-1]} (a redirect from {url})" if len(hops) > 1 else url
        raise failed(
            f"refused to fetch {where}: {err}. web_fetch only reaches public addresses; "
            f"a person can allow this host with web.allow_hosts in their user config"
        ) from err
    except ResolveFailed as err:
        raise failed(f"DNS lookup failed for {err.host} fetching {hops[-1]}: {err}") from err
    except httpx.TimeoutException as err:
        raise failed(f"timed out after {settings.web_timeout:g} s fetching {hops[-1] if hops else url}") from err
    except TimeoutError as err:
        raise failed(
            f"fetching {hops[-1] if hops else url} did not finish within {deadline:g} s "
            f"(the whole fetch, redirects included)"
        ) from err
    except httpx.HTTPError as err:
        where = hops[-1] if hops else url
        tls = _tls_problem(err) if urlsplit(where).scheme == "https" else ""
        if tls:
            raise failed(f"TLS error fetching {where}: {tls}") from err
        raise failed(f"could not fetch {where}: {type(err).__name__}: {err or 'connection failed'}") from err

    metadata.update(
        {
            "final_url": redact(page.url),
            "status": page.status,
            "content_type": page.content_type,
            "bytes": len(page.body),
            "truncated": page.more,
            "redirects": [redact(h) for h in hops[1:]],
            "connected": [f"{host} {address}" for host, address in backend.connected],
        }
    )
    if page.status >= 400:
        snippet = _clean(_decode(page.body[:300], page.charset)) if page.body else ""
        kind = _kind(page.content_type, page.body)
        raise failed(
            f"HTTP {page.status} {page.reason} from {page.url}"
            + (f"; the page says: {snippet[:200]}" if snippet and kind != "binary" else "")
        )
    redirected = f" (redirected from {url})" if page.url != url else ""
    size = f"{page.declared:,}" if page.declared is not None else f"{len(page.body):,}"
    kind = _kind(page.content_type, page.body)
    if kind == "binary":
        if page.declared is not None:
            size_text = f"{page.declared:,} bytes"
        elif page.more:
            size_text = f"more than {settings.web_max_bytes:,} bytes"
        else:
            size_text = f"{len(page.body):,} bytes"
        metadata["size"] = page.declared if page.declared is not None else len(page.body)
        result = pb.ToolResult(
            output=(
                f"{page.url}{redirected}: {page.content_type or 'unknown type'}, {size_text}. "
                "This is not text, so web_fetch shows no content; download it with bash "
                "(curl -o FILE URL) if you need the file."
            )
        )
        result.metadata.update(metadata)
        return result
    title = ""
    if kind == "html":
        text, title = await asyncio.to_thread(html_to_markdown, page.body, page.charset, page.url)
    else:
        text = _decode(page.body, page.charset)
    metadata["chars"] = len(text)
    if title:
        metadata["title"] = title
    mime = page.content_type or "no content type"
    header = f"[{page.url}{redirected}: HTTP {page.status}, {mime}, {size} bytes]"
    if title:
        header += f"\n# {title}"
    cut = ""
    if max_chars is not None and len(text) > max_chars:
        cut = f"\n[... cut at max_chars={max_chars:,} of {len(text):,} characters; fetch again with a larger max_chars]"
        text = text[:max_chars]
    output = f"{header}\n\n{text}{cut}"
    if page.more:
        raise failed(
            f"the body of {page.url} is larger than the size cap of {settings.web_max_bytes:,} bytes"
            + (f" (Content-Length {page.declared:,})" if page.declared else "")
            + "; reading stopped at the cap, so the text above is only its beginning",
            output,
        )
    result = pb.ToolResult(output=output)
    result.metadata.update(metadata)
    return result
