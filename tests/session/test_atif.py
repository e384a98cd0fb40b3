"""`workbench export ID --format atif`: a session as an ATIF trajectory, validated by Harbor's own
validator (harbor.utils.trajectory_validator, run in Harbor's venv). A real run (scripted model server,
real SQLite, a real sync subagent) and fixed event streams (a partial reply, costs, 2,000 events)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_agent
from tests.harbor_venv import harbor_python
from tests.scripted_server import Router, ScriptedModel, call, reply
from workbench.cli.commands.export import export
from workbench.config.settings import Settings
from workbench.pb import workbench_pb2 as pb
from workbench.session.atif import trajectory


def validate_with_harbor(doc: dict[str, Any], tmp_path: Path) -> None:
    path = tmp_path / "trajectory.json"
    path.write_text(json.dumps(doc))
    done = subprocess.run(
        [str(harbor_python()), "-m", "harbor.utils.trajectory_validator", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.harbor
@pytest.mark.tmux  # a real run (its tmux server starts only for a shell; marked to be safe)
async def test_a_real_session_with_a_failed_call_and_a_subagent_is_a_valid_trajectory(
    settings: Settings, scripted_model: ScriptedModel, tmp_path: Path
) -> None:
    router = Router(
        CHILD=[reply("child found 42", usage=(30, 7))],
        parent=[
            reply("look first", call("read_file", {"path": "missing.txt"}), usage=(100, 10)),
            reply("", call("subagent", {"action": "create", "mode": "sync", "name": "kid", "prompt": "CHILD: x"})),
            reply("the answer is 42", usage=(200, 20)),
        ],
    )
    scripted_model.add(*[router] * 5)
    run = await run_agent(settings, "parent: find the answer")
    session_id = run.events[0].session_id
    text = "\n".join(export(settings, session_id, "atif"))
    doc = json.loads(text)
    validate_with_harbor(doc, tmp_path)

    assert doc["schema_version"] == "ATIF-v1.8" and doc["session_id"] == session_id
    assert doc["agent"]["name"] == "workbench" and doc["agent"]["model_name"] == "openai/scripted"
    steps = doc["steps"]
    assert [s["source"] for s in steps[:2]] == ["system", "user"] and steps[1]["message"] == "parent: find the answer"
    first = steps[2]
    assert first["source"] == "agent" and first["message"] == "look first"
    assert first["tool_calls"][0]["function_name"] == "read_file"
    assert first["tool_calls"][0]["arguments"] == {"path": "missing.txt"}
    assert first["metrics"] == {"prompt_tokens": 100, "completion_tokens": 10}
    seen = first["observation"]["results"][0]
    assert seen["source_call_id"] == first["tool_calls"][0]["tool_call_id"]
    assert "Error: missing.txt does not exist" in seen["content"] and seen["extra"]["is_error"] is True
    # the subagent: its own trajectory, embedded, referenced from the call that started it
    spawn = steps[3]
    ref = spawn["observation"]["results"][0]["subagent_trajectory_ref"][0]
    (child,) = doc["subagent_trajectories"]
    assert ref["trajectory_id"] == child["trajectory_id"] and child["extra"]["agent_name"] == "kid"
    assert spawn["observation"]["results"][0]["content"] == "child found 42"
    assert [s["source"] for s in child["steps"]] == ["system", "user", "agent"]
    assert child["steps"][1]["message"] == "CHILD: x" and child["steps"][1]["extra"]["author"] == "parent agent"
    assert child["final_metrics"]["total_prompt_tokens"] == 30
    assert steps[-1]["message"] == "the answer is 42"
    final = doc["final_metrics"]
    assert final["total_prompt_tokens"] == 100 + 10 + 200 and final["total_completion_tokens"] == 10 + 5 + 20
    assert final["total_steps"] == len(steps)


def _event(kind: str, message: Any, agent: str = "main", seq: int = 0) -> pb.Event:
    event = pb.Event(session_id="s1", agent_id=agent, seq=seq)
    event.time.FromSeconds(1_764_547_200 + seq)
    getattr(event, kind).CopyFrom(message)
    return event


def _reply(text: str, cost: float | None, calls: list[pb.ToolCall] | None = None) -> pb.Message:
    usage = pb.Usage(input_tokens=1000, output_tokens=50, cache_read_tokens=400, calls=1)
    if cost is not None:
        usage.cost = cost
    return pb.Message(role=pb.ROLE_ASSISTANT, text=text, tool_calls=calls or [], usage=usage, model="m")


@pytest.mark.harbor
def test_a_partial_reply_cached_tokens_and_costs_with_subagents(tmp_path: Path) -> None:
    spawn = pb.ToolCall(id="c1", name="subagent", arguments='{"action": "create", "mode": "async"}')
    bad = pb.ToolCall(id="c2", name="bash", arguments="{not json")
    kid = pb.AgentInfo(id="a1", parent_id="main", name="kid", depth=1, prompt="count")
    events = [
        _event("message", pb.Message(role=pb.ROLE_USER, text="go", author=pb.AUTHOR_PERSON)),
        _event("message", _reply("", 0.01, [spawn, bad])),
        _event("tool_call_started", pb.ToolCallStarted(call=spawn)),
        _event("agent_spawned", pb.AgentSpawned(agent=kid), agent="a1"),
        _event("tool_call_finished", pb.ToolCallFinished(result=pb.ToolResult(call_id="c1", name="subagent"))),
        _event("message", pb.Message(role=pb.ROLE_TOOL, tool_result=pb.ToolResult(call_id="c1", output="started"))),
        _event("message", pb.Message(role=pb.ROLE_USER, text="count", author=pb.AUTHOR_PARENT), agent="a1"),
        _event("message", _reply("3", 0.002), agent="a1"),
        _event("message", pb.Message(role=pb.ROLE_TOOL, tool_result=pb.ToolResult(call_id="c2", output="x"))),
        _event("message", pb.Message(role=pb.ROLE_USER, text="[Inbox: 1 item]", author=pb.AUTHOR_INBOX)),
        _event("text_delta", pb.TextDelta(text="Once upon ")),
        _event("text_delta", pb.TextDelta(text="a time")),
        _event("run_finished", pb.RunFinished(status=pb.RUN_STATUS_CANCELLED, reason="cancelled by the person")),
    ]
    info = pb.SessionInfo(id="s1", model="m", workspace="/w", status=pb.RUN_STATUS_CANCELLED)
    doc = trajectory(info, [pb.AgentInfo(id="main", name="main", model="m"), kid], events)
    validate_with_harbor(doc, tmp_path)
    steps = doc["steps"]
    assert steps[1]["tool_calls"][1] == {
        "tool_call_id": "c2",
        "function_name": "bash",
        "arguments": {},
        "extra": {"raw_arguments": "{not json"},
    }
    assert steps[1]["metrics"]["cached_tokens"] == 400
    assert steps[1]["observation"]["results"][0]["subagent_trajectory_ref"][0]["trajectory_id"] == "a1"
    assert steps[2]["source"] == "system" and steps[2]["extra"]["author"] == "Inbox"
    assert steps[3] == {**steps[3], "source": "agent", "message": "Once upon a time", "extra": {"partial": True}}
    assert steps[4]["source"] == "system" and "cancelled by the person" in steps[4]["message"]
    assert doc["final_metrics"]["total_cost_usd"] == pytest.approx(0.012)  # its own and its subagent's
    assert doc["subagent_trajectories"][0]["final_metrics"]["total_cost_usd"] == pytest.approx(0.002)


@pytest.mark.harbor
def test_a_subagents_subagent_is_embedded_in_its_parents_trajectory(tmp_path: Path) -> None:
    spawn = pb.ToolCall(id="c1", name="subagent", arguments='{"action": "create", "mode": "sync"}')
    spawn2 = pb.ToolCall(id="c2", name="subagent", arguments='{"action": "create", "mode": "sync"}')
    kid = pb.AgentInfo(id="a1", parent_id="main", name="kid", depth=1)
    grandkid = pb.AgentInfo(id="a2", parent_id="a1", name="grandkid", depth=2)
    kid.created.FromSeconds(1)
    grandkid.created.FromSeconds(2)
    events = [
        _event("message", pb.Message(role=pb.ROLE_USER, text="go")),
        _event("message", _reply("", 0.01, [spawn])),
        _event("tool_call_started", pb.ToolCallStarted(call=spawn)),
        _event("agent_spawned", pb.AgentSpawned(agent=kid), agent="a1"),
        _event("message", pb.Message(role=pb.ROLE_USER, text="sub", author=pb.AUTHOR_PARENT), agent="a1"),
        _event("message", _reply("", 0.002, [spawn2]), agent="a1"),
        _event("tool_call_started", pb.ToolCallStarted(call=spawn2), agent="a1"),
        _event("agent_spawned", pb.AgentSpawned(agent=grandkid), agent="a2"),
        _event("message", pb.Message(role=pb.ROLE_USER, text="subsub", author=pb.AUTHOR_PARENT), agent="a2"),
        _event("message", _reply("7", 0.003), agent="a2"),
        _event(
            "message", pb.Message(role=pb.ROLE_TOOL, tool_result=pb.ToolResult(call_id="c2", output="7")), agent="a1"
        ),
        _event("message", _reply("7", 0.002), agent="a1"),
        _event("message", pb.Message(role=pb.ROLE_TOOL, tool_result=pb.ToolResult(call_id="c1", output="7"))),
        _event("message", _reply("7", 0.01)),
    ]
    doc = trajectory(pb.SessionInfo(id="s1"), [pb.AgentInfo(id="main"), kid, grandkid], events)
    validate_with_harbor(doc, tmp_path)
    (child,) = doc["subagent_trajectories"]
    (grandchild,) = child["subagent_trajectories"]
    assert child["trajectory_id"] == "a1" and grandchild["trajectory_id"] == "a2"
    assert child["steps"][1]["observation"]["results"][0]["subagent_trajectory_ref"][0]["trajectory_id"] == "a2"
    assert child["final_metrics"]["total_cost_usd"] == pytest.approx(0.007)
    assert doc["final_metrics"]["total_cost_usd"] == pytest.approx(0.027)


def test_an_unpriced_model_has_no_cost_and_an_agent_without_messages_has_its_task() -> None:
    kid = pb.AgentInfo(id="a1", parent_id="main", name="kid", depth=1, prompt="count")
    events = [_event("message", pb.Message(role=pb.ROLE_USER, text="go")), _event("message", _reply("ok", None))]
    doc = trajectory(pb.SessionInfo(id="s1"), [pb.AgentInfo(id="main"), kid], events)
    assert "total_cost_usd" not in doc["final_metrics"]
    assert doc["subagent_trajectories"][0]["steps"] == [{"step_id": 1, "source": "user", "message": "count"}]


def test_2000_events_export_within_a_second() -> None:
    events: list[pb.Event] = [_event("message", pb.Message(role=pb.ROLE_USER, text="go"))]
    for i in range(666):
        c = pb.ToolCall(id=f"c{i}", name="bash", arguments=json.dumps({"command": f"echo {i}" + " x" * 40}))
        events.append(_event("message", _reply(f"step {i} " + "y" * 200, 0.001, [c]), seq=len(events)))
        events.append(_event("tool_call_started", pb.ToolCallStarted(call=c), seq=len(events)))
        result = pb.ToolResult(call_id=c.id, name="bash", output="z" * 2000)
        events.append(_event("message", pb.Message(role=pb.ROLE_TOOL, tool_result=result), seq=len(events)))
    assert len(events) >= 1999
    started = time.perf_counter()
    text = json.dumps(trajectory(pb.SessionInfo(id="s1"), [pb.AgentInfo(id="main")], events), indent=2)
    took = time.perf_counter() - started
    assert took < 1.0, f"{took:.2f} s"
    assert json.loads(text)["final_metrics"]["total_steps"] == 667


def test_an_unknown_format_is_refused_by_the_command_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [str(Path(sys.executable).parent / "workbench"), "export", "x", "--format", "xml", "--data-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "atif" in done.stderr
