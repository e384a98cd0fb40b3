"""The values that must never be written: to the event log, the log file or `--jsonl`.

A small module of its own, so the CLI can filter its log file without importing the engine
(the TUI's first frame must not wait for it).
"""

from __future__ import annotations

import fnmatch
import os

from workbench.config.settings import Settings

# Provider credentials a shell never gets (unless a setting passes one through by name).
SECRET_NAMES = (
    "WORKBENCH_API_KEY",
    "OPENAI_API_KEY",
    "OPENAI_ORG_ID",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "VERTEXAI_CREDENTIALS",
    "MISTRAL_API_KEY",
    "GROQ_API_KEY",
    "DEEPSEEK_API_KEY",
    "OPENROUTER_API_KEY",
    "COHERE_API_KEY",
    "XAI_API_KEY",
    "PERPLEXITYAI_API_KEY",
    "FIREWORKS_AI_API_KEY",
    "HF_TOKEN",
    "HUGGINGFACE_API_KEY",
    "HUGGING_FACE_HUB_TOKEN",
    "REPLICATE_API_TOKEN",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_BEARER_TOKEN_BEDROCK",
    "AZURE_API_KEY",
    "AZURE_AD_TOKEN",
    "BRAVE_API_KEY",
    "TAVILY_API_KEY",
    "LITELLM_MASTER_KEY",
)
SECRET_PATTERNS = ("*_API_KEY", "AZURE_*_KEY", "TOGETHER*_API_KEY", "WORKBENCH_*KEY*", "LITELLM_*KEY*")


def is_secret(name: str) -> bool:
    upper = name.upper()
    return upper in SECRET_NAMES or any(fnmatch.fnmatchcase(upper, p) for p in SECRET_PATTERNS)


def secrets_of(settings: Settings) -> list[str]:
    """Values that must never be written: the keys in the settings and the provider key variables."""
    found = [settings.api_key, settings.brave_api_key, settings.tavily_api_key]
    for name, value in os.environ.items():
        # the shells' rule (provider keys never reach a shell), and any token or secret besides
        if is_secret(name) or name.upper().endswith(("_TOKEN", "_SECRET", "_SECRET_KEY", "_ACCESS_KEY")):
            found.append(value)
    return sorted({s for s in found if len(s) >= 8 and s != "unused"}, key=len, reverse=True)
