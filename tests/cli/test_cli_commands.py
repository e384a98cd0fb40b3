"""What a new user meets on the command line: no model, the demo, usage errors, the header,
sessions, export, resume, prune, and text from the model printed as data."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.scripted_server import ScriptedModel, call, reply
from workbench.cli.main import main

pytestmark = pytest.mark.tmux


def scripted(scripted_model: ScriptedModel, workspace: Path, data: Path, *extra: str) -> list[str]:
    return [
        "run", "--model", "openai/scripted", "--api-base", scripted_model.url,
        "--workspace", str(workspace), "--data-dir", str(data), *extra,
    ]  # fmt: skip


def test_no_model_configured_says_how_to_set_one_and_how_to_try_the_demo(
    workspace: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "--workspace", str(workspace), "--data-dir", str(tmp_path / "d"), "add a flag"]) == 2
    err = capsys.readouterr().err
    assert "no model configured" in err and "--model" in err and "WORKBENCH_MODEL" in err and "config.toml" in err
    assert "--model demo" in err and "mktemp -d" in err
    assert not (workspace / "auth.go").exists()


def test_the_demo_refuses_a_folder_with_other_files_and_says_it_is_a_script(
    workspace: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workspace / "main.py").write_text("print('hi')\n")
    argv = ["run", "--model", "demo", "--workspace", str(workspace), "--data-dir", str(tmp_path / "d"), "go"]
    assert main(argv) == 2
    assert "main.py" in capsys.readouterr().err and not (workspace / "auth.go").exists()
    (workspace / "main.py").unlink()
    for _ in range(2):  # twice in one folder: it works both times
        assert main(argv) == 0
        err = capsys.readouterr().err
        assert "scripted demo, not a language model" in err.splitlines()[0]
        assert (workspace / "auth.go").read_text().count("return false") == 1


@pytest.mark.parametrize("flag", ["--max-tokens", "--max-turns", "--max-cost"])
def test_negative_limits_are_usage_errors(flag: str, workspace: Path, tmp_path: Path, capsys) -> None:
    argv = [
        "run",
        "--model",
        "demo",
        "--workspace",
        str(workspace),
        "--data-dir",
        str(tmp_path / "d"),
        flag,
        "-5",
        "go",
    ]
    assert main(argv) == 2
    assert "must be 0 (no limit) or more" in capsys.readouterr().err


def test_a_blank_prompt_and_a_bad_flag_are_run_usage_errors(tmp_path: Path, capsys) -> None:
    assert main(["run", "   "]) == 2
    assert "prompt is empty" in capsys.readouterr().err
    assert main(["run", "--bogus-flag", "x", "go"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: workbench run") and "--bogus-flag" in err


def test_header_and_last_line_name_the_session_and_where_it_went(
    scripted_model: ScriptedModel, workspace: Path, tmp_path: Path, mode: tuple[str, ...], capsys
) -> None:
    scripted_model.add(reply("fine"))
    assert main(scripted(scripted_model, workspace, tmp_path / "d", *mode, "hello")) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("workbench: session ") and f"data {tmp_path / 'd'}" in err[0], err
    assert "model openai/scripted" in err[0] and "sandbox workspace-write, network off" in err[0]
    session_id = err[0].split()[2]
    assert f"workbench run --resume {session_id}" in err[-1] and f"workbench export {session_id}" in err[-1]


def test_a_failed_call_shows_its_whole_cause_wrapped(
    scripted_model: ScriptedModel, workspace: Path, tmp_path: Path, capsys
) -> None:
    (workspace / "auth.py").write_text("x = 1\n")
    # the answer after a failed edit gets one line back (undone_check, a model litellm does not know): a second answer
    scripted_model.add(
        reply("", call("edit_file", path="auth.py", old_text="y = 2", new_text="y = 3")), reply("ok"), reply("ok")
    )
    assert main(scripted(scripted_model, workspace, tmp_path / "d", "edit")) == 0
    err = capsys.readouterr().err
    cause = [line for line in err.splitlines() if line.startswith(("  x ", "    "))]
    assert cause and all(len(line) <= 110 for line in cause)
    assert "re-read" in " ".join(err.split()).lower()


def test_the_turn_limit_leaves_stdout_empty(
    scripted_model: ScriptedModel, workspace: Path, tmp_path: Path, mode: tuple[str, ...], capsys
):
    scripted_model.add(reply("half way there", call("read_file", path="x")), reply("never"))
    assert main(scripted(scripted_model, workspace, tmp_path / "d", *mode, "--max-turns", "1", "go")) == 3
    out, err = capsys.readouterr()
    assert out == "" and "turn limit reached" in err and "not an answer" in err


def test_escape_sequences_from_the_model_are_printed_as_data(
    scripted_model: ScriptedModel, workspace: Path, tmp_path: Path, capsys
) -> None:
    evil = "\x1b]0;pwned\x07\x1b[2J\u202e"
    scripted_model.add(reply(f"look {evil}", call(f"read_{evil}", path=f"a{evil}")), reply("done"))
    assert main(scripted(scripted_model, workspace, tmp_path / "d", "go")) == 0
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\x07" not in err and "\\x1b]0;pwned\\x07" in err
    assert "\u202e" not in err and "\\u202e" in err  # a bidi override in the tool's name, shown escaped


def test_sessions_export_resume_continue_and_prune(
    scripted_model: ScriptedModel,
    workspace: Path,
    tmp_path: Path,
    mode: tuple[str, ...],
    capsys,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = tmp_path / "d"
    scripted_model.add(reply("first answer"), reply("second answer"), reply("third answer"))
    assert main(scripted(scripted_model, workspace, data, *mode, "first task\nwith details")) == 0
    capsys.readouterr()
    assert main(["sessions", "--data-dir", str(data)]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split()[:3] == ["ID", "STARTED", "STATUS"] and "first task" in table[1] and "finished" in table[1]
    session_id = table[1].split()[0]
    assert main(["sessions", "--data-dir", str(data), "--json"]) == 0
    (listed,) = json.loads(capsys.readouterr().out)
    assert listed["id"] == session_id and listed["title"] == "first task" and listed["model"] == "openai/scripted"

    resumed = ["run", *mode, "--resume", session_id, "--api-base", scripted_model.url, "--data-dir", str(data), "next"]
    assert main(resumed) == 0
    assert capsys.readouterr().out == "second answer\n"
    assert [m["content"] for m in scripted_model.requests[1]["messages"][1:]] == [
        "first task\nwith details",
        "first answer",
        "next",
    ]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert main([*resumed[:-1], "--workspace", str(elsewhere), "next"]) == 2
    assert "works in" in capsys.readouterr().err
    cont = ["run", *mode, "--continue", "--model", "openai/scripted", "--api-base", scripted_model.url]
    assert main([*cont, "--workspace", str(workspace), "--data-dir", str(data), "third"]) == 0
    assert capsys.readouterr().out == "third answer\n" and len(scripted_model.requests[2]["messages"]) == 6

    assert main(["export", session_id, "--data-dir", str(data)]) == 0
    md = capsys.readouterr().out
    assert md.startswith("# first task") and "**Person:** next" in md and "**Agent:** third answer" in md
    assert main(["export", session_id[:6], "--format", "jsonl", "--data-dir", str(data)]) == 0
    seqs = [json.loads(line)["seq"] for line in capsys.readouterr().out.splitlines()]
    assert [int(s) for s in seqs] == list(range(1, len(seqs) + 1))
    assert main(["export", "nope", "--data-dir", str(data)]) == 1

    assert main(["sessions", "--prune", "--data-dir", str(data)]) == 2
    assert main(["sessions", "--prune", "--older-than", "30d", "--data-dir", str(data)]) == 0
    assert "deleted 0 session(s)" in capsys.readouterr().err
    now = time.time()
    monkeypatch.setattr(time, "time", lambda: now + 2)  # the clock moves on 2 s, no one waits for it
    assert main(["sessions", "--prune", "--older-than", "1s", "--data-dir", str(data)]) == 0
    assert "deleted 1 session(s)" in capsys.readouterr().err
    assert main(["sessions", "--data-dir", str(data), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_config_prints_each_setting_and_its_source(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("WORKBENCH_MAX_TURNS", "7")
    assert main(["config", "--workspace", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if line.startswith("max_turns"))
    assert "7" in line and "env WORKBENCH_MAX_TURNS" in line


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small tmpfs needs root (CI runs as root)")
def test_a_full_disk_during_streamed_output_ends_the_run_in_one_line(
    scripted_model: ScriptedModel, workspace: Path, tmp_path: Path
) -> None:
    data = tmp_path / "small"
    data.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=400k", "tmpfs", str(data)], check=True)
    try:
        command = "for i in $(seq 1 400); do head -c 2000 /dev/zero | tr '\\\\0' x; echo; sleep 0.005; done"
        scripted_model.add(reply("", call("bash", command=command)), *[reply("never")] * 3)
        argv = scripted(scripted_model, workspace, data, "fill it")
        proc = subprocess.run(
            [sys.executable, "-m", "workbench.cli.main", *argv], capture_output=True, text=True, timeout=120
        )
    finally:
        subprocess.run(["umount", "-l", str(data)], check=False)
    assert proc.returncode == 1, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if not line.startswith(("workbench: session", ">", "watch"))]
    assert "Exception in callback" not in proc.stderr and "Traceback" not in proc.stderr
    assert "Logging error" not in proc.stderr
    failures = [line for line in lines if "cannot write the event log" in line]
    assert len(failures) == 1 and str(data) in failures[0], proc.stderr
