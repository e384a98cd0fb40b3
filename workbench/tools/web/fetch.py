"""web_fetch: a guarded HTTP GET of a page, returned as readable text (HTML becomes Markdown).

Every connection goes through the network guard of `web_guard` (public addresses only, unless
the person allowed a host). Redirects are followed here, a bounded number of times, each hop
checked; the body is streamed and reading stops at the size cap. web_search is in `web_search`.
"""

from __future__ import annotations

import asyncio
import re
import ssl
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx

from workbench.config.settings import Settings
from workbench.core.feedback import Feedback
from workbench.pb import workbench_pb2 as pb
from workbench.tools.arguments import shorten
from workbench.tools.registry import ToolContext, tool
from workbench.tools.web.body import clean_text, count_capped, read_capped, redact
from workbench.tools.web.guard import AddressRefused, CheckedBackend, HostPolicy, ResolveFailed, guarded_client

MAX_REDIRECTS = 5
URL_MAX_CHARS = 8192  # longer URLs are refused before anything echoes them


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
    title = clean_text(soup.title.get_text()) if soup.title else ""
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
                    size, more = await count_capped(response, settings.web_max_bytes)
                    length = "" if more else str(size)
            else:
                body, more = await read_capped(response, settings.web_max_bytes)
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


# what a fetch can fail with; each gets its own words in `_failure`
FETCH_FAILURES = (
    Feedback,
    httpx.InvalidURL,
    UnicodeError,
    AddressRefused,
    ResolveFailed,
    TimeoutError,
    httpx.HTTPError,
)


@dataclass
class _Attempt:
    """One web_fetch call's record: the URL asked for, the hops taken, the connections made; what
    its result's (or failure's) metadata holds."""

    url: str
    backend: CheckedBackend
    hops: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def where(self) -> str:
        """The URL being fetched when something failed (the last hop)."""
        return self.hops[-1] if self.hops else self.url

    def record(self) -> None:
        self.metadata["redirects"] = [redact(h) for h in self.hops[1:]]
        self.metadata["connected"] = [f"{host} {address}" for host, address in self.backend.connected]

    def failed(self, message: str, output: str = "") -> Feedback:
        self.record()
        return Feedback(message, output=output, metadata=self.metadata)


@tool(read_only=True)
async def web_fetch(url: str, ctx: ToolContext, max_chars: int | None = None) -> pb.ToolResult:
    """Fetch a web page over HTTP(S) and return it as readable text (HTML becomes Markdown).

    Args:
        url: the http:// or https:// URL to fetch
        max_chars: cut the returned text after this many characters
    """
    settings = ctx.settings
    url = _checked_request(url, max_chars)
    attempt = _Attempt(url, CheckedBackend(HostPolicy(settings.web_allow_hosts), settings.web_timeout))
    attempt.metadata["url"] = redact(url)
    page = await _get(attempt, settings)
    return await _page_result(page, attempt, settings, max_chars)


def _checked_request(url: str, max_chars: int | None) -> str:
    """The URL to fetch (stripped), or a Feedback saying what is wrong with the call."""
    url = url.strip()
    if len(url) > URL_MAX_CHARS:
        raise Feedback(
            f"the URL is {len(url):,} characters long ({shorten(url, 80)}); web_fetch takes URLs of at most "
            f"{URL_MAX_CHARS:,} characters"
        )
    _check_scheme(url, f"the URL {url!r}")
    if max_chars is not None and max_chars < 1:
        raise Feedback(f"max_chars must be at least 1, got {max_chars}")
    return url


async def _get(attempt: _Attempt, settings: Settings) -> Fetched:
    """The page, or a Feedback that says why it could not be fetched (each failure its words)."""
    deadline = settings.web_timeout * 3  # each step has web_timeout; the whole fetch has this
    try:
        async with asyncio.timeout(deadline), guarded_client(settings, attempt.backend) as client:
            return await _fetch(client, attempt.url, settings, attempt.hops)
    except FETCH_FAILURES as err:
        raise attempt.failed(_failure(err, attempt, settings, deadline)) from err


def _failure(err: BaseException, attempt: _Attempt, settings: Settings, deadline: float) -> str:
    """What the model reads of a fetch that failed with `err`."""
    url, where = attempt.url, attempt.where
    if isinstance(err, Feedback):
        return err.message
    if isinstance(err, httpx.InvalidURL | UnicodeError):  # UnicodeError: a host name IDNA cannot encode
        return f"invalid URL {where}: {err}"
    if isinstance(err, AddressRefused):
        refused = f"{where} (a redirect from {url})" if len(attempt.hops) > 1 else url
        return (
            f"refused to fetch {refused}: {err}. web_fetch only reaches public addresses; "
            f"a person can allow this host with web.allow_hosts in their user config"
        )
    if isinstance(err, ResolveFailed):
        return f"DNS lookup failed for {err.host} fetching {where}: {err}"
    if isinstance(err, httpx.TimeoutException):
        return f"timed out after {settings.web_timeout:g} s fetching {where}"
    if isinstance(err, TimeoutError):
        return f"fetching {where} did not finish within {deadline:g} s (the whole fetch, redirects included)"
    tls = _tls_problem(err) if urlsplit(where).scheme == "https" else ""
    if tls:
        return f"TLS error fetching {where}: {tls}"
    return f"could not fetch {where}: {type(err).__name__}: {err or 'connection failed'}"


async def _page_result(page: Fetched, attempt: _Attempt, settings: Settings, max_chars: int | None) -> pb.ToolResult:
    """The fetched page as the model reads it: an HTTP error, a binary's size, or its text."""
    metadata = attempt.metadata
    metadata.update(
        {
            "final_url": redact(page.url),
            "status": page.status,
            "content_type": page.content_type,
            "bytes": len(page.body),
            "truncated": page.more,
        }
    )
    attempt.record()
    kind = _kind(page.content_type, page.body)
    if page.status >= 400:
        snippet = clean_text(_decode(page.body[:300], page.charset)) if page.body else ""
        raise attempt.failed(
            f"HTTP {page.status} {page.reason} from {page.url}"
            + (f"; the page says: {snippet[:200]}" if snippet and kind != "binary" else "")
        )
    redirected = f" (redirected from {attempt.url})" if page.url != attempt.url else ""
    if kind == "binary":
        metadata["size"] = page.declared if page.declared is not None else len(page.body)
        result = pb.ToolResult(output=_binary_text(page, redirected, settings))
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
    output = _text_output(page, redirected, title, text, max_chars)
    if page.more:
        raise attempt.failed(
            f"the body of {page.url} is larger than the size cap of {settings.web_max_bytes:,} bytes"
            + (f" (Content-Length {page.declared:,})" if page.declared else "")
            + "; reading stopped at the cap, so the text above is only its beginning",
            output,
        )
    result = pb.ToolResult(output=output)
    result.metadata.update(metadata)
    return result


def _binary_text(page: Fetched, redirected: str, settings: Settings) -> str:
    """A page that is not text: its type and size, and how to download it."""
    if page.declared is not None:
        size_text = f"{page.declared:,} bytes"
    elif page.more:
        size_text = f"more than {settings.web_max_bytes:,} bytes"
    else:
        size_text = f"{len(page.body):,} bytes"
    return (
        f"{page.url}{redirected}: {page.content_type or 'unknown type'}, {size_text}. "
        "This is not text, so web_fetch shows no content; download it with bash "
        "(curl -o FILE URL) if you need the file."
    )


def _text_output(page: Fetched, redirected: str, title: str, text: str, max_chars: int | None) -> str:
    """The page's text under a header line (URL, status, type, size, title), cut at max_chars."""
    size = f"{page.declared:,}" if page.declared is not None else f"{len(page.body):,}"
    header = f"[{page.url}{redirected}: HTTP {page.status}, {page.content_type or 'no content type'}, {size} bytes]"
    if title:
        header += f"\n# {title}"
    cut = ""
    if max_chars is not None and len(text) > max_chars:
        cut = f"\n[... cut at max_chars={max_chars:,} of {len(text):,} characters; fetch again with a larger max_chars]"
        text = text[:max_chars]
    return f"{header}\n\n{text}{cut}"


__all__ = ["MAX_REDIRECTS", "html_to_markdown", "web_fetch"]
