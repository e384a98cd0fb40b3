"""The recovery eval itself (tools/eval_recovery.py) against the scripted server, so it cannot rot."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.scripted_server import ScriptedModel, call, reply
from tools.eval_recovery import main
from tools.eval_recovery_scenarios import SCENARIOS

pytestmark = pytest.mark.tmux


def run_eval(scripted_model: ScriptedModel, out: Path, *extra: str) -> dict[str, Any]:
    argv = ["--model", "openai/scripted", "--api-base", scripted_model.url, "--api-key", "sk-test"]
    if "--task-files" not in extra:  # the replies are scripted for runs without the reads of the task's files
        argv += ["--task-files", "off"]
    assert (
        main([*argv, "--out", str(out), "--scratch", str(out / "scratch"), "--temperature", "0", "--seed", "7", *extra])
        == 0
    )
    label = "ablated" if "--ablate-hints" in extra else "after"
    return json.loads((out / label / "summary.json").read_text())


def test_every_scenario_has_a_distinct_name_and_a_prompt() -> None:
    names = [s.name for s in SCENARIOS]
    assert len(names) == len(set(names)) >= 8 and all(s.prompt for s in SCENARIOS)


def test_issue_28s_kinds_and_the_generalization_check_are_there_with_files_of_their_own() -> None:
    """At least four scenarios of the issue's kinds (evidence) and three of kinds the hints were not
    written for (generalization), none on the issue's own files (auth.py, a port in config/)."""
    groups = {g: [s for s in SCENARIOS if s.group == g] for g in ("recovery", "evidence", "generalization")}
    assert len(groups["evidence"]) >= 4 and len(groups["generalization"]) >= 3
    assert {s.name for s in groups["evidence"]} >= {
        "read_after_find",
        "filter_matched_nothing",
        "comment_in_call",
        "edit_unread",
    }
    for scenario in groups["evidence"] + groups["generalization"]:
        assert scenario.files and not any(name.endswith("auth.py") for name in scenario.files)
        assert not re.search(r"\bport\b", scenario.prompt.lower())


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
        "group": "recovery",
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


# --- the evidence and generalization scenarios, judged on scripted runs --------------------------


def one_row(scripted_model: ScriptedModel, tmp_path: Path, name: str, *replies: Any) -> dict[str, Any]:
    scripted_model.add(*replies)
    (row,) = run_eval(scripted_model, tmp_path, "--scenario", name)["table"]
    return row


def judged(row: dict[str, Any]) -> tuple[int, int, int]:
    return row["failed"], row["recovered"], row["correct"]


def test_read_after_find_is_correct_only_when_the_file_was_read(scripted_model: ScriptedModel, tmp_path: Path) -> None:
    row = one_row(
        scripted_model,
        tmp_path / "read",
        "read_after_find",
        reply("", call("read_file", path="logging.ini")),
        reply("", call("read_file", path="etc/app/logging.ini")),
        reply("The level is WARNING."),
    )
    assert judged(row) == (1, 1, 1) and row["group"] == "evidence"
    row = one_row(  # the issue's failure: the path found, the value answered without reading it
        scripted_model,
        tmp_path / "guess",
        "read_after_find",
        reply("", call("read_file", path="logging.ini")),
        reply("", call("glob", pattern="**/logging.ini")),
        reply("The level is WARNING."),
    )
    assert judged(row) == (1, 0, 0)


def test_filter_matched_nothing_counts_the_failed_filter_and_the_answer(
    scripted_model: ScriptedModel, tmp_path: Path
) -> None:
    row = one_row(
        scripted_model,
        tmp_path,
        "filter_matched_nothing",
        reply("", call("grep", pattern="MAX_RETRIES", glob="lib/**/*.rb")),
        reply("", call("grep", pattern="MAX_RETRIES", glob="*.rb")),
        reply("MAX_RETRIES is 7, in client.rb."),
    )
    assert judged(row) == (1, 1, 1)


def test_comment_in_call_counts_a_repaired_call(scripted_model: ScriptedModel, tmp_path: Path) -> None:
    block = '```json\n{"name": "grep", "arguments": {"pattern": "def parse_date" // the definition\n}}\n```'
    row = one_row(scripted_model, tmp_path, "comment_in_call", reply(block), reply("It is in dates.py, line 4."))
    assert judged(row) == (1, 1, 1)


def test_edit_unread_counts_the_miss_and_the_renamed_file(scripted_model: ScriptedModel, tmp_path: Path) -> None:
    row = one_row(
        scripted_model,
        tmp_path,
        "edit_unread",
        reply("", call("edit_file", path="billing.py", old_text="def calc_total(items, tax):", new_text="x")),
        reply(
            "", call("edit_file", path="billing.py", old_text="calc_total", new_text="compute_total", replace_all=True)
        ),
        reply("Renamed."),
    )
    assert judged(row) == (1, 1, 1)


def test_the_generalization_scenarios_judge_their_runs(scripted_model: ScriptedModel, tmp_path: Path) -> None:
    row = one_row(
        scripted_model,
        tmp_path / "argument",
        "missing_argument",
        reply("", call("bash", command="./report.sh")),
        reply("", call("bash", command="./report.sh --month 2026-11")),
        reply("The total is 4817 EUR."),
    )
    assert judged(row) == (1, 1, 1) and row["group"] == "generalization"
    fixed = "def apply(price, percent):\n    return price * (100 - percent) / 100\n"
    row = one_row(
        scripted_model,
        tmp_path / "tests",
        "test_failure_reason",
        reply("", call("bash", command="python -m pytest -q")),
        reply("", call("write_file", path="discount.py", content=fixed)),
        reply("", call("bash", command="python -m pytest -q")),
        reply("Fixed: apply takes a percentage off."),
    )
    assert judged(row) == (1, 1, 1)
    row = one_row(
        scripted_model,
        tmp_path / "paged",
        "paged_read",
        reply("", call("read_file", path="big.cfg")),
        reply("", call("read_file", path="big.cfg", offset=2001)),
        reply("retention_days is 93."),
    )
    assert judged(row) == (1, 1, 1)


def test_the_answer_check_is_an_eval_variant(scripted_model: ScriptedModel, tmp_path: Path) -> None:
    """--answer-check: the answer found without reading is asked which result shows it, and the
    scripted model then reads the file (the real model's choice is what the variant measures)."""
    scripted_model.add(
        reply("", call("glob", pattern="**/logging.ini")),
        reply("The level is WARNING."),
        reply("", call("read_file", path="etc/app/logging.ini")),
        reply("The level is WARNING."),
    )
    summary = run_eval(scripted_model, tmp_path, "--scenario", "read_after_find", "--answer-check")
    (row,) = summary["table"]
    assert row["correct"] == 1 and row["turns"] == 4
    asked = scripted_model.requests[2]["messages"][-1]["content"]
    assert asked.startswith("Your answer states 'WARNING', which no tool result")


def test_the_multistep_scenarios_judge_their_runs(scripted_model: ScriptedModel, tmp_path: Path) -> None:
    """Issue 38's kinds: a how-to first (failed), then the work done (correct); and --work-nudge off
    as the eval's variant (the how-to is the answer, nothing changed)."""
    how_to = "Change slug.py like this:\n```python\n    return title.lower()\n```"
    fixed = 'def slug(title):\n    return title.lower().replace(" ", "-")\n'
    row = one_row(
        scripted_model,
        tmp_path / "check",
        "fix_from_check",
        reply(how_to),
        reply("", call("write_file", path="slug.py", content=fixed)),
        reply("Fixed."),
    )
    assert judged(row) == (1, 1, 1) and row["group"] == "multistep"
    assert scripted_model.requests[1]["messages"][-1]["content"].startswith("You can make this change yourself")
    scripted_model.add(reply("1. Run mkdir build\n2. Run cp app.ini build/"))
    (row,) = run_eval(scripted_model, tmp_path / "off", "--scenario", "one_command", "--work-nudge", "off")["table"]
    assert judged(row) == (1, 0, 0) and row["turns"] == 1
    row = one_row(
        scripted_model,
        tmp_path / "rename",
        "rename_across_files",
        *(
            reply("", call("edit_file", path=p, old_text="area_of", new_text="circle_area", replace_all=True))
            for p in ("shapes.py", "main.py", "report.py")
        ),
        reply("Renamed in three files."),
    )
    assert judged(row) == (0, 0, 1)  # no how-to, no failure: nothing to recover from
