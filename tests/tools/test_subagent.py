"""The subagent tool: its arguments, its answers and its errors, over a stand-in host and the real tree."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.conftest import RegisterTool, run_agent
from tests.scripted_server import ScriptedModel, call, reply
from tests.waiting import sleep
from workbench.config.settings import Settings
from workbench.core.feedback import Feedback, model_text
from workbench.pb import workbench_pb2 as pb
from workbench.tools.registry import Toolbox, ToolContext
from workbench.tools.seams import SpawnRequest


@dataclass
class Child:
    info: pb.AgentInfo
    activity: str = "calling bash"
    activity_at: float = field(default_factory=time.monotonic)
    elapsed: float = 1.5


@dataclass
class FakeHost:
    """A stand-in for the tree's handle: records what the tool asked for."""

    finished: pb.AgentFinished = field(default_factory=pb.AgentFinished)
    status: pb.AgentStatus = pb.AGENT_STATUS_RUNNING
    kids: list[Child] = field(default_factory=list)
    calls: list[tuple[str, Any]] = field(default_factory=list)

    def create(self, request: SpawnRequest) -> pb.AgentInfo:
        if request.prompt == "fail":
            raise Feedback("depth limit reached")
        self.calls.append(("create", request))
        return pb.AgentInfo(id="a1", name="helper", status=self.status)

    def running_children(self) -> tuple[int, int]:
        return (8, 1) if self.status == pb.AGENT_STATUS_QUEUED else (1, 0)

    async def result(self, agent_id: str) -> pb.AgentFinished:
        self.calls.append(("result", agent_id))
        return self.finished

    def children(self) -> list[Child]:
        return self.kids

    async def cancel(self, agent_id: str) -> pb.AgentFinished:
        self.calls.append(("cancel", agent_id))
        return pb.AgentFinished(agent_id=agent_id, status=pb.AGENT_STATUS_CANCELLED)

    def message(self, agent_id: str, text: str) -> pb.AgentInfo:
        self.calls.append(("message", (agent_id, text)))
        return pb.AgentInfo(id=agent_id, name="helper")


async def invoke(host: Any, tmp_path: Path, **args: Any) -> pb.ToolResult:
    ctx = ToolContext(workspace=tmp_path, settings=Settings(workspace=tmp_path), session_dir=tmp_path, agents=host)
    return await Toolbox(["subagent"]).invoke(pb.ToolCall(id="c1", name="subagent", arguments=json.dumps(args)), ctx)


async def test_schema_follows_the_tool_contract() -> None:
    (definition,) = Toolbox(["subagent"]).definitions()
    props = dict(definition.parameters["properties"])
    assert set(props) == {"action", "prompt", "mode", "name", "tools", "model", "timeout", "id", "text"}
    assert list(props["action"]["enum"]) == ["create", "list", "cancel", "message"]
    assert list(props["mode"]["enum"]) == ["sync", "async", "fork"] and props["mode"]["default"] == "async"
    assert props["action"]["default"] == "create" and list(definition.parameters["required"]) == []


async def test_a_call_without_action_creates(tmp_path: Path) -> None:
    """A 1.5B model called subagent with prompt and mode but never `action` (the eval's failed-child
    scenarios, eight times over): what it meant is unambiguous, so create is the default."""
    host = FakeHost(finished=pb.AgentFinished(agent_id="a1", status=pb.AGENT_STATUS_COMPLETED, result="1.4.2"))
    args = {"model": "", "tools": ["read_file"], "prompt": "Read VERSION.txt", "text": "", "name": "v", "mode": "sync"}
    result = await invoke(host, tmp_path, **args)
    assert not result.is_error and result.output == "1.4.2"
    asked = SpawnRequest("Read VERSION.txt", "sync", name="v", tools=["read_file"], model="", timeout=0.0)
    assert host.calls[0] == ("create", asked)


async def test_without_a_tree_it_says_so(tmp_path: Path) -> None:
    result = await invoke(None, tmp_path, action="list")
    assert result.is_error and "not available" in result.error


async def test_async_create_returns_the_id_at_once(tmp_path: Path) -> None:
    host = FakeHost()
    result = await invoke(host, tmp_path, action="create", prompt="count", tools=["bash"], timeout=5)
    assert not result.is_error
    assert "Started subagent helper (a1) in async mode: running" in result.output and "Inbox" in result.output
    assert host.calls == [("create", SpawnRequest("count", "async", name="", tools=["bash"], model="", timeout=5.0))]


async def test_queued_create_says_it_waits_for_a_slot(tmp_path: Path) -> None:
    result = await invoke(FakeHost(status=pb.AGENT_STATUS_QUEUED), tmp_path, action="create", prompt="x")
    assert "queued" in result.output and "(8 running, 1 queued)" in result.output


async def test_creation_error_is_the_tools_error(tmp_path: Path) -> None:
    result = await invoke(FakeHost(), tmp_path, action="create", prompt="fail")
    assert result.is_error and result.error == "depth limit reached"


async def test_sync_answer_or_failure(tmp_path: Path) -> None:
    done = pb.AgentFinished(agent_id="a1", status=pb.AGENT_STATUS_COMPLETED, result="42")
    result = await invoke(FakeHost(finished=done), tmp_path, action="create", prompt="x", mode="sync")
    assert result.output == "42" and not result.is_error

    empty = pb.AgentFinished(agent_id="a1", status=pb.AGENT_STATUS_COMPLETED)
    result = await invoke(FakeHost(finished=empty), tmp_path, action="create", prompt="x", mode="sync")
    assert result.output == "subagent helper (a1) completed without an answer."

    failed = pb.AgentFinished(
        agent_id="a1", status=pb.AGENT_STATUS_TIMED_OUT, result="half done", cause="timed out after 5 s"
    )
    result = await invoke(FakeHost(finished=failed), tmp_path, action="create", prompt="x", mode="sync")
    assert result.is_error
    assert model_text(result) == (
        "The last text of subagent helper (a1):\nhalf done\nError: subagent helper (a1) timed out after 5 s"
    )

    silent = pb.AgentFinished(agent_id="a1", status=pb.AGENT_STATUS_FAILED)
    result = await invoke(FakeHost(finished=silent), tmp_path, action="create", prompt="x", mode="sync")
    assert result.error == "subagent helper (a1) failed: it ended without a result or a cause"


async def test_cancel_and_message_need_their_arguments(tmp_path: Path) -> None:
    host = FakeHost()
    assert "needs the subagent's id" in (await invoke(host, tmp_path, action="cancel")).error
    assert "needs the subagent's id" in (await invoke(host, tmp_path, action="message", text="hi")).error
    assert "message needs text" in (await invoke(host, tmp_path, action="message", id="a1")).error
    assert host.calls == []
    assert (await invoke(host, tmp_path, action="cancel", id="a1")).output == "Cancelled subagent a1: it is cancelled."
    sent = await invoke(host, tmp_path, action="message", id="a1", text="use plan B")
    assert "Inbox of helper (a1)" in sent.output
    assert host.calls == [("cancel", "a1"), ("message", ("a1", "use plan B"))]


async def test_list_shows_the_tree(tmp_path: Path) -> None:
    assert (await invoke(FakeHost(), tmp_path, action="list")).output == "You have started no subagents."
    kids = [
        Child(pb.AgentInfo(id="a1", name="tests", mode=pb.SPAWN_MODE_ASYNC, status=pb.AGENT_STATUS_WAITING, depth=1)),
        Child(pb.AgentInfo(id="a3", name="unit", mode=pb.SPAWN_MODE_SYNC, status=pb.AGENT_STATUS_RUNNING, depth=2)),
        Child(pb.AgentInfo(id="a2", name="lint", mode=pb.SPAWN_MODE_FORK, status=pb.AGENT_STATUS_FAILED, depth=1)),
    ]
    lines = (await invoke(FakeHost(kids=kids), tmp_path, action="list")).output.splitlines()
    assert lines[0].split("\t") == ["id", "name", "mode", "status", "elapsed", "last activity"]
    assert lines[1].startswith("a1\ttests\tasync\twaiting\t1.5s\tcalling bash (")
    assert lines[2].startswith("  a3\tunit\tsync\trunning")
    assert lines[3].startswith("a2\tlint\tfork\tfailed")


async def test_list_over_the_real_tree(
    settings: Settings, scripted_model: ScriptedModel, register_tool: RegisterTool
) -> None:
    register_tool(sleep)

    def by_agent(body: dict[str, Any]) -> dict[str, Any]:
        task = next(m["content"] for m in body["messages"] if m["role"] == "user")
        turn = sum(1 for m in body["messages"] if m["role"] == "assistant")
        if task.startswith("CHILD"):
            return reply("", call("sleep", seconds=1.0)) if turn == 0 else reply("rested")
        script = [
            reply(
                "",
                call("subagent", {"action": "create", "prompt": "CHILD one", "name": "one"}),
                call("subagent", {"action": "create", "prompt": "CHILD two", "name": "two"}),
            ),
            reply("", call("sleep", seconds=0.1)),
            reply("", call("subagent", action="list")),
        ]
        if turn < len(script):
            return script[turn]
        return reply("done" if body["messages"][-1]["content"].startswith("[Inbox") else "waiting")

    scripted_model.add(*[by_agent] * 20)
    run = await run_agent(settings, "ROOT", tools=["subagent", "sleep"])
    listing = [r for r in run.results() if r.name == "subagent"][-1].output.splitlines()
    assert len(listing) == 3
    assert listing[1].startswith("a1\tone\tasync\trunning") and "calling sleep" in listing[1]
    assert listing[2].startswith("a2\ttwo\tasync\trunning")
    assert run.outcome.text == "done"


async def test_message_without_an_id_but_with_a_prompt_points_at_create(tmp_path: Path) -> None:
    """A 1.5B model sent action='message' with a prompt and mode and no child started yet, eleven times."""
    result = await invoke(FakeHost(), tmp_path, action="message", prompt="Read VERSION.txt", mode="async")
    assert result.is_error and "needs the subagent's id" in result.error
    assert "you have no subagents: to start one on this prompt, call subagent with action='create'" in result.error
    running = FakeHost(kids=[Child(pb.AgentInfo(id="a1", name="helper"))])
    result = await invoke(running, tmp_path, action="message", prompt="Read VERSION.txt")
    assert "action='create'" not in result.error  # it has a child: the id is what is missing
