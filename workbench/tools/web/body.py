"""What web_search and web_fetch share: the user agent, redacting URLs for the record, and
reading a streamed body with a size cap that holds after decompression too."""

from __future__ import annotations

import re
import zlib
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import httpx

from workbench.core.feedback import Feedback

USER_AGENT = "Mozilla/5.0 (compatible; workbench/0.1; +https://github.com/workbench)"
_KEYLIKE = re.compile(r"key|token|secret|password|passwd|auth|sig", re.IGNORECASE)


def redact(url: str) -> str:
    """The URL as it may be recorded: no userinfo, key-like query parameters masked."""
    parts = urlsplit(url)
    netloc = parts.netloc.rpartition("@")[2]
    query = urlencode(
        [(k, "***" if _KEYLIKE.search(k) else v) for k, v in parse_qsl(parts.query, keep_blank_values=True)]
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def clean_text(text: Any) -> str:
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


async def read_capped(response: httpx.Response, limit: int) -> tuple[bytes, bool]:
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


async def count_capped(response: httpx.Response, limit: int) -> tuple[int, bool]:
    """Count a streamed body's decoded bytes without keeping them, up to `limit`."""
    size = 0
    inflate = _inflater(response.headers.get("content-encoding", ""))
    async for raw in response.aiter_raw():
        size += len(raw) if inflate is None else len(inflate(raw, limit - size + 1))
        if size > limit:
            return limit, True
    return size, False


__all__ = ["USER_AGENT", "clean_text", "count_capped", "read_capped", "redact"]
