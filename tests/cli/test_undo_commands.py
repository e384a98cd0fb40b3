"""`workbench undo`, `rewind` and `checkpoints` through `main`, on sessions run by `workbench run`
against the scripted model server."""

from __future__ import annotations

import os
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


def test_a_name_that_is_not_utf8_runs_lists_and_undoes_byte_for_byte(
    scripted_model: ScriptedModel, workspace: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, raw = tmp_path / "data", os.fsencode(workspace)
    with open(raw + b"/caf\xe9.txt", "wb") as fh:  # a Latin-1 archive's name: the first checkpoint failed on it
        fh.write(b"caf\xe9 au lait\n")
    scripted_model.add(reply("", call("write_file", path="caf\udce9.txt", content="overwritten\n")), reply("ok"))
    session = run(scripted_model, workspace, data, "change it")
    with open(raw + b"/caf\xe9.txt", "rb") as fh:
        assert fh.read() == b"overwritten\n"
    assert "defect" not in capsys.readouterr().err  # write_file's result names the file escaped (a defect before)
    assert main(["checkpoints", session, "--data-dir", str(data)]) == 0
    assert "changed  caf\\xe9.txt  +1 -1" in capsys.readouterr().out  # shown escaped
    assert main(["undo", session, "--yes", "--data-dir", str(data)]) == 0
    with open(raw + b"/caf\xe9.txt", "rb") as fh:
        assert fh.read() == b"caf\xe9 au lait\n"


def test_a_command_that_makes_a_name_that_is_not_utf8_is_run_and_undone(
    scripted_model: ScriptedModel, workspace: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What the review ran: a command makes a Latin-1 name (the session ended "cannot write the
    event log ... Free some space"); the run ends well and `workbench undo --yes` removes it."""
    data, raw = tmp_path / "data", os.fsencode(workspace)
    (workspace / "keep.txt").write_text("kept\n")
    make = "printf 'caf\\351 au lait\\n' > \"$(printf 'caf\\351.txt')\" && ls"
    scripted_model.add(reply("", call("bash", command=make)), reply("made it"))
    argv = ["run", "--model", "openai/scripted", "--api-base", scripted_model.url, "--approval", "auto"]
    assert main([*argv, "--workspace", str(workspace), "--data-dir", str(data), "make it"]) == 0
    with open(raw + b"/caf\xe9.txt", "rb") as fh:
        assert fh.read() == b"caf\xe9 au lait\n"
    capsys.readouterr()
    assert main(["undo", "--workspace", str(workspace), "--yes", "--data-dir", str(data)]) == 0
    assert "deleted  caf\\xe9.txt" in capsys.readouterr().out
    assert os.listdir(raw) == [b"keep.txt"] or sorted(os.listdir(raw)) == [b".workbench", b"keep.txt"]
