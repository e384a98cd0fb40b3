"""The agent tree: sync, async and fork children through the real loop, litellm and the scripted server."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from tests.conftest import RegisterTool, Run, provider_ids, run_agent
from tests.scripted_server import ScriptedModel, call, error, reply
from tests.waiting import EventLog, sleep, until_true
from workbench.config.settings import Settings
from workbench.engine.agents import AgentTree
from workbench.engine.store import Store
from workbench.pb import workbench_pb2 as pb
from workbench.tools.registry import Toolbox, ToolContext

Reply = dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]]
FORK_MARK = "[You are a fork"


def route(model: ScriptedModel, script: dict[str, list[Reply]], copies: int = 400) -> None:
    """Answer each agent by its task, whatever order concurrent requests arrive in.

    An agent is known by a key found in its task (its first user message, or a fork's own
    prompt); its n-th model call gets `script[key][n]`, counted by the assistant messages since.
    """

    def answer(body: dict[str, Any]) -> dict[str, Any]:
        messages = body["messages"]
        users = [i for i, m in enumerate(messages) if m["role"] == "user"]
        forks = [i for i in users if FORK_MARK in (messages[i]["content"] or "")]
        start = forks[-1] if forks else users[0]
        task = messages[start]["content"]
        turn = sum(1 for m in messages[start:] if m["role"] == "assistant")
        for key, replies in script.items():
            if key in task:
                if turn >= len(replies):
                    return error(400, f"script: no reply {turn} for {key!r}")
                item = replies[turn]
                return item(body) if callable(item) else item
        return error(400, f"script: no agent for task {task[:80]!r}")

    model.add(*[answer] * copies)


def create(prompt: str, mode: str = "async", **kwargs: Any) -> dict[str, Any]:
    return call("subagent", {"action": "create", "prompt": prompt, "mode": mode, **kwargs})


def after_inbox(final: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """The parent's reply: `final` once the Inbox has been read, else it waits (no tool calls)."""

    def answer(body: dict[str, Any]) -> dict[str, Any]:
        return reply(final if user_texts(body)[-1].startswith("[Inbox") else "waiting")

    return answer


def user_texts(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "user"]


def tool_texts(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def requests_of(model: ScriptedModel, key: str) -> list[dict[str, Any]]:
    """The requests of the agent whose task (first user message) holds `key`."""
    return [r for r in model.requests if key in (user_texts(r) or [""])[0]]


def results_of(run: Run, agent_id: str = "main") -> list[pb.ToolResult]:
    return [
        e.message.tool_result
        for e in run.events
        if e.agent_id == agent_id and e.WhichOneof("kind") == "message" and e.message.role == pb.ROLE_TOOL
    ]


def finished(run: Run) -> dict[str, pb.AgentFinished]:
    return {f.agent_id: f for f in run.of("agent_finished")}


def inbox_items(run: Run, recipient: str = "main") -> list[pb.InboxItem]:
    return [e.inbox_item for e in run.events if e.WhichOneof("kind") == "inbox_item" and e.agent_id == recipient]


@pytest.fixture(autouse=True)
def _tools(register_tool: RegisterTool) -> None:
    register_tool(sleep)
    register_tool(_stubborn, name="test_stubborn")


class LiveTree:
    """A tree over a real SQLite store whose root runs as a task the test can cancel."""

    def __init__(self, settings: Settings, terminal: Any = None):
        self.store = Store(settings.db_path)
        self.session_id = self.store.create_session(settings.workspace, settings.model, "go")
        self.log = EventLog()
        self.events = self.log.events
        self.until, self.of = self.log.until, self.log.of
        self.store.subscribe(self.log, self.session_id)
        self.tree = AgentTree(settings, self.store, self.session_id, terminal)

    async def close(self) -> None:
        await self.tree.close()
        self.store.close()


# --- sync ------------------------------------------------------------------------------------


async def test_sync_child_answer_is_the_tool_result(settings: Settings, scripted_model: ScriptedModel) -> None:
    route(
        scripted_model,
        {
            "ROOT": [reply("", create("CHILD: add 2 and 3", mode="sync", name="adder")), reply("It is 5.")],
            "CHILD": [reply("5")],
        },
    )
    run = await run_agent(settings, "ROOT task", tools=["subagent", "read_file"])
    assert run.outcome.status == pb.RUN_STATUS_FINISHED and run.outcome.text == "It is 5."
    (result,) = results_of(run)
    assert not result.is_error and result.output == "5"
    (child_request,) = requests_of(scripted_model, "CHILD")
    assert "You are a subagent (adder, id a1)" in child_request["messages"][0]["content"]
    assert [t["function"]["name"] for t in child_request["tools"]] == ["subagent", "read_file"]
    done = finished(run)
    assert done["a1"].status == pb.AGENT_STATUS_COMPLETED and done["a1"].result == "5"
    assert not inbox_items(run)  # a sync child answers through its tool result only
    spawned = {e.agent.id: e.agent for e in run.of("agent_spawned")}
    assert spawned["a1"].parent_id == "main" and spawned["a1"].mode == pb.SPAWN_MODE_SYNC
    assert spawned["a1"].depth == 1 and spawned["a1"].model == settings.model


async def test_sync_child_failure_is_the_tool_error(settings: Settings, scripted_model: ScriptedModel) -> None:
    route(
        scripted_model,
        {
            "ROOT": [reply("", create("CHILD: look it up", mode="sync")), reply("The child failed; noted.")],
            "CHILD": [reply("Looking.", call("read_file", path="missing.txt")), error(401, "key revoked")],
        },
    )
    run = await run_agent(settings, "ROOT task", tools=["subagent", "read_file"])
    assert run.outcome.status == pb.RUN_STATUS_FINISHED  # the parent keeps going
    (result,) = [r for r in results_of(run) if r.name == "subagent"]
    assert result.is_error
    assert "failed" in result.error and "key revoked" in result.error
    assert "Looking." in result.output  # what the child said before it failed
    (content,) = tool_texts(requests_of(scripted_model, "ROOT")[-1])
    assert "Error:" in content and "key revoked" in content
    assert finished(run)["a1"].status == pb.AGENT_STATUS_FAILED


async def test_sync_child_panic_is_caught_at_its_boundary(
    settings: Settings, scripted_model: ScriptedModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_invoke = Toolbox.invoke

    async def buggy_invoke(self: Toolbox, call_: pb.ToolCall, ctx: ToolContext) -> pb.ToolResult:
        if ctx.agent_id != "main":
            raise RuntimeError("bug in the child's machinery")
        return await real_invoke(self, call_, ctx)

    monkeypatch.setattr(Toolbox, "invoke", buggy_invoke)
    route(
        scripted_model,
        {
            "ROOT": [reply("", create("CHILD: crash", mode="sync")), reply("Survived.")],
            "CHILD": [reply("", call("read_file", path="a.txt"))],
        },
    )
    run = await run_agent(settings, "ROOT task", tools=["subagent", "read_file"])
    assert run.outcome.status == pb.RUN_STATUS_FINISHED and run.outcome.text == "Survived."
    (result,) = results_of(run)
    assert result.is_error and "crashed: RuntimeError: bug in the child's machinery" in result.error
    assert finished(run)["a1"].status == pb.AGENT_STATUS_FAILED
    defects = [e for e in run.events if e.WhichOneof("kind") == "defect"]
    assert [e.agent_id for e in defects] == ["a1"]
    assert "RuntimeError" in defects[0].defect.traceback and "buggy_invoke" in defects[0].defect.traceback


# --- async -----------------------------------------------------------------------------------


async def test_async_child_result_arrives_in_the_inbox_and_the_parent_waits(
    settings: Settings, scripted_model: ScriptedModel
) -> None:
    route(
        scripted_model,
        {
            "ROOT": [
                reply("", create("CHILD: count files", name="counter")),
                reply("Waiting for the counter."),
                reply("There are 7 files."),
            ],
            "CHILD": [reply("7 files", delay=0.3)],
        },
    )
    run = await run_agent(settings, "ROOT task", tools=["subagent"])
    assert run.outcome.status == pb.RUN_STATUS_FINISHED and run.outcome.text == "There are 7 files."
    (started,) = results_of(run)
    assert "Started subagent counter (a1) in async mode" in started.output
    root_requests = requests_of(scripted_model, "ROOT")
    assert len(root_requests) == 3
    inbox_text = user_texts(root_requests[2])[-1]
    assert inbox_text.startswith("[Inbox: 1 item]") and "counter (a1) completed" in inbox_text
    assert "result: 7 files" in inbox_text
    # the parent kept its text while it waited, and the event log shows the wait
    assistant = [m.text for m in run.of("message") if m.role == pb.ROLE_ASSISTANT]
    assert "Waiting for the counter." in assistant
    statuses = [e.agent_status.status for e in run.events if e.WhichOneof("kind") == "agent_status"]
    assert pb.AGENT_STATUS_WAITING in statuses
    (item,) = inbox_items(run)
    assert item.status == pb.AGENT_STATUS_COMPLETED and item.recipient_id == "main"


async def test_each_user_message_names_its_author(settings: Settings, scripted_model: ScriptedModel) -> None:
    """The person wrote the root's prompt, the parent its child's task, the Inbox its deliveries."""
    route(
        scripted_model,
        {
            "ROOT": [reply("", create("CHILD: count files")), reply("Waiting."), reply("7 files.")],
            "CHILD": [reply("7 files", delay=0.2)],
        },
    )
    run = await run_agent(settings, "ROOT task", tools=["subagent"])
    assert run.outcome.status == pb.RUN_STATUS_FINISHED
    messages = [e for e in run.events if e.WhichOneof("kind") == "message"]
    users = [(e.agent_id, e.message.author) for e in messages if e.message.role == pb.ROLE_USER]
    assert users == [("main", pb.AUTHOR_PERSON), ("a1", pb.AUTHOR_PARENT), ("main", pb.AUTHOR_INBOX)]
    replies = [e.message.author for e in messages if e.message.role != pb.ROLE_USER]
    assert set(replies) == {pb.AUTHOR_UNSPECIFIED}  # the model's replies and tool results: their role says


async def test_async_failure_with_a_result(settings: Settings, scripted_model: ScriptedModel) -> None:
    route(
        scripted_model,
        {
            "ROOT": [reply("", create("CHILD: audit")), *[after_inbox("noted")] * 2],
            "CHILD": [reply("Found 2 issues so far.", call("read_file", path="x.txt")), error(401, "key revoked")],
        },
    )
    run = await run_agent(settings, "ROOT task", tools=["subagent", "read_file"])
    (item,) = inbox_items(run)
    assert item.status == pb.AGENT_STATUS_FAILED
    assert item.result == "Found 2 issues so far." and "key revoked" in item.cause
    text = user_texts(requests_of(scripted_model, "ROOT")[-1])[-1]
    assert "failed" in text and "result: Found 2 issues so far." in text and "cause:" in text
    # what to do about it (told only the cause, a 1.5B parent answered with an invented version)
    assert text.endswith("its task is not done: do it yourself with your tools, or start a new subagent for it")


async def test_async_failure_with_no_result(settings: Settings, scripted_model: ScriptedModel) -> None:
    route(
        scripted_model,
        {
            "ROOT": [reply("", create("CHILD: audit")), *[after_inbox("noted")] * 2],
            "CHILD": [error(400, "model not found")],
        },
    )
    run = await run_agent(settings, "ROOT task", tools=["subagent"])
    (item,) = inbox_items(run)
    assert item.status == pb.AGENT_STATUS_FAILED and not item.result and "model not found" in item.cause
    assert run.outcome.status == pb.RUN_STATUS_FINISHED


async def test_async_end_with_neither_result_nor_cause_still_says_so(
    settings: Settings, scripted_model: ScriptedModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    from workbench.engine.loop import AgentLoop

    real_run = AgentLoop.run

    async def silent_failure(self: AgentLoop, prompt: str) -> pb.RunFinished:
        if self.ctx.agent_id == "main":
            return await real_run(self, prompt)
        return pb.RunFinished(status=pb.RUN_STATUS_FAILED)  # no text, no reason

    monkeypatch.setattr(AgentLoop, "run", silent_failure)
    route(scripted_model, {"ROOT": [reply("", create("CHILD: x")), *[after_inbox("noted")] * 2]})
    run = await run_agent(settings, "ROOT task", tools=["subagent"])
    (item,) = inbox_items(run)
    assert item.status == pb.AGENT_STATUS_FAILED and "without a result or a cause" in item.cause


async def test_async_timeout(settings: Settings, scripted_model: ScriptedModel) -> None:
    route(
        scripted_model,
        {
            "ROOT": [reply("", create("CHILD: slow", timeout=0.5)), *[after_inbox("it timed out")] * 2],
            "CHILD": [reply("Sleeping.", call("sleep", seconds=30, call_id="nap"))],
        },
    )
    started = time.monotonic()
    run = await run_agent(settings, "ROOT task", tools=["subagent", "sleep"])
    assert time.monotonic() - started < 10
    (item,) = inbox_items(run)
    assert item.status == pb.AGENT_STATUS_TIMED_OUT and "timed out after 0.5 s" in item.cause
    assert item.result == "Sleeping."
    # its own run_finished and agent_finished agree with the Inbox item: timed out, not cancelled
    (child_run,) = [e.run_finished for e in run.events if e.agent_id == "a1" and e.WhichOneof("kind") == "run_finished"]
    assert child_run.status == pb.RUN_STATUS_WAIT_TIMEOUT and child_run.reason == "timed out after 0.5 s"
    (child_end,) = [
        e.agent_finished for e in run.events if e.agent_id == "a1" and e.WhichOneof("kind") == "agent_finished"
    ]
    assert child_end.status == pb.AGENT_STATUS_TIMED_OUT
    # the child's conversation stays valid: its cut call has an "interrupted" result
    child_results = [
        e.message.tool_result for e in run.events if e.agent_id == "a1" and e.WhichOneof("kind") == "message"
    ]
    ids = provider_ids([e.message for e in run.events if e.WhichOneof("kind") == "message"])
    assert [ids[r.call_id] for r in child_results if r.call_id] == ["nap"]
    assert "interrupted" in child_results[-1].error
    assert run.outcome.status == pb.RUN_STATUS_FINISHED


async def test_parent_cancels_an_async_child(settings: Settings, scripted_model: ScriptedModel) -> None:
    route(
        scripted_model,
        {
            "ROOT": [
                reply("", create("CHILD: forever")),
                reply("", call("subagent", action="cancel", id="a1")),
                reply("Cancelled it."),
            ],
            "CHILD": [reply("", call("sleep", seconds=30))],
        },
    )
    started = time.monotonic()
    run = await run_agent(settings, "ROOT task", tools=["subagent", "sleep"])
    assert time.monotonic() - started < 10
    assert run.outcome.status == pb.RUN_STATUS_FINISHED and run.outcome.text == "Cancelled it."
    cancel_result = results_of(run)[1]
    assert cancel_result.output == "Cancelled subagent a1: it is cancelled."
    (item,) = inbox_items(run)
    assert item.status == pb.AGENT_STATUS_CANCELLED and "cancelled by main" in item.cause
    assert "was cancelled" in user_texts(requests_of(scripted_model, "ROOT")[-1])[-1]


async def test_message_reaches_the_childs_next_turn(settings: Settings, scripted_model: ScriptedModel) -> None:
    route(
        scripted_model,
        {
            "ROOT": [
                reply("", create("CHILD: plan")),
                reply("", call("subagent", action="message", id="a1", text="use plan B")),
                reply("waiting"),
                reply("done"),
            ],
            "CHILD": [reply("", call("sleep", seconds=0.5)), reply("Using plan B.")],
        },
    )
    run = await run_agent(settings, "ROOT task", tools=["subagent", "sleep"])
    assert "Inbox of CHILD: plan (a1)" in results_of(run)[1].output
    second = requests_of(scripted_model, "CHILD")[1]
    assert "- message from main (main): use plan B" in user_texts(second)[-1]
    assert finished(run)["a1"].result == "Using plan B."


# --- fork ------------------------------------------------------------------------------------


async def test_fork_starts_from_the_parents_history(
    settings: Settings, scripted_model: ScriptedModel, workspace: Any
) -> None:
    (workspace / "notes.txt").write_text("the secret is 41\n")
    route(
        scripted_model,
        {
            "ROOT": [
                reply("Reading first.", call("read_file", path="notes.txt")),
                reply("Forking.", create("FORKED: add one to the secret", mode="fork")),
                *[after_inbox("It is 42.")] * 2,
            ],
            "FORKED": [reply("42")],
        },
    )
    run = await run_agent(settings, "ROOT task", tools=["subagent", "read_file"])
    assert run.outcome.text == "It is 42."
    (fork_request,) = [r for r in scripted_model.requests if FORK_MARK in json.dumps(r["messages"])]
    root_first = requests_of(scripted_model, "ROOT")[0]
    sent = fork_request["messages"]
    assert sent[0] == root_first["messages"][0]  # the parent's own system prompt
    assert sent[1]["content"] == "ROOT task"
    assert "the secret is 41" in tool_texts(fork_request)[0]  # the parent's history
    assert sent[-1]["role"] == "user" and "FORKED: add one to the secret" in sent[-1]["content"]
    roles = [m["role"] for m in sent]
    assert roles == ["system", "user", "assistant", "tool", "user"]  # the unanswered fork call is left out
    assert inbox_items(run)[0].result == "42"


# --- creation errors and limits --------------------------------------------------------------


async def test_creation_errors_start_nothing(settings: Settings, scripted_model: ScriptedModel) -> None:
    settings.max_total_children = 1
    route(
        scripted_model,
        {
            "ROOT": [
                reply(
                    "",
                    create("CHILD: a", tools=["read_file", "bash_everything"]),
                    create("   "),
                    create("CHILD: b", timeout=-1),
                    create("CHILD: c", mode="later"),
                    call("subagent", action="cancel"),
                    call("subagent", action="cancel", id="a9"),
                    call("subagent", action="create", mode="sync", text="read VERSION.txt"),
                ),
                reply("", create("CHILD: first", mode="sync"), create("CHILD: second", mode="sync")),
                reply("done"),
            ],
            "CHILD: first": [reply("one")],
        },
    )
    run = await run_agent(settings, "ROOT task", tools=["subagent", "read_file"])
    results = results_of(run)
    unknown, empty, negative, bad_mode, no_id, no_child = results[:6]
    assert "unknown tool(s) in tools: bash_everything" in unknown.error and "subagent, read_file" in unknown.error
    assert "prompt is required" in empty.error
    assert "timeout" in negative.error
    assert "must be one of sync, async, fork" in bad_mode.error
    assert "needs the subagent's id" in no_id.error
    assert "no subagent 'a9'" in no_child.error
    # the task sent as `text` (seen with the 1.5B model, issue 28's eval): the call with it as prompt
    assert results[6].error.endswith('Send subagent(action="create", mode="sync", prompt="read VERSION.txt")')
    first, second = results[7:]
    assert first.output == "one"
    assert "total subagent limit reached" in second.error and "max_total_children" in second.error
    assert [e.agent.id for e in run.of("agent_spawned")] == ["main", "a1"]


async def test_depth_limit(settings: Settings, scripted_model: ScriptedModel) -> None:
    settings.max_depth = 1
    route(
        scripted_model,
        {
            "ROOT": [reply("", create("CHILD: nest", mode="sync")), reply("done")],
            "CHILD": [reply("no subagent tool here")],
        },
    )
    await run_agent(settings, "ROOT task", tools=["subagent", "read_file"])
    (child_request,) = requests_of(scripted_model, "CHILD")
    assert [t["function"]["name"] for t in child_request["tools"]] == ["read_file"]  # it could only fail


async def test_children_past_the_running_limit_wait_queued(settings: Settings, scripted_model: ScriptedModel) -> None:
    settings.max_running_children = 2
    route(
        scripted_model,
        {
            "ROOT": [reply("", *[create(f"CHILD {i}: work") for i in range(5)]), *[reply("waiting")] * 10],
            "CHILD": [reply("done", delay=0.2)],
        },
    )
    run = await run_agent(settings, "ROOT task", tools=["subagent"])
    spawned = [e.agent for e in run.of("agent_spawned") if e.agent.id != "main"]
    assert [a.status for a in spawned] == [pb.AGENT_STATUS_RUNNING] * 2 + [pb.AGENT_STATUS_QUEUED] * 3
    assert "queued" in results_of(run)[2].output
    running: set[str] = set()
    peak = 0
    for e in run.events:
        kind = e.WhichOneof("kind")
        if kind == "agent_spawned" and e.agent_spawned.agent.status == pb.AGENT_STATUS_RUNNING and e.agent_id != "main":
            running.add(e.agent_id)
        elif kind == "agent_status" and e.agent_status.status == pb.AGENT_STATUS_RUNNING and e.agent_id != "main":
            assert e.agent_id not in running
            running.add(e.agent_id)
        elif kind == "agent_finished":
            running.discard(e.agent_id)
        peak = max(peak, len(running))
    assert peak == 2
    assert len(inbox_items(run)) == 5 and all(i.status == pb.AGENT_STATUS_COMPLETED for i in inbox_items(run))
    assert run.outcome.status == pb.RUN_STATUS_FINISHED


async def test_parent_wait_cap_ends_wait_timeout_and_stops_its_children(
    settings: Settings, scripted_model: ScriptedModel
) -> None:
    settings.wait_cap = 0.3
    route(
        scripted_model,
        {
            "ROOT": [reply("", create("CHILD: forever")), reply("waiting")],
            "CHILD": [reply("", call("sleep", seconds=30))],
        },
    )
    run = await run_agent(settings, "ROOT task", tools=["subagent", "sleep"])
    assert run.outcome.status == pb.RUN_STATUS_WAIT_TIMEOUT
    done = finished(run)
    assert done["a1"].status == pb.AGENT_STATUS_CANCELLED and "its parent main ended" in done["a1"].cause
    assert done["main"].status == pb.AGENT_STATUS_TIMED_OUT
    kinds = [(e.agent_id, e.WhichOneof("kind")) for e in run.events]
    assert kinds.index(("a1", "agent_finished")) < kinds.index(("main", "agent_finished"))  # bottom up


# --- cancel ----------------------------------------------------------------------------------


def _task_names() -> set[str]:
    return {t.get_name() for t in asyncio.all_tasks() if not t.done()}


async def test_cancelling_one_child_cancels_its_subtree_and_the_parent_goes_on(
    settings: Settings, scripted_model: ScriptedModel
) -> None:
    route(
        scripted_model,
        {
            "ROOT": [reply("", create("CHILD: manage")), reply("waiting"), reply("the child was cancelled")],
            "CHILD": [reply("", create("GRANDCHILD: work")), reply("waiting")],
            "GRANDCHILD": [reply("", call("sleep", seconds=30))],
        },
    )
    session = LiveTree(settings)
    task = asyncio.create_task(session.tree.run_root("ROOT task", ["subagent", "sleep"]))

    def grandchild_busy_child_waiting(events: list[pb.Event]) -> bool:
        statuses = {e.agent_id: e.agent_status.status for e in events if e.WhichOneof("kind") == "agent_status"}
        busy = any(e.agent_id == "a2" and e.WhichOneof("kind") == "tool_call_started" for e in events)
        return busy and statuses.get("a1") == pb.AGENT_STATUS_WAITING

    await session.until(grandchild_busy_child_waiting)
    ended = await session.tree.cancel("a1", "cancelled by the person")
    assert ended.status == pb.AGENT_STATUS_CANCELLED
    outcome = await asyncio.wait_for(task, 10)
    assert outcome.status == pb.RUN_STATUS_FINISHED and outcome.text == "the child was cancelled"
    done = {e.agent_id: e.agent_finished for e in session.of("agent_finished")}
    assert done["a2"].status == pb.AGENT_STATUS_CANCELLED and "its parent a1 ended" in done["a2"].cause
    assert done["a1"].cause == "cancelled by the person"
    (item,) = [e.inbox_item for e in session.of("inbox_item") if e.agent_id == "main"]
    assert item.child_id == "a1" and item.status == pb.AGENT_STATUS_CANCELLED
    assert not any(name.startswith("agent ") for name in _task_names())
    await session.close()


@pytest.mark.tmux
async def test_run_cancel_with_5_children_running_leaves_no_task_or_tmux_window(
    settings: Settings, scripted_model: ScriptedModel
) -> None:
    from workbench.terminal.host import TerminalHost

    before = set(asyncio.all_tasks())
    host = TerminalHost(f"wb-test-{uuid.uuid4().hex[:8]}")
    route(
        scripted_model,
        {
            "ROOT": [reply("", *[create(f"CHILD {i}: run it") for i in range(5)]), reply("waiting")],
            "CHILD": [reply("", call("bash", command="sleep 60; echo never", timeout=120))],
        },
    )
    session = LiveTree(settings, terminal=host)
    task = asyncio.create_task(session.tree.run_root("ROOT task", ["subagent", "bash"]))

    def all_sleeping(events: list[pb.Event]) -> bool:
        started = [e for e in events if e.WhichOneof("kind") == "tool_call_started" and e.agent_id != "main"]
        return len(started) == 5

    await session.until(all_sleeping, timeout=30)
    child_windows: set[str] = set()

    async def five_commands_run() -> bool:
        nonlocal child_windows
        info = await host.window_info()
        shells = {s.shell.window.window_id for s in host.agents.values() if s.shell is not None}
        child_windows = {w for w in shells if w in info and info[w][2] == "sleep"}
        return len(child_windows) == 5

    await until_true(five_commands_run, 10, "the five commands to run in their windows")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    done = {e.agent_id: e.agent_finished.status for e in session.of("agent_finished")}
    assert done == {f"a{i}": pb.AGENT_STATUS_CANCELLED for i in range(1, 6)} | {"main": pb.AGENT_STATUS_CANCELLED}
    # every call of every agent kept a result: the conversations stay valid
    for agent_id in ["a1", "a2", "a3", "a4", "a5"]:
        results = [
            e.message.tool_result
            for e in session.events
            if e.agent_id == agent_id and e.WhichOneof("kind") == "message" and e.message.role == pb.ROLE_TOOL
        ]
        assert len(results) == 1 and results[0].is_error
    assert not any(name.startswith("agent ") for name in _task_names())
    assert not child_windows & set(await host.window_info())  # no window of any child is left
    await session.close()
    await asyncio.sleep(0)
    left = {t for t in asyncio.all_tasks() if not t.done()} - before - {asyncio.current_task()}
    assert not left, left


# --- many ------------------------------------------------------------------------------------


@pytest.mark.slow
async def test_100_async_children_each_reach_the_inbox_once(settings: Settings, scripted_model: ScriptedModel) -> None:
    settings.max_running_children = 100
    settings.max_total_children = 100
    settings.max_turns = 300
    route(
        scripted_model,
        {
            "ROOT": [reply("", *[create(f"CHILD {i:03d}: report", name=f"c{i}") for i in range(100)])]
            + [reply("waiting")] * 200,
            "CHILD": [lambda body: reply(f"report from {user_texts(body)[0][:9]}")],
        },
        copies=600,
    )
    run = await run_agent(settings, "ROOT task", tools=["subagent"])
    assert run.outcome.status == pb.RUN_STATUS_FINISHED
    items = inbox_items(run)
    assert len(items) == 100
    assert sorted(i.child_id for i in items) == sorted(f"a{n}" for n in range(1, 101))
    assert all(i.status == pb.AGENT_STATUS_COMPLETED for i in items)
    assert {i.result for i in items} == {f"report from CHILD {n:03d}" for n in range(100)}
    # the model saw each one exactly once across the drained Inbox messages
    drained = "\n".join(m.text for m in run.of("message") if m.role == pb.ROLE_USER and m.text.startswith("[Inbox"))
    for n in range(1, 101):
        assert drained.count(f"(a{n}) completed") == 1


async def test_the_children_of_one_reply_share_one_reading_of_the_instructions(
    settings: Settings, scripted_model: ScriptedModel
) -> None:
    (settings.workspace / "AGENTS.md").write_text("Project rule, version 1.\n")
    route(
        scripted_model,
        {
            "ROOT": [
                reply("", create("CHILD 1: work"), create("CHILD 2: work")),
                reply("", call("write_file", path="AGENTS.md", content="Project rule, version 2.\n")),
                reply("", create("CHILD 3: work")),
                *[after_inbox("done")] * 10,
            ],
            "CHILD": [reply("worked")],
        },
    )
    run = await run_agent(settings, "ROOT task", tools=["subagent", "write_file"])
    assert run.outcome.status == pb.RUN_STATUS_FINISHED
    systems = {key: requests_of(scripted_model, key)[0]["messages"][0]["content"] for key in ("1:", "2:", "3:")}
    assert "version 1" in systems["1:"] and "version 1" in systems["2:"]
    assert systems["1:"].split("You are a subagent")[0] == systems["2:"].split("You are a subagent")[0]
    assert "version 2" in systems["3:"]  # a later reply reads the instructions again


async def test_a_child_may_name_another_model(settings: Settings, scripted_model: ScriptedModel) -> None:
    route(
        scripted_model,
        {
            "ROOT": [reply("", create("CHILD: think", mode="sync", model="openai/bigger")), reply("ok")],
            "CHILD": [reply("thought")],
        },
    )
    run = await run_agent(settings, "ROOT task", tools=["subagent"])
    (child_request,) = requests_of(scripted_model, "CHILD")
    assert child_request["model"] == "bigger"  # same provider: same endpoint and key as its parent
    assert {e.agent.id: e.agent.model for e in run.of("agent_spawned")} == {
        "main": "openai/scripted",
        "a1": "openai/bigger",
    }
    tree = AgentTree(settings, Store(settings.db_path), "s")
    other = tree.spec("anthropic/claude-x", "openai/scripted")
    assert (other.model, other.api_base, other.api_key) == ("anthropic/claude-x", "", "")
    inherited = tree.spec("", "openai/scripted")
    assert (inherited.model, inherited.api_base) == ("openai/scripted", settings.api_base)
    await tree.close()
    tree.store.close()


async def test_a_message_that_lands_during_the_last_model_call_is_still_read(
    settings: Settings, scripted_model: ScriptedModel
) -> None:
    route(
        scripted_model,
        {
            "ROOT": [
                reply("", create("CHILD: plan")),
                reply("", call("subagent", action="message", id="a1", text="use plan B")),
                after_inbox("done"),
                after_inbox("done"),
            ],
            # its first answer is on the way while the message arrives
            "CHILD": [reply("Plan A.", delay=1.0), reply("Using plan B.")],
        },
    )
    run = await run_agent(settings, "ROOT task", tools=["subagent"])
    assert "Inbox of CHILD: plan (a1)" in results_of(run)[1].output
    child = requests_of(scripted_model, "CHILD")
    assert len(child) == 2 and "- message from main (main): use plan B" in user_texts(child[1])[-1]
    assert finished(run)["a1"].result == "Using plan B."


async def test_a_second_run_cancel_during_cleanup_still_ends_every_child(
    settings: Settings, scripted_model: ScriptedModel
) -> None:
    route(
        scripted_model,
        {
            "ROOT": [reply("", create("CHILD 1: work"), create("CHILD 2: work")), reply("waiting")],
            "CHILD": [reply("", call("test_stubborn"))],
        },
    )
    session = LiveTree(settings)
    task = asyncio.create_task(session.tree.run_root("ROOT task", ["subagent", "test_stubborn"]))

    def both_busy(events: list[pb.Event]) -> bool:
        return len([e for e in events if e.WhichOneof("kind") == "tool_call_started" and e.agent_id != "main"]) == 2

    await session.until(both_busy)
    started = time.monotonic()
    task.cancel()
    await asyncio.sleep(0.2)  # the person's second key press, while the children stop (a timing, not a wait)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - started < 3
    done = {e.agent_id: e.agent_finished.status for e in session.of("agent_finished")}
    assert done == {"a1": pb.AGENT_STATUS_CANCELLED, "a2": pb.AGENT_STATUS_CANCELLED, "main": pb.AGENT_STATUS_CANCELLED}
    assert list(done)[-1] == "main"  # the tree closes bottom up
    assert not any(name.startswith("agent ") for name in _task_names())
    await session.close()


async def _stubborn(ctx: ToolContext) -> str:
    """Sleep 1 s after a cancel before giving in."""
    try:
        await asyncio.sleep(30)
    except asyncio.CancelledError:
        await asyncio.sleep(1)
        raise
    return "never"


async def test_cancelling_a_sync_child_mid_model_call_lets_its_parent_go_on(
    settings: Settings, scripted_model: ScriptedModel
) -> None:
    route(
        scripted_model,
        {
            "ROOT": [reply("", create("CHILD: slow", mode="sync")), reply("went on")],
            "CHILD": [reply("never sent", delay=20)],
        },
    )
    session = LiveTree(settings)
    task = asyncio.create_task(session.tree.run_root("ROOT task", ["subagent"]))
    await session.until(
        lambda events: any(e.agent_id == "a1" and e.WhichOneof("kind") == "run_started" for e in events)
    )
    started = time.monotonic()
    ended = await session.tree.cancel("a1", "cancelled by the person")
    assert ended.status == pb.AGENT_STATUS_CANCELLED and time.monotonic() - started < 2
    outcome = await asyncio.wait_for(task, 10)
    assert outcome.status == pb.RUN_STATUS_FINISHED and outcome.text == "went on"
    (result,) = [e.message.tool_result for e in session.of("message") if e.message.role == pb.ROLE_TOOL]
    assert result.is_error and "cancelled by the person" in result.error
    runs = {e.agent_id: e.run_finished.status for e in session.of("run_finished")}
    assert runs == {"a1": pb.RUN_STATUS_CANCELLED, "main": pb.RUN_STATUS_FINISHED}
    assert not any(name.startswith("agent ") for name in _task_names())
    await session.close()


async def test_a_child_on_a_model_without_its_key_is_refused_with_the_way_out(
    settings: Settings, scripted_model: ScriptedModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 1.5B model named "gpt-4" for its child: without OPENAI_API_KEY every such child failed after
    its retries with litellm's "Missing credentials"; now nothing starts and the error says what to do."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    route(
        scripted_model,
        {
            "ROOT": [
                reply("", create("CHILD: a", mode="sync", model="gpt-4")),
                reply("", create("CHILD: a", mode="sync")),
                reply("done"),
            ],
            "CHILD: a": [reply("one")],
        },
    )
    run = await run_agent(settings, "ROOT task", tools=["subagent", "read_file"])
    refused, ran = results_of(run)
    assert refused.is_error and "model 'gpt-4' cannot be called from here: OPENAI_API_KEY is not set" in refused.error
    assert "Leave model empty to run the subagent on your own model (openai/scripted)" in refused.error
    assert ran.output == "one"
    assert [e.agent.id for e in run.of("agent_spawned")] == ["main", "a1"]


async def test_an_empty_tools_list_gives_the_child_all_of_its_parents_tools(
    settings: Settings, scripted_model: ScriptedModel
) -> None:
    """A 1.5B model filled every argument, `"tools": []` included, and its tool-less child invented an
    answer: empty means the default, as it does for `model`."""
    route(
        scripted_model,
        {"ROOT": [reply("", create("CHILD: a", mode="sync", tools=[])), reply("done")], "CHILD": [reply("one")]},
    )
    run = await run_agent(settings, "ROOT task", tools=["subagent", "read_file"])
    assert results_of(run)[0].output == "one"
    child = next(e.agent for e in run.of("agent_spawned") if e.agent.id == "a1")
    assert list(child.tools) == ["subagent", "read_file"]
