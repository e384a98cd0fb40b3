"""The model gateway: litellm calls, streaming, and the proto <-> wire (OpenAI-style) adapter.

This is the only module that knows the vendor wire format. litellm is imported lazily (it
takes seconds), with the local cost map, no debug banners, and its own retries off: retry
lives in `workbench.model.retry` only.
"""

from __future__ import annotations

import asyncio
import functools
import gc
import importlib
import logging
import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn

from google.protobuf import json_format

from workbench.core.feedback import model_text
from workbench.model.stream import ReplyAssembler, StreamIncomplete
from workbench.model.text_calls import closing_line, echo_reply, echo_results
from workbench.pb import workbench_pb2 as pb

DEMO_PROVIDER = "workbench_demo"
log = logging.getLogger("workbench")
_litellm: Any = None
_import_lock = threading.Lock()
_preload: threading.Thread | None = None


def litellm() -> Any:
    """The litellm module, imported once, configured for Workbench."""
    global _litellm
    with _import_lock:
        if _litellm is None:
            os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            # litellm's success logging copies every message of every call to cut base64 images
            # out of its log payload (a cost that grows with the conversation); Workbench logs
            # nothing through litellm. 0 turns the copy off (litellm's documented variable).
            os.environ.setdefault("MAX_BASE64_LENGTH_FOR_LOGGING", "0")
            import litellm as module

            module.suppress_debug_info = True
            module.num_retries = 0
            # Off: with drop_params on, litellm re-sends a request that got a 422 (its own hidden
            # retry). An unsupported parameter is an error a person should see, not a retry.
            module.drop_params = False
            from workbench.model.demo import DemoModel

            module.custom_provider_map = [
                *[p for p in module.custom_provider_map if p.get("provider") != DEMO_PROVIDER],
                {"provider": DEMO_PROVIDER, "custom_handler": DemoModel()},
            ]
            _litellm = module
    return _litellm


# What litellm's first call imports lazily, before and as the response arrives: its proxy types
# (pydantic models), the tokenizer it prices every call with, its service logger, anyio's backend.
# Imported in the preload thread instead, while the session opens (figures: docs/DECISIONS.md).
FIRST_CALL_MODULES = (
    "litellm.proxy.openai_files_endpoints.common_utils",
    "litellm.litellm_core_utils.default_encoding",
    "litellm._service_logger",
    "litellm.llms.github_copilot.per_user_auth",
    "litellm.llms.litellm_proxy.chat.transformation",
    "anyio._backends._asyncio",
)


def import_and_warm() -> None:
    """Import litellm and what its first call imports lazily; then freeze what exists out of the GC."""
    try:
        litellm()
        for name in FIRST_CALL_MODULES:
            try:
                importlib.import_module(name)
            except ImportError:  # another litellm release: its first call imports what it needs
                log.debug("litellm has no module %s to warm", name)
    finally:
        # start-up ran with the cyclic GC off (see `preload`); what exists now lives for the
        # whole process, so freeze it out of every later collection, then turn the GC back on
        gc.freeze()
        gc.enable()


def preload() -> threading.Thread:
    """Start importing litellm in the background, so start-up overlaps with it.

    The cyclic garbage collector is off until the import is done: litellm's import builds
    thousands of pydantic classes, and the collections they trigger cost about a third of
    the start-up (docs/DECISIONS.md).
    """
    global _preload
    gc.disable()
    thread = threading.Thread(target=import_and_warm, name="import-litellm", daemon=True)
    thread.start()
    _preload = thread
    return thread


def exit_process(code: int) -> NoReturn:
    """End the process with `code`, at once even while litellm's background import runs.

    Interpreter shutdown with the import thread mid-import deadlocks: the thread is frozen
    holding module locks, and litellm's `__del__` handlers import (an HTTP client's aiohttp
    session close) on the main thread. So while the import runs, stdout and stderr are
    flushed, logging is shut down, and the process ends with os._exit (no atexit handlers:
    the session's own cleanup ran before).
    """
    if _preload is not None and _preload.is_alive():
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):  # closed, or a reader that went away
                pass
        logging.shutdown()
        os._exit(code)
    sys.exit(code)


@dataclass
class ModelSpec:
    """Which model to call and how to reach it (runtime config, not protocol)."""

    model: str
    api_base: str = ""
    api_key: str = ""
    timeout: float = 600.0  # seconds without a byte from the server (litellm's idle timeout)
    max_output_tokens: int = 0  # output cap per call; 0: the model's known limit, else DEFAULT_OUTPUT_CAP
    call_deadline: float = 900.0  # seconds for one call, its whole stream included; 0: none
    answer_reminder: str = "off"  # auto | on | off: the `answer_reminder` setting (see reminds)

    @property
    def wire_model(self) -> str:
        return f"{DEMO_PROVIDER}/scripted" if self.model == "demo" else self.model


# --- proto -> wire --------------------------------------------------------------------


def wire_id(call: pb.ToolCall) -> str:
    """The id a tool call has on the wire: the provider's (ours for calls saved before there was one)."""
    return call.provider_id or call.id


def messages_to_wire(messages: list[pb.Message], remind: bool = False) -> list[dict[str, Any]]:
    """The conversation as the provider sees it: each tool result answers its call's provider id;
    calls the model wrote as text go back as text, each reply's results in one user message
    (text_calls.echo_reply, echo_results).

    `remind`: when the conversation ends with results of real tool calls, the last one ends with
    the closing line for what they are (text_calls.closing_line): answer now if this answers the
    task after content, read the file first after paths, what was not found after an empty
    search; nothing after a failure. On the wire only, and only at the end: earlier turns go back
    as they were, so the provider's prompt cache still holds (docs/DECISIONS.md).
    """
    wire_ids = {c.id: wire_id(c) for m in messages if m.role == pb.ROLE_ASSISTANT for c in m.tool_calls}
    text_calls = {c.id for m in messages if m.role == pb.ROLE_ASSISTANT for c in m.tool_calls if c.from_text}
    wire: list[dict[str, Any]] = []
    echoed: list[pb.ToolResult] = []  # results of text calls, for their reply's one user message
    for m in messages:
        if m.role == pb.ROLE_TOOL and m.tool_result.call_id in text_calls:
            echoed.append(m.tool_result)
            continue
        if echoed:
            wire.append(echo_results(echoed))
            echoed = []
        if m.role == pb.ROLE_ASSISTANT and any(c.id in text_calls for c in m.tool_calls):
            wire.append(echo_reply(m))
        else:
            wire.append(message_to_wire(m, wire_ids))
    if echoed:
        wire.append(echo_results(echoed))
    elif remind and (tail := _results_at_the_end(messages)):
        wire[-1]["content"] += closing_line(tail, as_text=False)
    return wire


def _results_at_the_end(messages: list[pb.Message]) -> list[pb.ToolResult]:
    tail: list[pb.ToolResult] = []
    for m in reversed(messages):
        if m.role != pb.ROLE_TOOL:
            break
        tail.append(m.tool_result)
    return tail[::-1]


def litellm_knows(spec: ModelSpec) -> bool:
    """Whether litellm's table knows this model: not, for a local or small one. Such a model gets
    the answer reminder (auto) and its calls written as text are read leniently (calls_in_text)."""
    return bool(context_window(spec.wire_model))


def reminds(spec: ModelSpec) -> bool:
    """Whether this model's requests end with the answer reminder (the `answer_reminder` setting;
    auto: for a model litellm's table does not know, which is a local or small one)."""
    if spec.answer_reminder == "auto":
        return not litellm_knows(spec)
    return spec.answer_reminder == "on"


def message_to_wire(message: pb.Message, wire_ids: dict[str, str] | None = None) -> dict[str, Any]:
    """One message in the wire format; `wire_ids` maps our call ids to the provider's (see messages_to_wire)."""
    if message.role == pb.ROLE_SYSTEM:
        return {"role": "system", "content": message.text}
    if message.role == pb.ROLE_USER:
        return {"role": "user", "content": message.text}
    if message.role == pb.ROLE_TOOL:
        result = message.tool_result
        call_id = (wire_ids or {}).get(result.call_id, result.call_id)
        return {"role": "tool", "tool_call_id": call_id, "content": model_text(result)}
    wire: dict[str, Any] = {"role": "assistant", "content": message.text or None}
    if message.tool_calls:
        wire["tool_calls"] = [
            {"id": wire_id(c), "type": "function", "function": {"name": c.name, "arguments": c.arguments or "{}"}}
            for c in message.tool_calls
        ]
    return wire


def tools_to_wire(definitions: list[pb.ToolDefinition]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": d.name,
                "description": d.description,
                "parameters": json_format.MessageToDict(d.parameters),
            },
        }
        for d in definitions
    ]


# --- wire -> proto --------------------------------------------------------------------


def usage_from_wire(usage: Any, model: str) -> pb.Usage:
    result = pb.Usage(calls=1)
    if usage is None:
        return result
    result.input_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
    result.output_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
    details = getattr(usage, "prompt_tokens_details", None)
    result.cache_read_tokens = int(getattr(details, "cached_tokens", 0) or 0) if details else 0
    # prompt tokens written to the provider's cache (Anthropic's, as litellm reports them): priced apart too
    written = int(getattr(usage, "cache_creation_input_tokens", 0) or 0)
    if has_price(model):  # litellm prices cached tokens at the model's cache prices, the rest at its input price
        prompt_cost, completion_cost = litellm().cost_per_token(
            model=model,
            prompt_tokens=result.input_tokens,
            completion_tokens=result.output_tokens,
            cache_read_input_tokens=result.cache_read_tokens,
            cache_creation_input_tokens=written,
        )
        result.cost = float(prompt_cost + completion_cost)
    return result  # an unknown model's cost stays unset (unknown is not 0)


@functools.cache
def has_price(wire_model: str) -> bool:
    """Whether litellm's local cost table prices this model."""
    try:
        litellm().cost_per_token(model=wire_model, prompt_tokens=1, completion_tokens=1)
    except Exception:
        return False
    return True


DEFAULT_OUTPUT_CAP = 8192  # output tokens per call when the model's own limit is unknown


def output_cap(spec: ModelSpec) -> int:
    """The output tokens one call may generate: the setting, else the model's known limit, else 8192."""
    return spec.max_output_tokens or known_output_limit(spec.wire_model) or DEFAULT_OUTPUT_CAP


@functools.cache
def known_output_limit(wire_model: str) -> int:
    """The model's output limit in tokens from litellm's local model table; 0 when unknown."""
    try:
        info = litellm().get_model_info(wire_model)
    except Exception:  # a model litellm has not mapped
        return 0
    return int(info.get("max_output_tokens") or 0)


@functools.cache
def context_window(wire_model: str) -> int:
    """The model's input window in tokens from litellm's local model table; 0 when unknown."""
    try:
        info = litellm().get_model_info(wire_model)
    except Exception:  # a model litellm has not mapped: the window is unknown
        return 0
    return int(info.get("max_input_tokens") or info.get("max_tokens") or 0)


def missing_keys(spec: ModelSpec) -> list[str]:
    """The API key variables litellm says this model needs and this process lacks (its own
    `api_key` counts). Only `*_API_KEY` names: endpoints (OLLAMA_API_BASE) have defaults and
    cloud credentials (AWS, Vertex) have other sources litellm cannot see."""
    if spec.model == "demo":
        return []
    try:
        found = litellm().validate_environment(model=spec.wire_model, api_key=spec.api_key or None)
    except Exception:  # a model string litellm cannot route: the call itself will say so
        return []
    return [k for k in found.get("missing_keys", []) if k.endswith("API_KEY")]


def add_usage(total: pb.Usage, more: pb.Usage) -> None:
    total.input_tokens += more.input_tokens
    total.output_tokens += more.output_tokens
    total.cache_read_tokens += more.cache_read_tokens
    total.calls += more.calls
    if more.HasField("cost"):
        total.cost = (total.cost if total.HasField("cost") else 0.0) + more.cost


class ModelClient:
    """Calls one model through litellm; one streamed completion per `complete`."""

    def __init__(self, spec: ModelSpec):
        self.spec = spec

    def request(self, messages: list[pb.Message], tools: list[pb.ToolDefinition]) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": self.spec.wire_model,
            "messages": messages_to_wire(messages, reminds(self.spec)),
            "stream": True,
            "stream_options": {"include_usage": True},
            "num_retries": 0,
            "max_retries": 0,
            "timeout": self.spec.timeout,
            "max_tokens": output_cap(self.spec),
        }
        if tools:
            kwargs["tools"] = tools_to_wire(tools)
        if self.spec.api_base:
            kwargs["api_base"] = self.spec.api_base
        if self.spec.api_key:
            kwargs["api_key"] = self.spec.api_key
        if not has_price(self.spec.wire_model):
            # litellm prices every call for its logging and, for a model it has no price for,
            # searches its tables each time before giving up; a custom price of 0 skips that.
            # Workbench's own cost (`usage_from_wire`) stays unset for such a model.
            kwargs["input_cost_per_token"] = kwargs["output_cost_per_token"] = 0.0
        return kwargs

    async def complete(
        self,
        messages: list[pb.Message],
        tools: list[pb.ToolDefinition],
        on_delta: Callable[[str], None] = lambda text: None,
        *,
        on_call_delta: Callable[[pb.ToolCallDelta], object] | None = None,
        on_notice: Callable[[pb.Notice], object] = lambda notice: None,
    ) -> pb.Message:
        """One streamed completion, assembled into an assistant Message with its usage.

        `on_delta` gets the text as it streams; `on_call_delta` the progress of tool-call
        arguments (throttled); `on_notice` what was changed to keep the reply (lone surrogates).
        The whole call, stream included, ends with StreamIncomplete(CallDeadlineExceeded) after
        `spec.call_deadline` seconds.
        """
        reply = ReplyAssembler(on_delta, on_call_delta)
        deadline = asyncio.timeout(self.spec.call_deadline or None)
        try:
            async with deadline:
                await self._stream(messages, tools, reply)
        except TimeoutError as err:
            if not deadline.expired():
                raise
            raise StreamIncomplete(reply.text_chars, CallDeadlineExceeded(self.spec.call_deadline)) from err
        if not reply.finished:
            raise StreamIncomplete(reply.text_chars)
        message = reply.message(self.spec.model)
        for note in reply.notes():
            on_notice(pb.Notice(level="warning", text=note))
        message.usage.CopyFrom(usage_from_wire(reply.usage, self.spec.wire_model))
        return message

    async def _stream(self, messages: list[pb.Message], tools: list[pb.ToolDefinition], reply: ReplyAssembler) -> None:
        response = await litellm().acompletion(**self.request(messages, tools))
        raw = provider_stream(response)
        chunks = aiter(raw if raw is not None else response)
        try:
            while True:
                try:
                    chunk = await anext(chunks)
                except StopAsyncIteration:
                    return
                except Exception as err:  # the stream broke mid-message (cancellation passes through)
                    cause = mapped_error(err, response) if raw is not None else err
                    raise StreamIncomplete(reply.text_chars, cause) from err
                reply.take(chunk)
        finally:
            if raw is not None:
                await close_quietly(raw)


def provider_stream(response: Any) -> Any | None:
    """The OpenAI SDK's own stream under litellm's stream wrapper, when there is one; else None.

    For an OpenAI-compatible provider litellm streams through the `openai` SDK, whose chunks
    already have the shape `ReplyAssembler` reads. litellm's wrapper around them converts each
    chunk and, after the last one, rebuilds the whole response and prices it for its logging
    callbacks, which Workbench does not use: most of a call's CPU (docs/DECISIONS.md, tools/bench.py
    `turn`). Reading the SDK's stream skips that work; usage comes in the stream's last chunk
    (`stream_options.include_usage`), and a mid-stream error is mapped by litellm as before
    (`mapped_error`). Any other provider (Anthropic, Gemini, the demo model...) keeps the wrapper.
    """
    stream = getattr(response, "completion_stream", None)
    if stream is None:
        return None
    from openai import AsyncStream

    return stream if isinstance(stream, AsyncStream) else None


def mapped_error(err: Exception, response: Any) -> BaseException:
    """A mid-stream error of the provider's SDK as litellm's own error types say it (for retry)."""
    try:
        result = litellm().exception_type(
            model=getattr(response, "model", None) or "",
            original_exception=err,
            custom_llm_provider=getattr(response, "custom_llm_provider", None),
        )
    except Exception as mapped:  # litellm raises the mapped error rather than returning it
        return mapped
    return result if isinstance(result, BaseException) else err


async def close_quietly(stream: Any) -> None:
    """Close a provider stream's HTTP response; a connection already gone is not an error."""
    try:
        await stream.close()
    except Exception as err:
        log.debug("closing the model's stream: %s", err)


class CallDeadlineExceeded(TimeoutError):
    """One model call (request and whole stream) took longer than `model_call_deadline`."""

    def __init__(self, seconds: float):
        super().__init__(f"the model call passed its {seconds:g} s deadline (model_call_deadline)")
