"""The values that must never be written: to the event log, the log file or `--jsonl`.

A small module of its own, so the CLI can filter its log file without importing the engine
(the TUI's first frame must not wait for it).
"""

from __future__ import annotations

import os

from workbench.config import Settings


def secrets_of(settings: Settings) -> list[str]:
    """Values that must never be written: the keys in the settings and the provider key variables."""
    found = [settings.api_key, settings.brave_api_key, settings.tavily_api_key]
    for name, value in os.environ.items():
        upper = name.upper()
        if (
            upper.endswith(("_API_KEY", "_TOKEN", "_SECRET", "_SECRET_KEY", "_ACCESS_KEY"))
            or upper == "WORKBENCH_API_KEY"
        ):
            found.append(value)
    return sorted({s for s in found if len(s) >= 8 and s != "unused"}, key=len, reverse=True)
