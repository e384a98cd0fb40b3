"""A scripted OpenAI-compatible chat completions server on 127.0.0.1 (stdlib HTTP, real sockets).

Tests queue replies; litellm reaches the server through its real HTTP path. Each request body
is recorded. A reply is a dict made by `reply`, `error` or `cut`, or a callable that gets the
request body and returns one of those (a model that reacts to what it was sent).
"""

from __future__ import annotations

import json
import sys
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]]


def call(name: str, arguments: Any = None, call_id: str | None = None, **kwargs: Any) -> dict[str, Any]:
    """A tool call; `arguments` may be raw text (to send broken JSON) or a dict (or kwargs)."""
    args = arguments if isinstance(arguments, str) else json.dumps(arguments if arguments is not None else kwargs)
    return {"id": call_id or f"call_{uuid.uuid4().hex[:10]}", "name": name, "arguments": args}


def reply(
    text: str = "",
    *calls: dict[str, Any],
    delay: float = 0.0,
    usage: tuple[int, int] = (10, 5),
    chunk_delay: float = 0.0,
    cached: int = 0,
) -> dict[str, Any]:
    """A reply; `delay` before it starts, `chunk_delay` between its streamed text chunks; `cached`
    of the prompt tokens were read from the provider's prompt cache (OpenAI's `cached_tokens`)."""
    return {
        "kind": "reply",
        "text": text,
        "calls": list(calls),
        "delay": delay,
        "usage": usage,
        "chunk_delay": chunk_delay,
        "cached": cached,
    }


def error(
    status: int,
    message: str = "error",
    *,
    code: str = "",
    type_: str = "",
    headers: dict[str, str] | None = None,
) -> dict[str, Any]:
    body = {"error": {"message": message, "type": type_ or "error", "code": code or None, "param": None}}
    return {"kind": "error", "status": status, "body": body, "headers": headers or {}}


def cut(text: str) -> dict[str, Any]:
    """A stream that sends `text` and then breaks the connection before the message ends."""
    return {"kind": "cut", "text": text}


def raw(*events: str) -> dict[str, Any]:
    """A stream of these server-sent `data:` payloads exactly as given (malformed ones included)."""
    return {"kind": "raw", "events": list(events)}


def drop() -> dict[str, Any]:
    """A connection closed before any response (a dropped connection)."""
    return {"kind": "drop"}


class _Server(ThreadingHTTPServer):
    request_queue_size = 128  # a burst of 100 concurrent children must not stall on SYN retries
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client whose process ended with a kept-alive connection open (a session's process in
        an engine ends when its run is over) resets it: not an error. socketserver printed a
        traceback into the test's stderr, which tests read."""
        if isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            return
        super().handle_error(request, client_address)


class ScriptedModel:
    def __init__(self) -> None:
        self.script: deque[Reply] = deque()
        self.requests: list[dict[str, Any]] = []
        self.request_times: list[float] = []
        self.authorizations: list[str] = []  # each request's Authorization header
        self.lock = threading.Lock()
        handler = self._handler()
        self.server = _Server(("127.0.0.1", 0), handler)
        # a short poll: `close` waits for the serving loop's next look, 0.5 s by default, in every test
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def add(self, *replies: Reply) -> ScriptedModel:
        self.script.extend(replies)
        return self

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _next(self, body: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            self.requests.append(body)
            self.request_times.append(time.monotonic())
            item = self.script.popleft() if self.script else None
        if item is None:
            return error(400, "scripted server: no reply left in the script")
        return item(body) if callable(item) else item

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                model.authorizations.append(self.headers.get("Authorization") or "")
                body = json.loads(self.rfile.read(length) or b"{}")
                spec = model._next(body)
                if spec["kind"] == "error":
                    self._json(spec["status"], spec["body"], spec["headers"])
                elif spec["kind"] == "cut":
                    self._stream_cut(spec["text"])
                elif spec["kind"] == "raw":
                    self._start_stream()
                    for data in spec["events"]:
                        self.wfile.write(f"data: {data}\n\n".encode())
                    self.wfile.flush()
                    self.close_connection = True
                elif spec["kind"] == "drop":
                    self.close_connection = True
                    self.connection.shutdown(2)
                else:
                    time.sleep(spec.get("delay", 0))
                    if body.get("stream"):
                        self._stream(spec, body)
                    else:
                        self._json(200, _completion(spec, body))

            def _json(self, status: int, data: Any, headers: dict[str, str] | None = None) -> None:
                raw = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(raw)

            def _start_stream(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()

            def _send(self, data: Any) -> None:
                self.wfile.write(f"data: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()

            def _stream(self, spec: dict[str, Any], body: dict[str, Any]) -> None:
                self._start_stream()
                base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": int(time.time())}
                base["model"] = body.get("model", "scripted")

                def chunk(delta: dict[str, Any], finish: str | None = None) -> None:
                    self._send({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

                chunk({"role": "assistant", "content": ""})
                text = spec["text"]
                for i in range(0, len(text), 16):
                    chunk({"content": text[i : i + 16]})
                    if spec.get("chunk_delay"):
                        time.sleep(spec["chunk_delay"])
                for index, c in enumerate(spec["calls"]):
                    head = {"index": index, "id": c["id"], "type": "function"}
                    chunk({"tool_calls": [{**head, "function": {"name": c["name"], "arguments": ""}}]})
                    args = c["arguments"]
                    for i in range(0, len(args), 24):
                        chunk({"tool_calls": [{"index": index, "function": {"arguments": args[i : i + 24]}}]})
                chunk({}, "tool_calls" if spec["calls"] else "stop")
                prompt, completion = spec["usage"]
                usage = {
                    "prompt_tokens": prompt,
                    "completion_tokens": completion,
                    "total_tokens": prompt + completion,
                    "prompt_tokens_details": {"cached_tokens": spec.get("cached", 0)},
                }
                self._send({**base, "choices": [], "usage": usage})
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                self.close_connection = True

            def _stream_cut(self, text: str) -> None:
                self._start_stream()
                base = {
                    "id": "chatcmpl-1",
                    "object": "chat.completion.chunk",
                    "created": 0,
                    "model": "scripted",
                }
                self._send({**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": text}}]})
                self.close_connection = True
                self.connection.shutdown(2)

        return Handler


def _completion(spec: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": spec["text"] or None}
    if spec["calls"]:
        message["tool_calls"] = [
            {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
            for c in spec["calls"]
        ]
    prompt, completion = spec["usage"]
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "scripted"),
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if spec["calls"] else "stop"}],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
    }


class Router:
    """A reply that depends on who asks: a request whose first user message holds a key gets that
    key's next reply (a parent and its subagents share one server). Add it once per request."""

    def __init__(self, **scripts: list[dict[str, Any]]) -> None:
        self.scripts = scripts

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        text = next((m.get("content") or "" for m in body["messages"] if m["role"] == "user"), "")
        for key, replies in self.scripts.items():
            if key in str(text) and replies:
                return replies.pop(0)
        return error(400, f"router: no reply left for {str(text)[:40]!r}")
