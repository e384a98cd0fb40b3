"""A client process's start and end around the model library (litellm, 2-5 s to import).

`preload` starts litellm's import in a background thread; `check_model` says in one line,
before a session opens, that the model cannot be called as configured; `exit_process` ends the
process at once whatever that import is doing. Nothing here imports the engine at import time:
the TUI calls these before and after its first frame.
"""

from __future__ import annotations

import sys
import threading
from typing import NoReturn

from workbench.config.settings import Settings
from workbench.session.errors import SessionError


def preload() -> threading.Thread:
    """Start importing litellm in the background (the thread that does it)."""
    from workbench.model.gateway import preload as start_import

    return start_import()


def check_model(settings: Settings) -> None:
    """Raise SessionError on an unknown model, a missing key or a cost budget without a price.

    A local OpenAI-compatible server (`api_base` without a key) gets the key "unused": the SDK
    wants one. Waits for litellm's import."""
    from workbench.model.gateway import ModelSpec, has_price, litellm

    lm = litellm()
    if settings.max_cost and not has_price(ModelSpec(settings.model).wire_model):
        raise SessionError(
            f"--max-cost needs the model's price and litellm has none for {settings.model!r}; use --max-tokens instead"
        )
    if settings.model == "demo":
        return
    try:
        lm.get_llm_provider(settings.model, api_base=settings.api_base or None)
    except Exception as err:
        raise SessionError(
            f"unknown model {settings.model!r}: give provider/model, e.g. openai/gpt-4.1 ({str(err).splitlines()[0]})"
        ) from err
    if settings.api_key:
        return
    if settings.api_base:
        settings.api_key = "unused"  # a local OpenAI-compatible server needs no key, the SDK wants one
        return
    env = lm.validate_environment(model=settings.model)
    missing = env.get("missing_keys") or []
    if missing:
        raise SessionError(
            f"no API key for {settings.model}: set {' or '.join(missing)} (or WORKBENCH_API_KEY, or --api-key)"
        )


def exit_process(code: int) -> NoReturn:
    """End the process with `code`; at once (no interpreter shutdown) while litellm's import runs."""
    gateway = sys.modules.get("workbench.model.gateway")
    if gateway is not None and hasattr(gateway, "exit_process"):  # imported whole: the preload may run
        gateway.exit_process(code)
    sys.exit(code)
