"""`workbench undo`, `rewind` and `checkpoints` through `main`, on sessions run by `workbench run`
against the scripted model server."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.scripted_server import ScriptedModel, call, reply
from workbench.cli.main import main
from workbench.config.settings import Settings
from workbench.session.catalog import list_sessions


def run(scripted_model: ScriptedModel, workspace: Path, data: Path, prompt: str) -> str:
    argv = ["run", "--model", "openai/scripted", "--api-base", scripted_model.url]
    assert main([*argv, "--workspace", str(workspace), "--data-dir", str(data), prompt]) == 0
    return list_sessions(Settings(data_dir=data))[0].id


@pytest.fixture
def two_turns(scripted_model: ScriptedModel, workspace: Path, tmp_path: Path) -> tuple[str, Path]:
    data = tmp_path / "data"
    (workspace / "a.txt").write_text("one\n")
    scripted_model.add(reply("", call("write_file", path="a.txt", content="two\nlines\n")), reply("ok"))
    session = run(scripted_model, workspace, data, "change a")
    scripted_model.add(reply("", call("bash", command="rm a.txt && echo b > b.txt")), reply("ok"))
    argv = ["run", "--resume", session, "--api-base", scripted_model.url, "--data-dir", str(data), "remove a"]
    assert main(argv) == 0
    return session, data


def test_checkpoints_lists_turns_calls_and_files(
    two_turns: tuple[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    session, data = two_turns
    capsys.readouterr()
    assert main(["checkpoints", session, "--data-dir", str(data)]) == 0
    out = capsys.readouterr().out
    assert "turn 1  'change a'" in out and "turn 2  'remove a'" in out
    assert "write_file" in out and "bash" in out and "(changed 1 path(s))" in out and "(changed 2 path(s))" in out
    assert "changed  a.txt  +2 -1" in out and "created  b.txt  +1 -0" in out


def test_undo_without_a_terminal_or_yes_changes_nothing(
    two_turns: tuple[str, Path], workspace: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    session, data = two_turns
    monkeypatch.setattr(sys.stdin, "isatty", lambda: False)
    capsys.readouterr()
    assert main(["undo", session, "--data-dir", str(data)]) == 5
    captured = capsys.readouterr()
    assert "deleted  b.txt" in captured.out and "created  a.txt" in captured.out
    assert "nothing changed: no terminal to ask" in captured.err
    assert (workspace / "b.txt").exists() and not (workspace / "a.txt").exists()


def test_undo_yes_then_rewind_both_and_a_declined_rewind(
    two_turns: tuple[str, Path],
    workspace: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    session, data = two_turns
    assert main(["undo", session, "--yes", "--data-dir", str(data)]) == 0
    assert (workspace / "a.txt").read_text() == "two\nlines\n" and not (workspace / "b.txt").exists()
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)
    monkeypatch.setattr("builtins.input", lambda prompt: "n")
    assert main(["rewind", session, "--to", "1", "--both", "--data-dir", str(data)]) == 5
    assert "declined; nothing changed" in capsys.readouterr().err
    monkeypatch.setattr("builtins.input", lambda prompt: "y")
    assert main(["rewind", session, "--to", "1", "--both", "--data-dir", str(data)]) == 0
    assert (workspace / "a.txt").read_text() == "one\n"
    assert main(["export", session, "--format", "md", "--data-dir", str(data)]) == 0
    assert "rewound to before turn 1" in capsys.readouterr().out


def test_undo_of_a_session_open_elsewhere_is_refused_naming_it(
    two_turns: tuple[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    from workbench.session.lock import SessionLock

    session, data = two_turns
    lock = SessionLock(data / "sessions" / session)
    lock.acquire()
    try:
        capsys.readouterr()
        assert main(["undo", session, "--yes", "--data-dir", str(data)]) == 1
        err = capsys.readouterr().err
        assert "is open in another workbench process (pid" in err
    finally:
        lock.release()
