"""What the engine needs of a model: the `Model` Protocol the agent loop calls, and `ModelFactory`,
how the agent tree makes each agent's model from its `ModelSpec`.

`gateway.ModelClient` (litellm, streamed over HTTP) is the one implementation in Workbench; the
tests of the loop's logic give the tree an in-process fake instead (tests/fake_model.py), so they
pay for neither litellm's call path nor HTTP.
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
