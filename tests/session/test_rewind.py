"""Undo and rewind through the Session: real tools (write, edit, sandboxed bash, tmux, a
subagent), the scripted model server over HTTP, a real SQLite log and checkpoint store."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.checkpoints.test_checkpointer import make_workspace
from tests.checkpoints.treestate import git_state, make_user_repo, tree_state
from tests.scripted_server import ScriptedModel, call, reply
from tests.waiting import until
from workbench.config.settings import Settings
from workbench.pb import workbench_pb2 as pb
from workbench.session.errors import SessionError
from workbench.session.session import Session

SKIP = (".git", ".workbench")  # the sandbox makes .workbench/ (read-only to commands); never checkpointed


def kinds(session: Session, kind: str) -> list[pb.Event]:
    return [e for e in session.events() if e.WhichOneof("kind") == kind]


async def test_every_changing_tool_is_checkpointed_and_undo_puts_all_back(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    make_workspace(workspace)
    make_user_repo(workspace)
    before, git_before = tree_state(workspace, SKIP), git_state(workspace)
    scripted_model.add(
        reply("", call("write_file", path="notes.md", content="notes\n")),
        reply("", call("edit_file", path="src/main.py", old_text="print('hi')", new_text="print('edited')")),
        reply("", call("bash", command="rm -rf src/deep && chmod 644 secret.key && echo x > .env")),
        reply("", call("tmux", action="new", window="w", command="sleep 0.2; rm run.sh; touch tmux-made")),
        reply("", call("subagent", mode="sync", prompt="clean up")),
        reply("", call("bash", command="rm -rf private empty && ln -sfn /etc link")),  # the child's call
        reply("cleaned"),  # the child's answer
        reply("done"),
    )
    session = await Session.open(settings)
    try:
        session.send("change things")
        assert (await session.wait()).text == "done"
        await until((workspace / "tmux-made").exists, 20, "tmux-made to appear")
        checkpoints = [e for e in kinds(session, "checkpoint") if e.checkpoint.reason == pb.CHECKPOINT_REASON_TOOL_CALL]
        tools = [(e.agent_id == "main", e.checkpoint.tool) for e in checkpoints]
        assert tools == [
            (True, "write_file"),
            (True, "edit_file"),
            (True, "bash"),
            (True, "tmux"),
            (True, "subagent"),
            (False, "bash"),  # the child's call, attributed to the child
        ]
        assert all(e.checkpoint.commit and not e.checkpoint.error for e in checkpoints)
        plan = await session.plan_rewind()
        assert plan.undo and plan.to_turn == 1
        # what the tmux window did after the run had ended counts as changed outside Workbench
        assert set(plan.outside) <= {"run.sh", "tmux-made"}
        paths = {f.path for f in plan.files}
        assert {"notes.md", "src/main.py", "src/deep/", "secret.key", ".env", "run.sh", "tmux-made", "link"} <= paths
        await session.rewind(plan, overwrite_outside=True)
        assert tree_state(workspace, SKIP) == before
        assert git_state(workspace, stand_ins=False) == git_before  # nothing of the user's .git changed
        (event,) = kinds(session, "rewind")
        assert event.rewind.undo and event.rewind.code and not event.rewind.conversation
    finally:
        await session.close()


async def test_a_rewind_is_undone_by_the_next_undo(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("one\n")
    scripted_model.add(
        reply("", call("write_file", path="a.txt", content="two\n")),
        reply("ok"),
    )
    session = await Session.open(settings)
    try:
        session.send("change a")
        await session.wait()
        await session.rewind(await session.plan_rewind(1))
        assert (workspace / "a.txt").read_text() == "one\n"
        again = await session.plan_rewind()
        assert "the rewind is undone" in again.what
        await session.rewind(again)
        assert (workspace / "a.txt").read_text() == "two\n"
    finally:
        await session.close()


async def test_code_rewind_tells_the_model_once_and_conversation_rewind_cuts_the_request(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.add(
        reply("", call("write_file", path="a.txt", content="first\n")),
        reply("wrote a"),
        reply("", call("write_file", path="b.txt", content="second\n")),
        reply("wrote b"),
        reply("noted"),
        reply("fresh start"),
    )
    session = await Session.open(settings)
    try:
        session.send("write a")
        await session.wait()
        session.send("write b")
        await session.wait()
        await session.rewind(await session.plan_rewind(2, code=True, conversation=False))
        assert not (workspace / "b.txt").exists() and (workspace / "a.txt").exists()
        session.send("what now?")
        await session.wait()
        users = [m["content"] for m in scripted_model.requests[-1]["messages"] if m["role"] == "user"]
        assert users[-2].startswith(
            "(Workbench: the person put the workspace's files back to how they were before turn 2"
        )
        assert users[-1] == "what now?"
        plan = await session.plan_rewind(2, code=True, conversation=True)
        assert plan.messages_dropped > 0
        await session.rewind(plan)
        session.send("start over")
        await session.wait()
        users = [m["content"] for m in scripted_model.requests[-1]["messages"] if m["role"] == "user"]
        assert users == ["write a", "start over"]  # turn 2 and what followed are not in the request
    finally:
        await session.close()
    resumed = await Session.open(settings, resume=session.id)  # the log rebuilds the cut conversation
    try:
        root = resumed.tree.root
        assert root is not None and root.loop is not None
        texts = [m.text for m in root.loop.messages if m.role == pb.ROLE_USER]
        assert texts == ["write a", "start over"]
    finally:
        await resumed.close()


async def test_files_changed_outside_are_named_and_kept_unless_overwritten(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("original\n")
    scripted_model.add(reply("", call("write_file", path="a.txt", content="agent\n")), reply("ok"))
    session = await Session.open(settings)
    try:
        session.send("change a")
        await session.wait()
        (workspace / "a.txt").write_text("the person's edit\n")  # in an editor, after the run
        plan = await session.plan_rewind()
        assert plan.outside == ["a.txt"]
        await session.rewind(plan)
        assert (workspace / "a.txt").read_text() == "the person's edit\n"
        await session.rewind(await session.plan_rewind(1), overwrite_outside=True)
        assert (workspace / "a.txt").read_text() == "original\n"
    finally:
        await session.close()


async def test_nothing_to_undo_and_unknown_turn_are_one_line(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.add(reply("nothing to do"))
    session = await Session.open(settings)
    try:
        session.send("hello")
        await session.wait()
        with pytest.raises(SessionError, match="nothing to undo"):
            await session.plan_rewind()
        with pytest.raises(SessionError, match=r"no turn 5 in session .*: its turns are 1 to 1"):
            await session.plan_rewind(5)
    finally:
        await session.close()


async def test_checkpoint_failure_refuses_the_call_by_default(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    settings.data_dir.mkdir(parents=True)
    (settings.data_dir / "checkpoints").write_text("in the way")  # no store can be made
    scripted_model.add(reply("", call("write_file", path="a.txt", content="x")), reply("gave up"))
    session = await Session.open(settings)
    try:
        session.send("write")
        await session.wait()
        (result,) = [e.tool_call_finished.result for e in kinds(session, "tool_call_finished")]
        assert result.is_error and "no checkpoint of the workspace could be taken" in result.error
        assert not (workspace / "a.txt").exists()
    finally:
        await session.close()


@pytest.mark.slow
def test_kill_9_mid_bash_then_undo_restores_the_tree_before_that_call(
    scripted_model: ScriptedModel, workspace: Path, tmp_path: Path
) -> None:
    import signal

    from tests.session.test_session import _kill_tmux, _read_until, _start_run

    make_workspace(workspace)
    before = tree_state(workspace, SKIP)
    data = tmp_path / "data"
    scripted_model.add(reply("", call("bash", command="rm -rf src private && echo deleted; sleep 60")))
    proc = _start_run(scripted_model, workspace, data, "--jsonl", "--approval", "auto", "go")
    session_id = _read_until(proc, "tool_output")
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=10)  # reads and closes its pipes
    _kill_tmux(session_id)
    assert not (workspace / "src").exists()

    from workbench.cli.main import main

    # `workbench undo` resumes the session (marking the killed call interrupted) and puts back the
    # tree as it was before that call; the call's changes are its own, so nothing is asked about
    assert main(["undo", session_id, "--yes", "--data-dir", str(data)]) == 0
    assert tree_state(workspace, SKIP) == before


def test_prune_drops_deleted_sessions_checkpoints_and_doctor_reports_the_store(
    scripted_model: ScriptedModel,
    workspace: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import time

    from workbench.checkpoints.repo import REF_PREFIX, stores
    from workbench.cli.main import main

    data = tmp_path / "data"
    (workspace / "big.txt").write_text("x" * 200_000)
    scripted_model.add(reply("", call("write_file", path="a.txt", content="a")), reply("ok"))
    argv = ["run", "--model", "openai/scripted", "--api-base", scripted_model.url]
    assert main([*argv, "--workspace", str(workspace), "--data-dir", str(data), "go"]) == 0
    (store,) = stores(data)
    assert [r for r in (store / "refs" / REF_PREFIX.removeprefix("refs/")).iterdir()]
    assert main(["doctor", "--data-dir", str(data)]) in (0, 1)
    assert "checkpoint store: 1 workspace store(s)" in capsys.readouterr().out
    now = time.time()
    monkeypatch.setattr(time, "time", lambda: now + 2)  # the clock moves on 2 s, no one waits for it
    assert main(["sessions", "--prune", "--older-than", "1s", "--data-dir", str(data)]) == 0
    err = capsys.readouterr().err
    assert "checkpoints: dropped those of 1 session(s)" in err
    assert not list((store / "refs" / REF_PREFIX.removeprefix("refs/")).iterdir())


async def test_a_large_ignored_tree_is_named_once_in_a_notice(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    (workspace / ".gitignore").write_text("node_modules/\n")
    (workspace / "node_modules").mkdir()
    (workspace / "node_modules" / "big.js").write_bytes(b"x" * 900_000)
    (workspace / "node_modules" / "big2.js").write_bytes(b"x" * 900_000)
    settings.checkpoint_ignored_total = 1_000_000
    scripted_model.add(reply("", call("bash", command="true")), reply("", call("bash", command="true 2")), reply("ok"))
    session = await Session.open(settings)
    try:
        session.send("go")
        await session.wait()
        notices = [e.notice.text for e in kinds(session, "notice") if "checkpoint" in e.notice.text]
        assert notices == ["checkpoint: not kept: node_modules/ (ignored, over 1 MB in all)"]
    finally:
        await session.close()


async def test_one_file_restored_leaves_the_others(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("a1\n")
    (workspace / "b.txt").write_text("b1\n")
    os.chmod(workspace / "b.txt", 0o600)
    scripted_model.add(
        reply("", call("bash", command="echo a2 > a.txt && echo b2 > b.txt && chmod 644 b.txt")),
        reply("ok"),
    )
    session = await Session.open(settings)
    try:
        session.send("change both")
        await session.wait()
        plan = await session.plan_rewind()
        diffs = {f.path: f.diff for f in plan.files}
        assert "-a2" in diffs["a.txt"] and "+a1" in diffs["a.txt"]
        await session.restore_file("a.txt")
        assert (workspace / "a.txt").read_text() == "a1\n"
        assert (workspace / "b.txt").read_text() == "b2\n" and (workspace / "b.txt").stat().st_mode & 0o777 == 0o644
        with pytest.raises(SessionError, match=r"a\.txt is as it was before every turn"):
            await session.restore_file("a.txt")
    finally:
        await session.close()
