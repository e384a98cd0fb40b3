"""web_search: one real search backend, the one the person configured, with provenance.

The backend is `search_backend` when set, else SearXNG when its URL is set, else Brave or
Tavily when a key is set, else ddgs; there is no fall back to another: a failure or an empty
answer is an error result that says no results were produced. The result's metadata records
the backend, the request URL (keys never appear in it: Brave and Tavily take theirs in headers,
and userinfo and key-like query parameters are redacted) and the number of hits; the loop
publishes it in the tool_call_finished event.
"""

from __future__ import annotations

import asyncio
import html
import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx

from workbench.config.choices import SEARCH_BACKENDS
from workbench.config.settings import Settings
from workbench.core.feedback import Feedback
from workbench.pb import workbench_pb2 as pb
from workbench.tools.arguments import shorten
from workbench.tools.registry import ToolContext, tool
from workbench.tools.web.body import USER_AGENT, clean_text, read_capped, redact

MAX_SEARCH_RESULTS = 20  # Brave and Tavily answer at most 20 per request
QUERY_MAX_CHARS = 2048  # longer queries are refused (search engines cut them)


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
                body, more = await read_capped(response, settings.web_max_bytes)
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
        detail = explain_status(status) or clean_text(body[:200].decode("utf-8", "replace"))
        raise SearchFailed(
            f"{name} at {shown} answered HTTP {status} {response.reason_phrase}" + (f": {detail}" if detail else ""),
            shown,
            status,
        )
    if more:
        raise SearchFailed(f"{name} at {shown} sent more than {settings.web_max_bytes:,} bytes", shown, status)
    try:
        return json.loads(body)
    except RecursionError as err:  # a hostile or broken backend: arrays nested past what can be read
        raise SearchFailed(f"{name} at {shown} answered JSON nested too deeply to read", shown, status) from err
    except ValueError as err:
        preview = clean_text(body[:120].decode("utf-8", "replace")) or "(empty body)"
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
    hits = [Hit(clean_text(i.get("title")), str(i.get("url") or ""), clean_text(i.get("content"))) for i in items][
        :count
    ]
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
            clean_text(i.get("title")),
            str(i.get("url") or ""),
            clean_text(html.unescape(re.sub(r"</?strong>", "", str(i.get("description") or "")))),
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
    hits = [Hit(clean_text(i.get("title")), str(i.get("url") or ""), clean_text(i.get("content"))) for i in items]
    return hits[:count], shown, ""


def _ddgs_text(query: str, count: int, timeout: float) -> list[dict[str, Any]]:
    from ddgs import DDGS
    from ddgs.exceptions import DDGSException

    try:
        return DDGS(timeout=max(int(timeout), 1)).text(query, max_results=count)
    except DDGSException as err:
        if "no results" in str(err).lower():
            return []
        raise SearchFailed(ddgs_cause(err)) from err


def ddgs_cause(err: Exception) -> str:
    """What went wrong in ddgs, in a sentence: a failed DNS lookup (no internet access) said so
    plainly instead of its nested exception text; anything else as ddgs put it, shortened."""
    text = str(err)
    if re.search(r"(?i)\bdns\b|error resolving|name or service not known|name resolution", text):
        host = re.search(r"https?://([^/\s)'\"]+)", text)
        where = f"of {host.group(1)} " if host else ""
        return (
            f"ddgs could not reach a search engine: the DNS lookup {where}failed, so this machine seems to "
            "have no internet access (configure a local searxng_url, or work without the web)"
        )
    return f"ddgs failed ({type(err).__name__}: {shorten(text, 300)})"


async def _ddgs(query: str, count: int, settings: Settings) -> tuple[list[Hit], str, str]:
    # ddgs is synchronous and asks several engines itself; keep it off the event loop.
    try:
        items = await asyncio.to_thread(_ddgs_text, query, count, settings.web_timeout)
    except SearchFailed:
        raise
    except Exception as err:
        raise SearchFailed(ddgs_cause(err)) from err
    hits = [Hit(clean_text(i.get("title")), str(i.get("href") or ""), clean_text(i.get("body"))) for i in items]
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
    if len(query) > QUERY_MAX_CHARS:
        raise Feedback(
            f"web search failed: the query is {len(query):,} characters long ({shorten(query, 80)}); a search "
            f"query has at most {QUERY_MAX_CHARS:,} characters (search engines cut longer ones); "
            "no results were produced"
        )
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


__all__ = ["BACKENDS", "MAX_SEARCH_RESULTS", "Hit", "SearchFailed", "choose_backend", "web_search"]
