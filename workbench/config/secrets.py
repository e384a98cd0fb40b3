"""The values that must never be written: to the event log, the log file or `--jsonl`.

A small module of its own, so the CLI can filter its log file without importing the engine
(the TUI's first frame must not wait for it).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable, Mapping

from workbench.config.settings import Settings

# the settings that hold secrets: never shown by `workbench config`, never written
SECRET_SETTINGS = frozenset({"api_key", "brave_api_key", "tavily_api_key"})

# Which environment variables hold secrets, by name: one rule for what the shells never get (unless
# `shell_env_passthrough` names it) and for what is redacted from the event log and the log file.
# A name is split at underscores: a part in SECRET_PARTS (GITHUB_TOKEN, MY_SECRET) or ending with
# one of SECRET_WORDS (DATABASE_PASSWORD, CLIENTSECRET), a pair of parts in SECRET_PAIRS
# (OPENAI_API_KEY), or a last part KEY (AZURE_SPEECH_KEY); a last part naming a place
# (TIKTOKEN_CACHE_DIR) is not one. SESSION_MANAGER, XDG_SESSION_TYPE and TOKENIZERS_PARALLELISM
# are ordinary: no part is a secret word.
SECRET_WORDS = ("SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "CREDENTIALS")
SECRET_PARTS = frozenset({*SECRET_WORDS, "TOKEN", "SECRETS", "APIKEY", "PASS", "PAT", "AUTHKEY"})
# names of a place, not a secret: TIKTOKEN_CACHE_DIR, NPM_TOKEN_PATH
PLACE_PARTS = frozenset({"DIR", "PATH", "URL", "HOST", "PORT"})
SECRET_PAIRS = frozenset({("PRIVATE", "KEY"), ("API", "KEY"), ("ACCESS", "KEY"), ("AUTH", "KEY"), ("SECRET", "KEY")})
# secrets whose names follow no pattern
SECRET_NAMES = frozenset({"OPENAI_ORG_ID", "LITELLM_MASTER_KEY", "VERTEXAI_CREDENTIALS"})


def is_secret(name: str) -> bool:
    """Does the variable `name` hold a secret (see SECRET_WORDS)?"""
    upper = name.upper()
    if upper in SECRET_NAMES:
        return True
    parts = [p for p in upper.split("_") if p]
    if not parts or parts[-1] in PLACE_PARTS:
        return False
    if parts[-1] == "KEY" and len(parts) > 1:
        return True
    if any(p in SECRET_PARTS or p.endswith(SECRET_WORDS) for p in parts):
        return True
    return any(pair in SECRET_PAIRS for pair in itertools.pairwise(parts))


def stripped_names(environ: Mapping[str, str], passthrough: Iterable[str] = ()) -> list[str]:
    """The secret variables of `environ` that the shells do not get."""
    keep = set(passthrough)
    return sorted(name for name in environ if name not in keep and is_secret(name))


def secrets_of(settings: Settings) -> list[str]:
    """Values that must never be written: the keys in the settings and the provider key variables."""
    found = [getattr(settings, name) for name in SECRET_SETTINGS]
    for name, value in os.environ.items():
        if is_secret(name):  # the shells' rule: what they never get is never written either
            found.append(value)
    return sorted({s for s in found if len(s) >= 8 and s != "unused"}, key=len, reverse=True)
