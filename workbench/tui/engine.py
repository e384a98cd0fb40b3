"""What the app uses of the engine before a session opens, and when: litellm's import in a
thread after the first frame, the words for a missing model, the message that events arrived.
The Session itself is imported after the first frame (session_client.py)."""

from __future__ import annotations

import threading

from textual.message import Message

from workbench.config.load import user_config_path


def no_model_help() -> str:
    return (
        "No model is set. Set one with --model (workbench --model openai/gpt-4.1), the WORKBENCH_MODEL "
        f'environment variable, or model = "..." in {user_config_path()}. '
        "Or try the offline demo: a scripted model in a new temporary folder (ctrl+p: try the offline demo)."
    )


def start_litellm_import() -> threading.Thread:
    """litellm imports in a thread after the first frame (tools/benchmarks/tui.py measures typing
    meanwhile; no GIL switch interval is set: docs/DECISIONS.md)."""
    from workbench.session.startup import preload

    return preload()


class EventsArrived(Message):
    """Committed events are waiting in the app's queue."""
