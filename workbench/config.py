"""Settings: flags > env > project config > user config; paths and limits.

A project's config (`.workbench/config.toml`, which a cloned repo brings along) may only
tighten what the user's config allows: it can never add readable roots, allowed web hosts,
or loosen the approval mode.
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import platformdirs

APPROVAL_MODES = ("read-only", "ask", "auto")  # tightest first
SEARCH_BACKENDS = ("ddgs", "searxng", "brave", "tavily")


class ConfigError(ValueError):
    """A setting that cannot be used; the message names the setting and the source."""


@dataclass
class Settings:
    model: str = "demo"
    api_base: str = ""
    api_key: str = ""
    workspace: Path = field(default_factory=Path.cwd)
    data_dir: Path = field(default_factory=lambda: Path(platformdirs.user_state_dir("workbench")))
    max_turns: int = 100
    max_tokens: int = 0  # 0: no budget
    max_cost: float = 0.0  # 0: no budget
    approval: str = "auto"
    # output limits (characters of one tool result the model sees)
    output_limit: int = 30_000
    # subagents
    max_depth: int = 2
    max_running_children: int = 8
    max_total_children: int = 64
    wait_cap: float = 600.0  # seconds a parent waits for its children's next Inbox item
    inbox_limit: int = 100  # message items kept per Inbox
    # model calls
    retry_max_attempts: int = 5
    retry_deadline: float = 300.0
    retry_after_cap: float = 60.0
    request_timeout: float = 600.0
    compact_threshold: float = 0.8  # fraction of the model's window
    # bash
    bash_timeout: float = 120.0
    # files
    read_roots: list[Path] = field(default_factory=list)  # extra readable roots (user config only)
    # web
    search_backend: str = ""
    searxng_url: str = ""
    brave_api_key: str = ""
    brave_url: str = "https://api.search.brave.com/res/v1/web/search"
    tavily_api_key: str = ""
    tavily_url: str = "https://api.tavily.com/search"
    web_allow_hosts: list[str] = field(default_factory=list)  # user config only
    web_timeout: float = 20.0
    web_max_bytes: int = 5_000_000

    @property
    def sessions_dir(self) -> Path:
        return self.data_dir / "sessions"

    @property
    def db_path(self) -> Path:
        return self.data_dir / "workbench.db"

    @property
    def log_path(self) -> Path:
        return self.data_dir / "workbench.log"


# TOML key -> Settings field. Sections flatten with "_" (web.allow_hosts -> web_allow_hosts).
_FIELDS = {f.name: f for f in dataclasses.fields(Settings)}
# Settings a project config may not set at all (secrets and rights come from the person).
_PROJECT_FORBIDDEN = {
    "api_key",
    "api_base",
    "brave_api_key",
    "tavily_api_key",
    "data_dir",
    "workspace",
    "searxng_url",
    "brave_url",
    "tavily_url",
}
# Lists a project config can only narrow (intersect with the user's).
_PROJECT_NARROW_ONLY = {"read_roots", "web_allow_hosts"}
# Numbers a project config can only lower.
_PROJECT_LOWER_ONLY = {"max_depth", "max_running_children", "max_total_children", "max_turns"}


def user_config_path() -> Path:
    return Path(platformdirs.user_config_dir("workbench")) / "config.toml"


def _flatten(table: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in table.items():
        name = f"{prefix}{key}".replace("-", "_")
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{name}_"))
        else:
            flat[name] = value
    return flat


def _coerce(name: str, value: Any, source: str) -> Any:
    f = _FIELDS.get(name)
    if f is None:
        raise ConfigError(f"{source}: unknown setting {name!r}")
    kind = str(f.type)
    try:
        if kind == "Path":
            return Path(str(value)).expanduser()
        if kind == "list[Path]":
            items = value.split(os.pathsep) if isinstance(value, str) else list(value)
            return [Path(str(v)).expanduser() for v in items if str(v)]
        if kind == "list[str]":
            items = value.split(",") if isinstance(value, str) else list(value)
            return [str(v).strip() for v in items if str(v).strip()]
        if kind == "int":
            return int(value)
        if kind == "float":
            return float(value)
        return str(value)
    except (TypeError, ValueError) as err:
        raise ConfigError(f"{source}: {name} must be {kind}, got {value!r}") from err


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return _flatten(tomllib.load(fh))
    except FileNotFoundError:
        return {}
    except (tomllib.TOMLDecodeError, OSError) as err:
        raise ConfigError(f"{path}: cannot read config: {err}") from err


def _apply(values: dict[str, Any], layer: dict[str, Any], source: str) -> None:
    for name, raw in layer.items():
        values[name] = _coerce(name, raw, source)


def _tighten(values: dict[str, Any], project: dict[str, Any], source: str) -> list[str]:
    """Apply a project config, keeping only what tightens; return notes on what was ignored."""
    notes = []
    for name, raw in project.items():
        value = _coerce(name, raw, source)
        current = values.get(name, getattr(Settings(), name) if name in _FIELDS else None)
        if name in _PROJECT_FORBIDDEN:
            notes.append(f"{source}: {name} can only be set in the user config; ignored")
        elif name in _PROJECT_NARROW_ONLY:
            values[name] = [v for v in value if v in (current or [])]
        elif name in _PROJECT_LOWER_ONLY:
            values[name] = min(value, current)
        elif name == "approval":
            if value not in APPROVAL_MODES:
                raise ConfigError(f"{source}: approval must be one of {', '.join(APPROVAL_MODES)}")
            tighter = APPROVAL_MODES.index(value) <= APPROVAL_MODES.index(current)
            values[name] = value if tighter else current
            if not tighter:
                notes.append(f"{source}: approval {value!r} is looser than {current!r}; ignored")
        else:
            values[name] = value
    return notes


_ENV = {
    "model": "WORKBENCH_MODEL",
    "api_base": "WORKBENCH_API_BASE",
    "api_key": "WORKBENCH_API_KEY",
    "data_dir": "WORKBENCH_DATA_DIR",
    "max_turns": "WORKBENCH_MAX_TURNS",
    "approval": "WORKBENCH_APPROVAL",
    "search_backend": "WORKBENCH_SEARCH_BACKEND",
    "searxng_url": "WORKBENCH_SEARXNG_URL",
    "brave_api_key": "BRAVE_API_KEY",
    "brave_url": "WORKBENCH_BRAVE_URL",
    "tavily_api_key": "TAVILY_API_KEY",
    "tavily_url": "WORKBENCH_TAVILY_URL",
}


def load(
    flags: dict[str, Any] | None = None,
    *,
    env: dict[str, str] | None = None,
    user_config: Path | None = None,
) -> tuple[Settings, list[str]]:
    """Build Settings from every layer; return them with notes about ignored project settings."""
    env = dict(os.environ) if env is None else env
    flags = {k: v for k, v in (flags or {}).items() if v is not None}
    values: dict[str, Any] = {}
    _apply(values, _read_toml(user_config or user_config_path()), "user config")
    workspace = Path(flags.get("workspace") or Path.cwd()).expanduser().resolve()
    project_path = workspace / ".workbench" / "config.toml"
    notes = _tighten(values, _read_toml(project_path), str(project_path))
    for name, var in _ENV.items():
        if env.get(var):
            values[name] = _coerce(name, env[var], f"env {var}")
    _apply(values, flags, "flag")
    values["workspace"] = workspace
    settings = Settings(**values)
    if settings.approval not in APPROVAL_MODES:
        raise ConfigError(f"approval must be one of {', '.join(APPROVAL_MODES)}, got {settings.approval!r}")
    if settings.search_backend and settings.search_backend not in SEARCH_BACKENDS:
        raise ConfigError(
            f"search backend must be one of {', '.join(SEARCH_BACKENDS)}, got {settings.search_backend!r}"
        )
    return settings, notes
