"""What the engine needs of a model: the `Model` Protocol the agent loop calls, and `ModelFactory`,
how the agent tree makes each agent's model from its `ModelSpec`.

`gateway.ModelClient` (litellm, streamed over HTTP) is the one implementation. The tests script
the model over that same path (tests/scripted_server.py); an in-process fake was measured and not
adopted (docs/DECISIONS.md, "No in-process model fake for the loop tests").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from workbench.model.gateway import ModelSpec
from workbench.pb import workbench_pb2 as pb


class Model(Protocol):
    """One model an agent calls: its spec, and one completion per `complete`."""

    spec: ModelSpec

    async def complete(
        self,
        messages: list[pb.Message],
        tools: list[pb.ToolDefinition],
        on_delta: Callable[[str], None] = ...,
        *,
        on_call_delta: Callable[[pb.ToolCallDelta], object] | None = None,
        on_notice: Callable[[pb.Notice], object] = ...,
    ) -> pb.Message:
        """One completion, assembled into an assistant Message with its usage (`ModelClient.complete`
        says what the callbacks get and what a broken stream raises)."""
        ...


ModelFactory = Callable[[ModelSpec], Model]
