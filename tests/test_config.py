"""Settings layers: flags > env > project config > user config; a project only tightens."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.config import ConfigError, load


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
