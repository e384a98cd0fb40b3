"""`workbench doctor` on this machine: real tmux, real bwrap, real probes."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from workbench.config.settings import Settings
from workbench.session.doctor import main

pytestmark = pytest.mark.sandbox


def _doctor(settings: Settings) -> tuple[int, str]:
    out = io.StringIO()
    return main(settings, out), out.getvalue()


def test_doctor_passes_where_tmux_and_bwrap_work(tmp_path: Path) -> None:
    status, text = _doctor(Settings(data_dir=tmp_path / "data"))
    assert status == 0, text
    for line in ["ok   tmux: tmux 3.", "ok   sandbox: workspace-write, network off", "ok   bubblewrap: bubblewrap "]:
        assert line in text
    assert "ok   namespaces:" in text and "ok   terminal injection:" in text
    assert "ok   leftover sessions: none" in text
    assert "ok   kept from commands: /run hidden; " in text and ".workbench/ read-only" in text


def test_doctor_names_the_repository_it_protects(tmp_path: Path, workspace: Path) -> None:
    (workspace / ".git" / "hooks").mkdir(parents=True)
    (workspace / ".git" / "config").write_text("")
    _, text = _doctor(Settings(data_dir=tmp_path / "data", workspace=workspace))
    assert f"{workspace}/.git pinned, what git reads in it as configuration read-only" in text, text
    assert not (workspace / ".workbench").exists() and not (workspace / ".git" / "info").exists()  # made nothing


def test_doctor_fails_without_bubblewrap_unless_the_sandbox_is_off(tmp_path: Path) -> None:
    status, text = _doctor(Settings(data_dir=tmp_path / "data", bwrap_path="/nowhere/bwrap"))
    assert status == 1
    assert "FAIL bubblewrap: '/nowhere/bwrap' not found: install it (apt-get install bubblewrap)" in text
    status, text = _doctor(Settings(data_dir=tmp_path / "data", bwrap_path="/nowhere/bwrap", sandbox="off"))
    assert status == 0 and "warn bubblewrap:" in text and "run unsandboxed" in text


def test_doctor_fails_without_tmux(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty folder: no tmux, no bwrap
    status, text = _doctor(Settings(data_dir=tmp_path / "data", sandbox="off"))
    assert status == 1 and "FAIL tmux: not found" in text
