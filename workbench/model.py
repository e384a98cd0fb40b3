"""The model gateway: litellm calls, streaming, and the proto <-> wire (OpenAI-style) adapter.

This is the only module that knows the vendor wire format. litellm is imported lazily (it
takes seconds), with the local cost map, no debug banners, and its own retries off: retry
lives in `workbench.retry` only.
"""

from __future__ import annotations

import functools
import gc
import importlib
import os
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from google.protobuf import json_format

from workbench.feedback import model_text
from workbench.pb import workbench_pb2 as pb

DEMO_PROVIDER = "workbench_demo"
_litellm: Any = None
_import_lock = threading.Lock()


def litellm() -> Any:
    """The litellm module, imported once, configured for Workbench."""
    global _litellm
    with _import_lock:
        if _litellm is None:
            os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            import litellm as module

            module.suppress_debug_info = True
            module.num_retries = 0
            # Off: with drop_params on, litellm re-sends a request that got a 422 (its own hidden
            # retry). An unsupported parameter is an error a person should see, not a retry.
            module.drop_params = False
            from workbench.demo import DemoModel

            module.custom_provider_map = [
                *[p for p in module.custom_provider_map if p.get("provider") != DEMO_PROVIDER],
                {"provider": DEMO_PROVIDER, "custom_handler": DemoModel()},
            ]
            _litellm = module
    return _litellm


def _import_and_warm() -> None:
    try:
        litellm()
        # litellm's first call imports its proxy types (pydantic models) before it sends the
        # request; import them here, while the main thread sets up the session.
        importlib.import_module("litellm.proxy.openai_files_endpoints.common_utils")
    finally:
        # start-up ran with the cyclic GC off (see `preload`); what exists now lives for the
        # whole process, so freeze it out of every later collection, then turn the GC back on
        gc.freeze()
        gc.enable()


def preload() -> threading.Thread:
    """Start importing litellm in the background, so start-up overlaps with it.

    The cyclic garbage collector is off until the import is done: litellm's import builds
    thousands of pydantic classes, and the collections they trigger cost about a third of
    the start-up (2.9 s -> 1.9 s to the first model request, measured by tools/bench.py).
    """
    gc.disable()
    thread = threading.Thread(target=_import_and_warm, name="import-litellm", daemon=True)
    thread.start()
    return thread


@dataclass
class ModelSpec:
    """Which model to call and how to reach it (runtime config, not protocol)."""

    model: str
    api_base: str = ""
    api_key: str = ""
    timeout: float = 600.0

    @property
    def wire_model(self) -> str:
        return f"{DEMO_PROVIDER}/scripted" if self.model == "demo" else self.model


# --- proto -> wire --------------------------------------------------------------------


def message_to_wire(message: pb.Message) -> dict[str, Any]:
    if message.role == pb.ROLE_SYSTEM:
        return {"role": "system", "content": message.text}
    if message.role == pb.ROLE_USER:
        return {"role": "user", "content": message.text}
    if message.role == pb.ROLE_TOOL:
        result = message.tool_result
        return {"role": "tool", "tool_call_id": result.call_id, "content": model_text(result)}
    wire: dict[str, Any] = {"role": "assistant", "content": message.text or None}
    if message.tool_calls:
        wire["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments or "{}"}}
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


class StreamIncomplete(Exception):
    """The stream broke or ended before the message was complete; its partial text is discarded.

    `cause` is the error that broke it (None when the stream just ended without a finish
    reason); `partial_chars` is how much text had been streamed (and shown) before.
    """

    def __init__(self, partial_chars: int, cause: BaseException | None = None):
        how = f"broke ({_first_line(cause)})" if cause else "ended without a finish reason"
        super().__init__(f"the model's stream {how} after {partial_chars} chars")
        self.partial_chars = partial_chars
        self.cause = cause


def _first_line(err: BaseException) -> str:
    """The error's own words, without litellm's nested class-name prefixes and suffixes."""
    text = str(err).rsplit("Exception - ", 1)[-1].split(" Original exception", 1)[0].strip()
    lines = text.splitlines()
    return lines[0][:160] if lines else type(err).__name__


def usage_from_wire(usage: Any, model: str) -> pb.Usage:
    result = pb.Usage(calls=1)
    if usage is None:
        return result
    result.input_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
    result.output_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
    details = getattr(usage, "prompt_tokens_details", None)
    result.cache_read_tokens = int(getattr(details, "cached_tokens", 0) or 0) if details else 0
    if has_price(model):
        prompt_cost, completion_cost = litellm().cost_per_token(
            model=model, prompt_tokens=result.input_tokens, completion_tokens=result.output_tokens
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


@functools.cache
def context_window(wire_model: str) -> int:
    """The model's input window in tokens from litellm's local model table; 0 when unknown."""
    try:
        info = litellm().get_model_info(wire_model)
    except Exception:  # a model litellm has not mapped: the window is unknown
        return 0
    return int(info.get("max_input_tokens") or info.get("max_tokens") or 0)


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
            "messages": [message_to_wire(m) for m in messages],
            "stream": True,
            "stream_options": {"include_usage": True},
            "num_retries": 0,
            "max_retries": 0,
            "timeout": self.spec.timeout,
        }
        if tools:
            kwargs["tools"] = tools_to_wire(tools)
        if self.spec.api_base:
            kwargs["api_base"] = self.spec.api_base
        if self.spec.api_key:
            kwargs["api_key"] = self.spec.api_key
        return kwargs

    async def complete(
        self,
        messages: list[pb.Message],
        tools: list[pb.ToolDefinition],
        on_delta: Callable[[str], None] = lambda text: None,
    ) -> pb.Message:
        """One streamed completion, assembled into an assistant Message with its usage."""
        response = await litellm().acompletion(**self.request(messages, tools))
        text: list[str] = []
        calls: dict[int, pb.ToolCall] = {}
        finished = False
        usage = None
        chunks = aiter(response)
        while True:
            try:
                chunk = await anext(chunks)
            except StopAsyncIteration:
                break
            except Exception as err:  # the stream broke mid-message (cancellation passes through)
                raise StreamIncomplete(sum(map(len, text)), err) from err
            usage = getattr(chunk, "usage", None) or usage
            finished = self._take(chunk, text, calls, on_delta) or finished
        if not finished:
            raise StreamIncomplete(sum(map(len, text)))
        reply = pb.Message(role=pb.ROLE_ASSISTANT, text="".join(text), model=self.spec.model)
        for index in sorted(calls):
            call = calls[index]
            call.id = call.id or f"call_{uuid.uuid4().hex[:12]}"
            reply.tool_calls.append(call)
        reply.usage.CopyFrom(usage_from_wire(usage, self.spec.wire_model))
        return reply

    @staticmethod
    def _take(chunk: Any, text: list[str], calls: dict[int, pb.ToolCall], on_delta: Callable[[str], None]) -> bool:
        """Add one streamed chunk's text and tool-call pieces; True when it carries a finish reason."""
        finished = False
        for choice in chunk.choices:
            delta = choice.delta
            if delta is not None and delta.content:
                text.append(delta.content)
                on_delta(delta.content)
            for tc in (getattr(delta, "tool_calls", None) or []) if delta is not None else []:
                index = tc.index if getattr(tc, "index", None) is not None else len(calls)
                call = calls.setdefault(index, pb.ToolCall())
                if tc.id:
                    call.id = tc.id
                function = tc.function
                if function is not None:
                    if function.name and not call.name:
                        call.name = function.name
                    if function.arguments:
                        call.arguments += function.arguments
            if choice.finish_reason:
                finished = True
        return finished
