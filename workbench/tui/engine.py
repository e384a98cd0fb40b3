"""What the app uses of the engine, and when: the Session's protocol (the real one is imported
after the first frame), litellm's import in a thread, the words for a missing model."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Protocol

from textual.message import Message

from workbench.config.settings import Settings, user_config_path
from workbench.pb import workbench_pb2 as pb


class Session(Protocol):
    """What the app uses of `workbench.session.session.Session` (imported after the first frame)."""

    id: str
    settings: Settings

    @property
    def busy(self) -> bool: ...

    def send(self, prompt: str, agent_id: str | None = None) -> None: ...

    async def cancel(self, agent_id: str | None = None) -> None: ...

    def subscribe(self, fn: Callable[[pb.Event], None], after: int = 0) -> Callable[[], None]: ...

    async def close(self) -> None: ...

    # reviews and the approval mode (workbench/tui/approval.py)
    @property
    def approval(self) -> str: ...

    def cycle_approval(self) -> str: ...

    async def compact(self) -> None: ...

    def decide(self, call_id: str, approve: bool, reason: str = "", remember: bool = False) -> None: ...

    def pending_reviews(self) -> list[pb.GuardDecision]: ...


def no_model_help() -> str:
    return (
        "No model is set. Set one with --model (workbench --model openai/gpt-4.1), the WORKBENCH_MODEL "
        f'environment variable, or model = "..." in {user_config_path()}. '
        "Or try the offline demo: a scripted model in a new temporary folder (ctrl+p: try the offline demo)."
    )


def start_litellm_import() -> threading.Thread:
    """litellm imports in a thread after the first frame (tools/benchmarks/tui.py measures typing
    meanwhile; no GIL switch interval is set: docs/DECISIONS.md)."""
    from workbench.model.gateway import preload

    return preload()


class EventsArrived(Message):
    """Committed events are waiting in the app's queue."""
