"""The recovery eval itself (tools/eval_recovery.py) against the scripted server, so it cannot rot."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.scripted_server import ScriptedModel, call, reply
from tools.eval_recovery import main
from tools.eval_recovery_scenarios import SCENARIOS


def run_eval(scripted_model: ScriptedModel, out: Path, *extra: str) -> dict[str, Any]:
    argv = ["--model", "openai/scripted", "--api-base", scripted_model.url, "--api-key", "sk-test"]
    assert main([*argv, "--out", str(out), "--temperature", "0", "--seed", "7", *extra]) == 0
    label = "ablated" if "--ablate-hints" in extra else "after"
    return json.loads((out / label / "summary.json").read_text())


def test_every_scenario_has_a_distinct_name_and_a_prompt() -> None:
    names = [s.name for s in SCENARIOS]
    assert len(names) == len(set(names)) >= 8 and all(s.prompt for s in SCENARIOS)


def test_a_recovered_run_is_counted_and_its_events_saved(scripted_model: ScriptedModel, tmp_path: Path) -> None:
    scripted_model.add(
        reply("", call("read_file", path="conf/setings.json")),
        reply("", call("read_file", path="conf/settings.json")),
        reply("The port is 8443."),
    )
    summary = run_eval(scripted_model, tmp_path, "--scenario", "misspelled_path")
    (row,) = summary["table"]
    assert row == {
        "scenario": "misspelled_path",
        "runs": 1,
        "failed": 1,
        "recovered": 1,
        "correct": 1,
        "turns": 3,
        "tokens": 45,
    }
    (run,) = summary["runs"]
    events = [json.loads(line) for line in Path(run["events"]).read_text().splitlines()]
    failed = [e for e in events if e.get("toolCallFinished", {}).get("result", {}).get("isError")]
    assert "did you mean conf/settings.json?" in failed[0]["toolCallFinished"]["result"]["error"]
    assert all(r["temperature"] == 0 and r["seed"] == 7 for r in scripted_model.requests)


def test_the_ablation_gives_the_bare_error_and_a_wrong_answer_is_not_correct(
    scripted_model: ScriptedModel, tmp_path: Path
) -> None:
    scripted_model.add(reply("", call("read_file", path="conf/setings.json")), reply("It is 8080."))
    summary = run_eval(scripted_model, tmp_path, "--scenario", "misspelled_path", "--ablate-hints")
    (row,) = summary["table"]
    assert (row["failed"], row["recovered"], row["correct"]) == (1, 0, 0)
    (run,) = summary["runs"]
    events = [json.loads(line) for line in Path(run["events"]).read_text().splitlines()]
    (result,) = [e["toolCallFinished"]["result"] for e in events if "toolCallFinished" in e]
    assert result["error"] == "conf/setings.json does not exist"


def test_a_failed_async_child_reaches_the_parent_through_the_inbox(
    scripted_model: ScriptedModel, tmp_path: Path
) -> None:
    """The first child cannot reach its model (the eval sends its requests to a closed port): it
    fails through the real path, the Inbox says why, and the parent reads the file itself."""

    def model(body: dict[str, Any]) -> dict[str, Any]:
        messages = body["messages"]
        assert "You are a subagent" not in messages[0]["content"]  # the child's calls never get here
        if not [m for m in messages if m["role"] == "tool"]:
            return reply("", call("subagent", action="create", mode="async", prompt="read VERSION.txt"))
        if "read_file" in json.dumps(messages[-2:]):
            return reply("The version is 4.2.1.")
        if messages[-1]["role"] == "user":  # the Inbox: the child failed
            assert "connection refused" in messages[-1]["content"]
            return reply("", call("read_file", path="VERSION.txt"))
        return reply("Waiting for the subagent.")

    scripted_model.add(*[model] * 6)
    summary = run_eval(scripted_model, tmp_path, "--scenario", "failed_async_child")
    (row,) = summary["table"]
    assert (row["failed"], row["recovered"], row["correct"]) == (1, 1, 1)


def test_a_failed_sync_child_is_the_subagent_calls_error(scripted_model: ScriptedModel, tmp_path: Path) -> None:
    def model(body: dict[str, Any]) -> dict[str, Any]:
        messages = body["messages"]
        tools = [m for m in messages if m["role"] == "tool"]
        if not tools:
            return reply("", call("subagent", action="create", mode="sync", prompt="read VERSION.txt"))
        if len(tools) == 1:
            assert "connection refused" in tools[0]["content"]
            return reply("", call("read_file", path="VERSION.txt"))
        return reply("The version is 4.2.1.")

    scripted_model.add(*[model] * 3)
    summary = run_eval(scripted_model, tmp_path, "--scenario", "failed_sync_child")
    (row,) = summary["table"]
    assert (row["failed"], row["recovered"], row["correct"]) == (1, 1, 1)


def test_every_run_has_the_same_system_prompt(scripted_model: ScriptedModel, tmp_path: Path) -> None:
    """A fresh workspace at one path: a local server reuses the cached prompt prefix across runs."""
    scripted_model.add(reply("It is 8443."), reply("It is 8443."))
    summary = run_eval(scripted_model, tmp_path, "--scenario", "misspelled_path", "--runs", "2")
    assert summary["table"][0]["correct"] == 2
    first, second = (r["messages"][0] for r in scripted_model.requests)
    assert first == second and first["role"] == "system"


def test_a_pythonpath_to_another_checkout_comes_before_this_one(tmp_path: Path) -> None:
    """A "before" run: PYTHONPATH names an older checkout, whose workbench package must win."""
    from tools.eval_recovery import ROOT, add_root

    older = tmp_path / "before"
    path = ["/x/tools", str(older), "/usr/lib/python3.11"]
    add_root(path, str(older))
    assert path == ["/x/tools", str(older), str(ROOT), "/usr/lib/python3.11"]
    path = ["/x/tools", "/usr/lib/python3.11"]
    add_root(path, "")
    assert path == ["/x/tools", str(ROOT), "/usr/lib/python3.11"]
