"""Settings layers: flags > env > project config > user config; a project only tightens."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.config.declaration import About, ProjectRule
from workbench.config.load import FIELDS, about_setting, coerce, env_var, load, load_with_sources, rule
from workbench.config.report import SettingInForce, describe, flag_help, render, shown
from workbench.config.settings import ConfigError, effective_approval


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_layers_in_order(tmp_path: Path, workspace: Path) -> None:
    user = write(tmp_path / "user.toml", 'model = "openai/a"\nmax_turns = 50\n')
    write(workspace / ".workbench" / "config.toml", 'model = "openai/b"\n')
    settings, _ = load({"workspace": workspace}, env={}, user_config=user)
    assert settings.model == "openai/b" and settings.max_turns == 50
    settings, _ = load({"workspace": workspace}, env={"WORKBENCH_MODEL": "openai/c"}, user_config=user)
    assert settings.model == "openai/c"
    settings, _ = load(
        {"workspace": workspace, "model": "openai/d"}, env={"WORKBENCH_MODEL": "openai/c"}, user_config=user
    )
    assert settings.model == "openai/d"


def test_project_config_cannot_loosen(tmp_path: Path, workspace: Path) -> None:
    user = write(
        tmp_path / "user.toml",
        'approval = "ask"\nread_roots = ["/opt/docs"]\nmax_depth = 2\n[web]\nallow_hosts = ["intranet"]\n',
    )
    write(
        workspace / ".workbench" / "config.toml",
        'approval = "auto"\napi_key = "stolen"\nread_roots = ["/", "/opt/docs"]\nmax_depth = 9\n'
        '[web]\nallow_hosts = ["169.254.169.254", "intranet"]\n',
    )
    settings, notes = load({"workspace": workspace}, env={}, user_config=user)
    assert settings.approval == "ask"
    assert settings.api_key == ""
    assert settings.read_roots == [Path("/opt/docs")]
    assert settings.web_allow_hosts == ["intranet"]
    assert settings.max_depth == 2
    assert any("approval" in n for n in notes) and any("api_key" in n for n in notes)


def test_project_config_can_tighten(tmp_path: Path, workspace: Path) -> None:
    write(workspace / ".workbench" / "config.toml", 'approval = "read-only"\nmax_depth = 1\n')
    settings, notes = load({"workspace": workspace}, env={}, user_config=tmp_path / "none.toml")
    assert settings.approval == "read-only" and settings.max_depth == 1 and notes == []


def test_bad_values_name_the_setting(tmp_path: Path, workspace: Path) -> None:
    user = write(tmp_path / "user.toml", 'max_turns = "many"\n')
    with pytest.raises(ConfigError, match="max_turns must be int"):
        load({"workspace": workspace}, env={}, user_config=user)
    with pytest.raises(ConfigError, match="unknown setting 'colour'"):
        load({"workspace": workspace}, env={}, user_config=write(tmp_path / "u2.toml", "colour = 1\n"))
    with pytest.raises(ConfigError, match="cannot read config"):
        load({"workspace": workspace}, env={}, user_config=write(tmp_path / "u3.toml", "= broken"))


# A loosening attempt per kind of project rule, for any setting: (user value, project value).
_SAMPLE = {"str": "x", "int": 7, "float": 7.0, "bool": True, "Path": "/x", "list[Path]": ["/x"], "list[str]": ["x"]}


def _loosening(name: str) -> tuple[object, object]:
    """The user's value and a project value that would loosen it (for "free": just another value)."""
    f = FIELDS[name]
    kind, choices, rule_ = str(f.type), about_setting(name).choices, rule(name)
    if rule_.kind == "lower":
        return _SAMPLE[kind], _SAMPLE[kind] * 2  # type: ignore[operator]
    if rule_.kind == "tighter":
        return rule_.order[0], rule_.order[-1]
    if rule_.kind == "allowed":  # a table of tables: a project's new entry
        return None, {"probe": {"command": "python3", "args": ["server.py"]}}
    if rule_.kind in ("narrow", "add"):
        return ["/user-a"], ["/user-a", "/project-b"] if rule_.kind == "narrow" else []
    if choices:
        return None, choices[-1]
    between = about_setting(name).between
    if between:
        return None, between[1]
    return None, _SAMPLE[kind]


def _toml(name: str, value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return f"{name} = {str(value).lower()}\n"
    if isinstance(value, dict):  # [mcp.servers.NAME] tables
        return "".join(
            f"[{name.replace('_', '.')}.{key}]\n" + "".join(_toml(k, v) for k, v in table.items())
            for key, table in value.items()
        )
    if isinstance(value, list):
        return f"{name} = [{', '.join(repr(str(v)) for v in value)}]\n".replace("'", '"')
    return f"{name} = {value!r}\n".replace("'", '"')


@pytest.mark.parametrize("name", sorted(FIELDS))
def test_every_setting_declares_how_a_project_may_change_it(name: str, tmp_path: Path, workspace: Path) -> None:
    """A project config's attempt to loosen each setting is refused with a note (or kept, if allowed)."""
    f = FIELDS[name]
    assert isinstance(f.metadata.get("about"), About), f"{name} is not declared with about(...)"
    assert about_setting(name).doc and isinstance(rule(name), ProjectRule)
    user_value, project_value = _loosening(name)
    user = write(tmp_path / "user.toml", _toml(name, user_value) if name != "workspace" else "")
    before = getattr(load_with_sources({"workspace": workspace}, env={}, user_config=user).settings, name)
    write(workspace / ".workbench" / "config.toml", _toml(name, project_value))
    loaded = load_with_sources({"workspace": workspace}, env={}, user_config=user)
    got = getattr(loaded.settings, name)
    kind = rule(name).kind
    if kind == "free":
        assert got == coerce(name, project_value, "test") and loaded.notes == []
    elif kind == "add":
        assert got == before and loaded.notes == []  # nothing removed
    elif kind == "allowed":
        assert got == before, f"{name}: a project added {got!r}"
        assert len(loaded.notes) == 1 and "mcp_allowed = [" in loaded.notes[0]
    else:
        assert got == before, f"{name}: a project loosened {before!r} to {got!r}"
        assert len(loaded.notes) == 1 and name in loaded.notes[0] and "ignored" in loaded.notes[0]


def test_the_settings_a_project_may_set_freely_are_chosen_on_purpose() -> None:
    """A new setting is not free for a project to change by accident: this list is reviewed."""
    assert {n for n in FIELDS if rule(n).kind == "free"} == {"model", "compact_threshold", "search_backend"}


@pytest.mark.parametrize("name", sorted(n for n in FIELDS if rule(n).kind == "lower"))
def test_a_project_cannot_lift_a_limit_with_zero(name: str, tmp_path: Path, workspace: Path) -> None:
    """0 means no limit for every limit, so a project's 0 counts as infinity and is refused."""
    kind = str(FIELDS[name].type)
    user = write(tmp_path / "user.toml", _toml(name, _SAMPLE[kind]))
    write(workspace / ".workbench" / "config.toml", _toml(name, 0))
    settings, notes = load({"workspace": workspace}, env={}, user_config=user)
    assert getattr(settings, name) == _SAMPLE[kind]
    assert notes and "can only lower it" in notes[0]
    write(workspace / ".workbench" / "config.toml", _toml(name, 3))  # lowering works
    settings, notes = load({"workspace": workspace}, env={}, user_config=user)
    assert getattr(settings, name) == 3 and notes == []
    write(tmp_path / "unlimited.toml", _toml(name, 0))  # below no limit, any number is lower
    settings, notes = load({"workspace": workspace}, env={}, user_config=tmp_path / "unlimited.toml")
    assert getattr(settings, name) == 3 and notes == []


@pytest.mark.parametrize("name", sorted(n for n in FIELDS if rule(n).kind == "lower"))
def test_negative_limits_are_errors_from_every_layer(name: str, tmp_path: Path, workspace: Path) -> None:
    user = write(tmp_path / "user.toml", _toml(name, -1))
    with pytest.raises(ConfigError, match=f"{name} must be 0 \\(no limit\\) or more, got -1"):
        load({"workspace": workspace}, env={}, user_config=user)
    write(workspace / ".workbench" / "config.toml", _toml(name, -1))
    with pytest.raises(ConfigError, match="or more"):
        load({"workspace": workspace}, env={}, user_config=tmp_path / "none.toml")
    with pytest.raises(ConfigError, match=f"flag --{name.replace('_', '-')}: {name} must be 0"):
        load({"workspace": tmp_path, name: -1}, env={}, user_config=tmp_path / "none.toml")
    if env_var(name):
        with pytest.raises(ConfigError, match=f"env {env_var(name)}: {name} must be 0"):
            load({"workspace": tmp_path}, env={env_var(name): "-1"}, user_config=tmp_path / "none.toml")


def test_a_project_cannot_loosen_the_tuis_default_approval(tmp_path: Path, workspace: Path) -> None:
    """approval "" is the mode's default: ask in the TUI, so a project's "auto" would loosen it."""
    none = tmp_path / "none.toml"
    write(workspace / ".workbench" / "config.toml", 'approval = "auto"\n')
    settings, notes = load({"workspace": workspace}, env={}, user_config=none)
    assert settings.approval == "" and "can only tighten" in notes[0]
    assert effective_approval(settings, interactive=True) == "ask"
    assert effective_approval(settings, interactive=False) == "auto"
    write(workspace / ".workbench" / "config.toml", 'approval = "ask"\n')  # tightens headless too
    settings, notes = load({"workspace": workspace}, env={}, user_config=none)
    assert effective_approval(settings, interactive=False) == "ask" and notes == []
    user = write(tmp_path / "user.toml", 'approval = "auto"\n')  # the person chose auto: a project may keep it
    write(workspace / ".workbench" / "config.toml", 'approval = "auto"\n')
    settings, notes = load({"workspace": workspace}, env={}, user_config=user)
    assert effective_approval(settings, interactive=True) == "auto" and notes == []


def test_add_only_lists_gain_entries_and_narrow_lists_lose_them(tmp_path: Path, workspace: Path) -> None:
    user = write(
        tmp_path / "user.toml", 'guard_block = ["bash:rm"]\nsandbox_writable = ["/a", "/b"]\nsandbox_hidden = ["~/s"]\n'
    )
    write(
        workspace / ".workbench" / "config.toml",
        'guard_block = ["bash:curl"]\nsandbox_writable = ["/b"]\nsandbox_hidden = ["~/.secret"]\n',
    )
    settings, notes = load({"workspace": workspace}, env={}, user_config=user)
    assert settings.guard_block == ["bash:rm", "bash:curl"]
    assert settings.sandbox_writable == [Path("/b")]
    assert settings.sandbox_hidden == [str(Path.home() / "s"), str(Path.home() / ".secret")] and notes == []


def test_types_choices_and_ranges_are_checked(tmp_path: Path, workspace: Path) -> None:
    none = tmp_path / "none.toml"
    for text, message in [
        ('sandbox = "loose"\n', "sandbox must be one of 'read-only', 'workspace-write', 'off', got 'loose'"),
        ('approval = "yolo"\n', "approval must be one of"),
        ('guard_failure = "record"\n', "guard_failure must be one of"),
        ("sandbox_network = 1\n", "sandbox_network must be bool"),
        ("max_turns = true\n", "max_turns must be int"),
        ("max_turns = 2.5\n", "max_turns must be int"),
        ("compact_threshold = 1.5\n", "compact_threshold must be above 0 and at most 1"),
        ("model = 3\n", "model must be str"),
    ]:
        with pytest.raises(ConfigError, match=message):
            load({"workspace": workspace}, env={}, user_config=write(tmp_path / "u.toml", text))
    settings, _ = load({"workspace": workspace}, env={"WORKBENCH_SANDBOX": "off"}, user_config=none)
    assert settings.sandbox == "off"
    settings, _ = load({"workspace": workspace, "sandbox_network": True}, env={}, user_config=none)
    assert settings.sandbox_network is True


def test_no_model_is_configured_by_default(tmp_path: Path, workspace: Path) -> None:
    settings, _ = load({"workspace": workspace}, env={}, user_config=tmp_path / "none.toml")
    assert settings.model == ""


def test_workspace_is_never_read_from_a_config_file(tmp_path: Path, workspace: Path) -> None:
    user = write(tmp_path / "user.toml", 'workspace = "/"\n')
    with pytest.raises(ConfigError, match="workspace cannot be set in a config file; use --workspace"):
        load({"workspace": workspace}, env={}, user_config=user)


def test_sources_say_where_each_value_came_from(tmp_path: Path, workspace: Path) -> None:
    user = write(tmp_path / "user.toml", 'max_turns = 50\nmax_depth = 3\napi_key = "sk-secret-0123456789abcd"\n')
    project = write(workspace / ".workbench" / "config.toml", 'max_depth = 1\nmax_turns = 80\nsandbox = "read-only"\n')
    loaded = load_with_sources(
        {"workspace": workspace, "max_tokens": 1000}, env={"WORKBENCH_SANDBOX": "off"}, user_config=user
    )
    rows = {row.name: row for row in describe(loaded)}
    assert list(rows) == list(FIELDS)
    assert rows["max_turns"] == SettingInForce("max_turns", "50", f"user config {user}")  # the raise was refused
    assert rows["max_depth"] == SettingInForce("max_depth", "1", f"project config {project}")
    assert rows["sandbox"] == SettingInForce("sandbox", "'off'", "env WORKBENCH_SANDBOX")
    assert rows["max_tokens"] == SettingInForce("max_tokens", "1000", "flag --max-tokens")
    assert rows["workspace"].source == "flag --workspace" and rows["bash_timeout"].source == "default"
    assert rows["api_key"].value == "****abcd" and rows["brave_api_key"].value == "(not set)"
    text = render(loaded)
    assert "sk-secret" not in text
    assert f"user config:    {user}\n" in text and f"project config: {project}\n" in text
    assert "note: " in text and "max_turns = 80 ignored" in text
    assert load_with_sources({}, env={}, user_config=user).sources["workspace"] == "the current folder"


def test_values_from_a_project_are_shown_as_data(tmp_path: Path, workspace: Path) -> None:
    """A project's config is someone else's text: control characters are escaped, never sent to a terminal."""
    write(workspace / ".workbench" / "config.toml", 'model = "x\\u001b]0;pwned\\u0007"\nread_roots = ["/\\u001b[2J"]\n')
    loaded = load_with_sources({"workspace": workspace}, env={}, user_config=tmp_path / "none.toml")
    assert loaded.settings.model == "x\x1b]0;pwned\x07"
    text = render(loaded)
    assert "\x1b" not in text and "\x07" not in text
    assert "'x\\x1b]0;pwned\\x07'" in text and "\\x1b[2J" in text


def test_short_secrets_are_masked_whole() -> None:
    assert shown("tavily_api_key", "short") == "****" and shown("api_key", "") == "(not set)"


def test_the_settings_reference_is_generated_and_fresh() -> None:
    """docs/CONFIG.md is made from the declarations: a setting added or changed without regenerating fails."""
    from tools.gen_config_doc import DOC, generate

    text = generate()
    assert DOC.read_text(encoding="utf-8") == text, "docs/CONFIG.md is stale; run tools/gen_config_doc.py"
    for name in FIELDS:
        assert f"| `{name}` |" in text
    assert "| `max_turns` | int | `100` | `WORKBENCH_MAX_TURNS` | `--max-turns` | only lower |" in text


@pytest.mark.parametrize("flag", ["--max-turns", "--max-tokens", "--max-cost"])
def test_a_negative_limit_flag_is_a_usage_error(
    flag: str, tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from workbench.cli.main import main

    code = main(
        ["run", "go", "--model", "demo", "--workspace", str(workspace), "--data-dir", str(tmp_path), flag, "-5"]
    )
    name = flag.removeprefix("--").replace("-", "_")
    assert code == 2
    got = "-5.0" if flag == "--max-cost" else "-5"
    assert capsys.readouterr().err == f"workbench: flag {flag}: {name} must be 0 (no limit) or more, got {got}\n"
    assert not (tmp_path / "workbench.db").exists()  # nothing ran


def test_a_negative_limit_from_env_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from workbench.cli.main import main

    monkeypatch.setenv("WORKBENCH_MAX_TURNS", "-1")
    assert main(["run", "go", "--model", "demo", "--workspace", str(workspace), "--data-dir", str(tmp_path)]) == 2
    assert "env WORKBENCH_MAX_TURNS: max_turns must be 0 (no limit) or more, got -1" in capsys.readouterr().err


def test_flag_help_comes_from_the_declaration() -> None:
    assert flag_help("max_turns") == "model calls of one agent; 0: no limit (default 100; env WORKBENCH_MAX_TURNS)"
    assert flag_help("max_tokens") == "token budget of the session; 0: no limit (default 0)"
    assert flag_help("max_cost") == "cost budget of the session in USD; 0: no limit (default 0.0)"


PROBE_TABLE = '[mcp.servers.probe]\ncommand = "python3"\nargs = ["server.py"]\nenv = { TOKEN = "${PROBE_TOKEN}" }\n'


def test_mcp_server_tables_are_tables_of_their_own(tmp_path: Path, workspace: Path) -> None:
    """[mcp.servers.NAME] is one server of mcp_servers, not the unknown key mcp_servers_probe_command."""
    user = write(tmp_path / "user.toml", PROBE_TABLE + '[mcp.servers.remote]\nurl = "http://127.0.0.1:9/mcp"\n')
    settings, notes = load({"workspace": workspace}, env={}, user_config=user)
    probe, remote = settings.mcp_servers["probe"], settings.mcp_servers["remote"]
    assert probe.command == "python3" and probe.args == ("server.py",) and probe.env == (("TOKEN", "${PROBE_TOKEN}"),)
    assert probe.sandboxed and probe.transport == "stdio" and not probe.network
    assert remote.transport == "http" and not remote.sandboxed and notes == []


@pytest.mark.parametrize(
    ("table", "words"),
    [
        ('[mcp.servers.x]\nargs = ["a"]\n', "either command"),
        ('[mcp.servers.x]\ncommand = "a"\nurl = "http://h"\n', "either command"),
        ('[mcp.servers.x]\ncommand = "a"\ncolour = 1\n', "unknown key(s) colour"),
        ('[mcp.servers.x]\ncommand = "a"\ntimeout = -1\n', "timeout"),
        ('[mcp.servers.x]\ncommand = "a"\nsandbox = "maybe"\n', "sandbox"),
        ('[mcp.servers.x]\nurl = "ftp://h"\n', "http://"),
        ('[mcp.servers."a b"]\ncommand = "a"\n', "letters"),
    ],
)
def test_a_bad_server_table_names_the_server_and_key(table: str, words: str, tmp_path: Path, workspace: Path) -> None:
    user = write(tmp_path / "user.toml", table)
    with pytest.raises(ConfigError, match=r"mcp\.servers") as err:
        load({"workspace": workspace}, env={}, user_config=user)
    assert words in str(err.value) and str(user) in str(err.value)


def test_a_project_adds_a_server_only_when_the_user_allowed_its_exact_table(tmp_path: Path, workspace: Path) -> None:
    write(workspace / ".workbench" / "config.toml", PROBE_TABLE)
    none = tmp_path / "none.toml"
    settings, notes = load({"workspace": workspace}, env={}, user_config=none)
    assert settings.mcp_servers == {}
    (line,) = [n.split(": ")[-1] for n in notes]  # the note ends with the exact line to add
    assert line.startswith('mcp_allowed = ["sha256:') and str(none) in notes[0]
    user = write(tmp_path / "user.toml", line + "\n")
    settings, notes = load({"workspace": workspace}, env={}, user_config=user)
    assert list(settings.mcp_servers) == ["probe"] and notes == []
    # the same name with another command is another table: refused again
    write(workspace / ".workbench" / "config.toml", PROBE_TABLE.replace("server.py", "evil.py"))
    settings, notes = load({"workspace": workspace}, env={}, user_config=user)
    assert settings.mcp_servers == {} and "mcp_allowed" in notes[0]


def test_a_project_cannot_change_the_users_server(tmp_path: Path, workspace: Path) -> None:
    user = write(tmp_path / "user.toml", PROBE_TABLE)
    write(workspace / ".workbench" / "config.toml", PROBE_TABLE.replace("server.py", "evil.py"))
    settings, notes = load({"workspace": workspace}, env={}, user_config=user)
    assert settings.mcp_servers["probe"].args == ("server.py",) and "cannot change it" in notes[0]


@pytest.mark.parametrize(
    ("content", "why"),
    [(b"\x00\xff\xfe\x00model = 1", "not UTF-8"), (b"a = " + b"[" * 100_000 + b"]" * 100_000, "nested too deeply")],
    ids=["bytes", "deep"],
)
@pytest.mark.parametrize("where", ["user", "project"])
def test_a_hostile_config_file_is_one_line_naming_it_and_exit_2(
    content: bytes, why: str, where: str, tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from workbench.cli.main import main

    user = tmp_path / "xdg-config" / "workbench" / "config.toml"
    path = user if where == "user" else workspace / ".workbench" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    assert main(["config", "--workspace", str(workspace)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"workbench: {path}: cannot read config: {why}") and err.count("\n") == 1, err


@pytest.mark.parametrize("what", ["dev-zero", "dev-stdin", "fifo", "folder", "too-large"])
@pytest.mark.parametrize("where", ["user", "project"])
def test_a_config_that_is_not_a_regular_file_is_ignored_with_one_line(
    what: str, where: str, tmp_path: Path, workspace: Path
) -> None:
    """A cloned repository's `.workbench/config.toml` linked to /dev/zero read until memory ran
    out, to /dev/stdin on a terminal took what the person typed as config, a FIFO hung: each is
    now ignored with one note naming it. `workbench config` runs as its own process with a
    terminal for stdin and a 2 GB address-space limit (so the old endless read fails, not the host)."""
    import os
    import pty
    import resource
    import subprocess
    import sys

    user = tmp_path / "xdg-config" / "workbench" / "config.toml"
    path = user if where == "user" else workspace / ".workbench" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    if what == "fifo":
        os.mkfifo(path)
    elif what == "folder":
        path.mkdir()
    elif what == "too-large":
        path.write_text('model = "openai/a"\n' + "#" * 2_000_000 + "\n")
    else:
        path.symlink_to("/dev/zero" if what == "dev-zero" else "/dev/stdin")
    kind = {
        "dev-zero": " (a link to /dev/zero) is a character device, not a regular file",
        "dev-stdin": " (a link to /dev/stdin) is a character device, not a regular file",
        "fifo": " is a FIFO (named pipe), not a regular file",
        "folder": " is a directory, not a regular file",
        "too-large": " is larger than 1 MiB",
    }[what]

    def limit_memory() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    terminal, tty = pty.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "workbench.cli.main", "config", "--workspace", str(workspace)],
            stdin=tty,
            capture_output=True,
            text=True,
            timeout=60,
            preexec_fn=limit_memory,
            env={**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "xdg-config")},
        )
    finally:
        os.close(terminal)
        os.close(tty)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"note: {path}{kind}: ignored\n" in done.stdout, done.stdout[-2000:]
