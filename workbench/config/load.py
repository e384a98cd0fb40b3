"""Reading the settings' layers: user config, project config (tighten only), env, flags.

Each value's source is tracked (default, a config file's path, an env var, a flag) so
`workbench config` can say where the settings in force came from.
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import platformdirs

from workbench.config.declaration import About, ProjectRule
from workbench.config.mcp_servers import McpServer, ServerConfigError, parse_servers
from workbench.config.settings import ConfigError, Settings, bound
from workbench.core.regular_files import NotRegularFile, read_regular
from workbench.core.safe_text import printable

FIELDS = {f.name: f for f in dataclasses.fields(Settings)}
TABLE_KIND = "dict[str, McpServer]"
# settings whose value is a table of tables (`[mcp.servers.NAME]`): kept whole, not flattened
TABLES = frozenset(name for name, f in FIELDS.items() if str(f.type) == TABLE_KIND)
DEFAULT_SOURCE = "default"
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


@dataclass
class Loaded:
    """Settings in force, notes about what a project config could not change, and each value's source."""

    settings: Settings
    notes: list[str]
    sources: dict[str, str]  # setting name -> "default", "user config PATH", "env VAR", "flag --x", ...
    user_config: Path
    project_config: Path


def _declarations() -> dict[str, About]:
    found = {name: f.metadata.get("about") for name, f in FIELDS.items()}
    missing = [name for name, about_ in found.items() if not isinstance(about_, About)]
    if missing:  # a new setting must say how a project config may change it, and what it is
        raise TypeError(f"settings declared without about(doc=..., project=...): {', '.join(missing)}")
    return {name: about_ for name, about_ in found.items() if isinstance(about_, About)}


SETTINGS_ABOUT = _declarations()


def about_setting(name: str) -> About:
    """The declaration of the setting `name` (KeyError for an unknown name)."""
    return SETTINGS_ABOUT[name]


def user_config_path() -> Path:
    return Path(platformdirs.user_config_dir("workbench")) / "config.toml"


def rule(name: str) -> ProjectRule:
    return about_setting(name).project


def env_var(name: str) -> str:
    return about_setting(name).env


def _flatten(table: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in table.items():
        name = f"{prefix}{key}".replace("-", "_")
        if isinstance(value, dict) and name not in TABLES:
            flat.update(_flatten(value, f"{name}_"))
        else:
            flat[name] = value
    return flat


def _convert(kind: str, value: Any, home_paths: bool) -> Any:
    if kind == TABLE_KIND:
        return parse_servers(value)
    if kind == "Path":
        return Path(str(value)).expanduser()
    if kind == "list[Path]":
        items = value.split(os.pathsep) if isinstance(value, str) else list(value)
        return [Path(str(v)).expanduser() for v in items if str(v)]
    if kind == "list[str]":
        items = value.split(",") if isinstance(value, str) else list(value)
        texts = [str(v).strip() for v in items if str(v).strip()]
        return [os.path.expanduser(t) for t in texts] if home_paths else texts
    if kind in ("int", "float") and isinstance(value, bool):
        raise TypeError(value)
    if kind == "int":
        if isinstance(value, float) and not value.is_integer():
            raise ValueError(value)
        return int(value)
    if kind == "float":
        return float(value)
    if kind == "bool":
        if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
            return value.strip().lower() in _TRUE
        if isinstance(value, bool):
            return value
        raise ValueError(value)
    if not isinstance(value, str):
        raise TypeError(value)
    return value


def coerce(name: str, value: Any, source: str) -> Any:
    """One value from a layer, converted to the setting's type and checked; ConfigError names both."""
    f = FIELDS.get(name)
    if f is None:
        raise ConfigError(f"{source}: unknown setting {name!r}")
    kind = str(f.type)
    try:
        converted = _convert(kind, value, about_setting(name).home_paths)
    except ServerConfigError as err:
        raise ConfigError(f"{source}: {err}") from err
    except (TypeError, ValueError) as err:
        raise ConfigError(f"{source}: {name} must be {kind}, got {value!r}") from err
    choices = about_setting(name).choices
    if choices and converted not in choices:
        allowed = ", ".join(repr(c) for c in choices)
        raise ConfigError(f"{source}: {name} must be one of {allowed}, got {converted!r}")
    if rule(name).kind == "lower" and converted < 0:
        raise ConfigError(f"{source}: {name} must be 0 (no limit) or more, got {converted!r}")
    between = about_setting(name).between
    if between and not between[0] < converted <= between[1]:
        raise ConfigError(
            f"{source}: {name} must be above {between[0]:g} and at most {between[1]:g}, got {converted!r}"
        )
    return converted


CONFIG_BYTES = 1 << 20  # a config file larger than this is ignored (with a note): no config is that long


def _read_toml(path: Path) -> tuple[dict[str, Any], str]:
    """A config file's settings, flattened, and a note when the file was ignored.

    A repository's file is untrusted input. It is read only when it is a regular file (after
    following links) of at most CONFIG_BYTES: a link to /dev/zero, /dev/stdin or a FIFO is never
    read (it could block or not end), and the note names what was there. Whatever is wrong with
    a file that is read (not UTF-8, nested past any sense, not TOML) is one ConfigError naming it."""
    shown = printable(str(path))
    try:
        data = read_regular(path, CONFIG_BYTES + 1)
    except FileNotFoundError:
        return {}, ""
    except (NotRegularFile, IsADirectoryError) as err:
        kind = err.kind if isinstance(err, NotRegularFile) else "a directory"
        return {}, f"{shown}{_link_to(path)} is {kind}, not a regular file: ignored"
    except OSError as err:
        raise ConfigError(f"{shown}: cannot read config: {printable(str(err))}") from err
    if len(data) > CONFIG_BYTES:
        return {}, f"{shown}{_link_to(path)} is larger than {CONFIG_BYTES >> 20} MiB: ignored"
    try:
        return _flatten(tomllib.loads(data.decode("utf-8"))), ""
    except UnicodeDecodeError as err:
        raise ConfigError(f"{shown}: cannot read config: not UTF-8 text (byte {err.start})") from None
    except RecursionError:
        raise ConfigError(f"{shown}: cannot read config: nested too deeply") from None
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{shown}: cannot read config: {printable(str(err))}") from err


def _link_to(path: Path) -> str:
    """' (a link to TARGET)' when the config path is a symlink."""
    try:
        return f" (a link to {printable(os.readlink(path))})" if path.is_symlink() else ""
    except OSError:
        return ""


def _shown(value: Any) -> str:
    """A value in a note: a literal, so control characters from a project's file are escaped."""
    if isinstance(value, list):
        return "[" + ", ".join(_shown(v) for v in value) + "]"
    return repr(str(value)) if isinstance(value, Path) else repr(value)


def _allowed_servers(
    value: dict[str, McpServer], current: dict[str, McpServer], allowed: list[str], source: str, user_path: Path
) -> tuple[dict[str, McpServer], list[str]]:
    """A project's MCP servers: each added only when the user config allows its exact table by hash.

    A project config can start programs on the host through a server's command, and the agent
    itself can write that file: so nothing it names starts unless the person allowed that table.
    A server the user config names is the user's: the project cannot change it.
    """
    kept, notes = dict(current), []
    for name, server in value.items():
        if name in current:
            if server != current[name]:
                notes.append(
                    f"{source}: MCP server {name!r} ignored: the user config defines it; a project cannot change it"
                )
            continue
        if server.table_hash in allowed:
            kept[name] = server
            continue
        notes.append(
            f"{source}: MCP server {name!r} ({server.describe()}) not started: a project config may add a "
            f"server only when your user config allows that exact table. To allow it, add its hash to "
            f'mcp_allowed in {user_path}: mcp_allowed = ["{server.table_hash}"]'
        )
    return kept, notes


def _tighten(name: str, value: Any, current: Any, source: str) -> tuple[Any, str]:
    """A project's value for one setting: what is kept, and a note when some of it was refused."""
    rule_ = rule(name)
    refused = f"{source}: {name} = {_shown(value)} ignored: a project config"
    if rule_.kind == "free":
        return value, ""
    if rule_.kind == "user-only":
        return current, f"{refused} cannot set it (only the user config, env or a flag can)"
    if rule_.kind == "lower":
        if bound(value) <= bound(current):
            return value, ""
        was = "0 (no limit)" if current == 0 else _shown(current)
        return current, f"{refused} can only lower it (0 means no limit); kept {was}"
    if rule_.kind == "narrow":
        extra = [v for v in value if v not in current]
        note = f"{source}: {name} entries {_shown(extra)} ignored: a project config can only remove entries"
        return [v for v in value if v in current], note if extra else ""
    if rule_.kind == "add":
        return current + [v for v in value if v not in current], ""
    if value == "":  # an empty choice (approval: the mode's default) changes nothing
        return current, ""
    order = rule_.order
    compared = rule_.unset if current == "" else current
    if order.index(value) <= order.index(compared):
        return value, ""
    shown_current = f"{current!r} ({rule_.unset!r} in the TUI)" if current == "" else _shown(current)
    return (
        current,
        f"{refused} can only tighten it ({rule_.words().removeprefix('only tighter: ')}); kept {shown_current}",
    )


def load_with_sources(
    flags: dict[str, Any] | None = None,
    *,
    env: dict[str, str] | None = None,
    user_config: Path | None = None,
) -> Loaded:
    """Build Settings from every layer: user config, project config (tighten only), env, flags."""
    env = dict(os.environ) if env is None else env
    flags = {k: v for k, v in (flags or {}).items() if v is not None}
    defaults = Settings()
    values: dict[str, Any] = {}
    sources = {name: DEFAULT_SOURCE for name in FIELDS}
    user_path = user_config or user_config_path()
    user_values, user_note = _read_toml(user_path)
    notes: list[str] = [user_note] if user_note else []
    for name, raw in user_values.items():
        if name == "workspace":
            raise ConfigError(f"{user_path}: workspace cannot be set in a config file; use --workspace")
        values[name] = coerce(name, raw, f"{user_path}")
        sources[name] = f"user config {user_path}"
    workspace = Path(flags.get("workspace") or Path.cwd()).expanduser().resolve()
    project_path = workspace / ".workbench" / "config.toml"
    project_values, project_note = _read_toml(project_path)
    notes += [project_note] if project_note else []
    for name, raw in project_values.items():
        value = coerce(name, raw, str(project_path))
        current = values.get(name, getattr(defaults, name))
        if rule(name).kind == "allowed":
            allowed = values.get("mcp_allowed", defaults.mcp_allowed)
            kept, refused = _allowed_servers(value, current, allowed, str(project_path), user_path)
            notes += refused
        else:
            kept, note = _tighten(name, value, current, str(project_path))
            notes += [note] if note else []
        if kept != current:
            values[name] = kept
            sources[name] = f"project config {project_path}"
    for name in FIELDS:
        var = env_var(name)
        if var and env.get(var):
            values[name] = coerce(name, env[var], f"env {var}")
            sources[name] = f"env {var}"
    for name, raw in flags.items():
        flag = "--" + name.replace("_", "-")
        values[name] = coerce(name, raw, f"flag {flag}")
        sources[name] = f"flag {flag}"
    values["workspace"] = workspace
    if "workspace" not in flags:
        sources["workspace"] = "the current folder"
    return Loaded(Settings(**values), notes, sources, user_path, project_path)


def load(
    flags: dict[str, Any] | None = None,
    *,
    env: dict[str, str] | None = None,
    user_config: Path | None = None,
) -> tuple[Settings, list[str]]:
    """Build Settings from every layer; return them with notes about ignored project settings
    (`load_with_sources` also says where each value came from)."""
    loaded = load_with_sources(flags, env=env, user_config=user_config)
    return loaded.settings, loaded.notes
