"""The agent loop through litellm's real HTTP path to the scripted server."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from tests.conftest import RegisterTool, provider_ids, run_agent
from tests.scripted_server import ScriptedModel, call, reply
from tests.waiting import SLEEPS, EventLog, sleep, until
from workbench.config.settings import Settings
from workbench.core.feedback import model_text
from workbench.pb import workbench_pb2 as pb


def tool_contents(request: dict) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


async def test_plain_answer(settings: Settings, scripted_model: ScriptedModel) -> None:
    scripted_model.add(reply("Hello there."))
    run = await run_agent(settings, "say hello")
    assert run.outcome.status == pb.RUN_STATUS_FINISHED
    assert run.outcome.text == "Hello there."
    assert run.outcome.usage.input_tokens == 10
    assert not run.outcome.usage.HasField("cost")  # an unknown model has no cost, not 0
    kinds = run.kinds()
    assert kinds[0] == "agent_spawned" and kinds[-1] == "agent_finished"
    assert "text_delta" in kinds and "run_finished" in kinds
    seqs = [e.seq for e in run.events]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)


async def test_tool_error_fed_back_and_model_corrects(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("alpha\n")
    scripted_model.add(
        reply("", call("read_file", path="note.txt")),
        reply("", call("read_file", path="notes.txt")),
        reply("The file says alpha."),
    )
    run = await run_agent(settings, "read the notes")
    assert run.outcome.status == pb.RUN_STATUS_FINISHED
    first, second = tool_contents(scripted_model.requests[2])
    assert "Error:" in first and "note.txt" in first
    assert "alpha" in second and "Error" not in second


async def test_invalid_json_arguments(settings: Settings, scripted_model: ScriptedModel) -> None:
    scripted_model.add(reply("", call("read_file", '{"path": "a.txt"')), reply("ok"))
    run = await run_agent(settings, "go")
    (content,) = tool_contents(scripted_model.requests[1])
    assert "not valid JSON" in content and '"path"' in content  # names what was expected: the schema
    assert run.results()[0].is_error


async def test_unknown_tool_and_bad_argument_types(settings: Settings, scripted_model: ScriptedModel) -> None:
    scripted_model.add(
        reply("", call("delete_everything", path="/"), call("read_file", path=3, bogus=True)),
        reply("ok"),
    )
    await run_agent(settings, "go")
    unknown, invalid = tool_contents(scripted_model.requests[1])
    assert "unknown tool 'delete_everything'" in unknown and "read_file" in unknown
    assert "'path' must be string" in invalid and "unknown argument 'bogus'" in invalid


async def test_every_call_has_one_result_in_call_order(settings: Settings, scripted_model: ScriptedModel) -> None:
    calls = [call("read_file", path=f"f{i}.txt", call_id=f"c{i}") for i in range(4)]
    scripted_model.add(reply("", *calls), reply("done"))
    await run_agent(settings, "go")
    tool_messages = [m for m in scripted_model.requests[1]["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_messages] == ["c0", "c1", "c2", "c3"]


async def test_third_identical_failure_gets_reminder(settings: Settings, scripted_model: ScriptedModel) -> None:
    for _ in range(3):
        scripted_model.add(reply("", call("read_file", path="missing.txt")))
    scripted_model.add(reply("giving up"))
    await run_agent(settings, "go")
    contents = [tool_contents(r)[-1] for r in scripted_model.requests[1:4]]
    assert "Reminder" not in contents[0] and "Reminder" not in contents[1]
    assert contents[2].count("Reminder") == 1 and "3 times" in contents[2]


async def test_max_turns_ends_budget_exhausted(settings: Settings, scripted_model: ScriptedModel) -> None:
    settings.max_turns = 2
    for _ in range(3):
        scripted_model.add(reply("", call("read_file", path="x")))
    run = await run_agent(settings, "go")
    assert run.outcome.status == pb.RUN_STATUS_BUDGET_EXHAUSTED
    assert len(scripted_model.requests) == 2
    assert "turn limit" in run.outcome.reason


async def test_token_budget_ends_run(settings: Settings, scripted_model: ScriptedModel) -> None:
    settings.max_tokens = 20
    scripted_model.add(reply("", call("read_file", path="x"), usage=(15, 10)), reply("never"))
    run = await run_agent(settings, "go")
    assert run.outcome.status == pb.RUN_STATUS_BUDGET_EXHAUSTED
    assert "25 of 20 tokens" in run.outcome.reason
    assert len(scripted_model.requests) == 1
    assert len(run.results()) == 1  # the call that was made still got its result


async def test_model_failure_ends_run_failed(settings: Settings, scripted_model: ScriptedModel) -> None:
    run = await run_agent(settings, "go")  # the empty script answers 400
    assert run.outcome.status == pb.RUN_STATUS_FAILED
    assert "no reply left" in run.outcome.reason


async def test_assistant_text_and_parallel_calls_in_one_message(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("A\n")
    (workspace / "b.txt").write_text("B\n")
    scripted_model.add(
        reply("Reading both.", call("read_file", path="a.txt"), call("read_file", path="b.txt")),
        reply("A and B"),
    )
    run = await run_agent(settings, "go")
    assistant = next(m for m in run.of("message") if m.role == pb.ROLE_ASSISTANT)
    assert assistant.text == "Reading both." and len(assistant.tool_calls) == 2
    sent = scripted_model.requests[1]["messages"]
    assert [m["role"] for m in sent[-3:]] == ["assistant", "tool", "tool"]
    assert json.loads(sent[-3]["tool_calls"][1]["function"]["arguments"]) == {"path": "b.txt"}


# --- tools defined by the tests, registered for each test under names no real tool uses ------

from workbench.core.feedback import Feedback  # noqa: E402
from workbench.tools.registry import ToolContext  # noqa: E402


async def _stream_then_fail(ctx: ToolContext) -> str:
    """Print two lines, then fail."""
    ctx.emit("step 1 done\n")
    ctx.emit("step 2 done\n")
    try:
        raise ConnectionResetError("peer went away")
    except ConnectionResetError as err:
        raise Feedback("upload failed; check the server and call again") from err


async def _finish(summary: str, ctx: ToolContext) -> pb.ToolResult:
    """End the run.

    Args:
        summary: the final words
    """
    return pb.ToolResult(output=summary, terminate=True)


async def _peek_started(ctx: ToolContext) -> str:
    """Say whether this call's start is committed in the event log (read by another connection)."""
    import sqlite3

    with sqlite3.connect(ctx.settings.db_path) as db:
        rows = db.execute("SELECT data FROM events WHERE kind = 'tool_call_started'").fetchall()
    ids = {pb.Event.FromString(data).tool_call_started.call.id for (data,) in rows}
    return "committed" if ctx.call_id in ids else "not committed"


async def _huge(ctx: ToolContext) -> str:
    """Print a lot."""
    return "".join(f"line {i}\n" for i in range(20_000))


@pytest.fixture(autouse=True)
def _tools(register_tool: RegisterTool) -> None:
    register_tool(sleep, name="test_sleep")
    register_tool(_stream_then_fail, name="test_stream_then_fail")
    register_tool(_finish, name="test_finish")
    register_tool(_peek_started, name="test_peek_started")
    register_tool(_huge, name="test_huge")
    register_tool(_base_exception, name="test_base_exception")
    register_tool(_stubborn, name="test_stubborn")


async def test_a_tools_start_is_committed_before_the_tool_runs(
    settings: Settings, scripted_model: ScriptedModel
) -> None:
    """Records of a run are grouped into one commit per event-loop pass (store.GROUPED_KINDS), but a
    tool's ToolCallStarted is durable before anything of the call runs: killed mid-tool, the log
    shows the call (rebuilt as INTERRUPTED), with or without a guard deciding first."""
    scripted_model.add(reply("", call("test_peek_started")), reply("done"))
    run = await run_agent(settings, "go", tools=["test_peek_started"])
    (finished,) = [e.tool_call_finished.result for e in run.events if e.HasField("tool_call_finished")]
    assert finished.output == "committed"


async def test_partial_output_and_cause_each_once(settings: Settings, scripted_model: ScriptedModel) -> None:
    scripted_model.add(reply("", call("test_stream_then_fail")), reply("noted"))
    run = await run_agent(settings, "go", tools=["test_stream_then_fail"])
    (content,) = tool_contents(scripted_model.requests[1])
    assert content == "step 1 done\nstep 2 done\nError: upload failed; check the server and call again"
    assert run.of("tool_output")[0].text == "step 1 done\nstep 2 done\n"  # streamed, batched into one chunk
    assert not run.of("defect")  # Feedback is not a defect


async def test_terminate(settings: Settings, scripted_model: ScriptedModel) -> None:
    scripted_model.add(reply("finishing", call("test_finish", summary="all good")))
    run = await run_agent(settings, "go", tools=["test_finish"])
    assert run.outcome.status == pb.RUN_STATUS_TERMINATED
    assert len(scripted_model.requests) == 1


async def test_parallel_tool_calls_overlap(settings: Settings, scripted_model: ScriptedModel) -> None:
    SLEEPS.clear()
    scripted_model.add(reply("", call("test_sleep", seconds=0.5), call("test_sleep", seconds=0.5)), reply("ok"))
    started = time.monotonic()
    await run_agent(settings, "go", tools=["test_sleep"])
    (_, s1, e1), (_, s2, e2) = SLEEPS
    assert s2 < e1 and s1 < e2  # the two calls ran at the same time
    assert time.monotonic() - started < 5


async def test_cancel_mid_tool_keeps_a_result_for_every_call(settings: Settings, scripted_model: ScriptedModel) -> None:
    from workbench.engine.agents import AgentTree
    from workbench.engine.store import Store

    scripted_model.add(
        reply("", call("test_sleep", seconds=30, call_id="slow"), call("test_sleep", seconds=0, call_id="fast"))
    )
    store = Store(settings.db_path)
    session = store.create_session(settings.workspace, settings.model, "go")
    log = EventLog()
    events = log.events
    store.subscribe(log, session)
    tree = AgentTree(settings, store, session)
    task = asyncio.create_task(tree.run_root("go", ["test_sleep"]))
    await log.until_kind("tool_call_finished")  # the fast call is done; the slow one sleeps
    cancelled_at = time.monotonic()
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    assert time.monotonic() - cancelled_at < 2
    messages = [e.message for e in events if e.WhichOneof("kind") == "message"]
    ids = provider_ids(messages)
    results = {ids[m.tool_result.call_id]: m.tool_result for m in messages if m.role == pb.ROLE_TOOL}
    assert set(results) == {"slow", "fast"}
    assert results["slow"].is_error and "interrupted" in results["slow"].error
    assert not results["fast"].is_error
    finished = [e.run_finished for e in events if e.WhichOneof("kind") == "run_finished"]
    assert finished[-1].status == pb.RUN_STATUS_CANCELLED
    # the stored log has the same: a resumed session replays a valid conversation
    stored = [e for e in store.events(session) if e.WhichOneof("kind") == "message"]
    assert len(stored) == len(messages)
    store.close()


async def test_oversized_output_is_cut_and_saved(settings: Settings, scripted_model: ScriptedModel) -> None:
    settings.output_limit = 2_000
    scripted_model.add(reply("", call("test_huge", call_id="big")), reply("ok"))
    run = await run_agent(settings, "go", tools=["test_huge"])
    (result,) = run.results()
    assert len(result.output) < 2_600
    assert result.output.startswith("line 0\n") and result.output.endswith("line 19999\n")
    saved = Path(result.metadata["saved_output"])
    assert saved.read_text() == "".join(f"line {i}\n" for i in range(20_000))
    assert str(saved) in model_text(result)


class _ToolBug(BaseException):
    """Not an Exception: a tool that raises it must still get a result."""


async def _base_exception(kind: str, ctx: ToolContext) -> str:
    """Raise a BaseException that is not an Exception.

    Args:
        kind: "bug" (a BaseException subclass) or "cancelled" (a CancelledError no one asked for)
    """
    await asyncio.sleep(0.05)
    if kind == "cancelled":
        raise asyncio.CancelledError()
    raise _ToolBug("tool bug")


def _tool_tasks() -> set[asyncio.Task]:
    """Live tasks running a tool call of the loop."""
    return {t for t in asyncio.all_tasks() if not t.done() and "_run_tool" in repr(t.get_coro())}


async def test_a_tool_raising_a_base_exception_is_an_error_result(
    settings: Settings, scripted_model: ScriptedModel
) -> None:
    scripted_model.add(
        reply(
            "",
            call("test_base_exception", kind="bug", call_id="bug"),
            call("test_base_exception", kind="cancelled", call_id="cancelled"),
            call("test_sleep", seconds=0.3, call_id="slow"),
        ),
        reply("carried on"),
    )
    run = await run_agent(settings, "go", tools=["test_base_exception", "test_sleep"])
    assert run.outcome.status == pb.RUN_STATUS_FINISHED and run.outcome.text == "carried on"
    ids = provider_ids(run.of("message"))
    results = {ids[r.call_id]: r for r in run.results()}
    assert set(results) == {"bug", "cancelled", "slow"}
    assert results["bug"].is_error and "tool bug" in results["bug"].error
    assert results["cancelled"].is_error and not results["slow"].is_error
    assert tool_contents(scripted_model.requests[1])[2] == "slept 0.3"
    assert len(run.of("tool_call_finished")) == 3
    assert not _tool_tasks()


STUBBORN_SECONDS = 3.0


async def _stubborn(ctx: ToolContext) -> str:
    """Run for a few seconds whatever happens: it swallows every cancel."""
    deadline = time.monotonic() + STUBBORN_SECONDS
    while (left := deadline - time.monotonic()) > 0:
        try:
            await asyncio.sleep(left)
        except asyncio.CancelledError:
            pass
    return "finished anyway"


@pytest.mark.slow
async def test_cancel_with_a_tool_that_ignores_it_ends_in_time_and_twice_is_fine(
    settings: Settings, scripted_model: ScriptedModel
) -> None:
    from workbench.engine.agents import AgentTree
    from workbench.engine.store import Store

    scripted_model.add(reply("", call("test_stubborn", call_id="slow"), call("test_sleep", seconds=0, call_id="fast")))
    store = Store(settings.db_path)
    session = store.create_session(settings.workspace, settings.model, "go")
    log = EventLog()
    events = log.events
    store.subscribe(log, session)
    tree = AgentTree(settings, store, session)
    task = asyncio.create_task(tree.run_root("go", ["test_stubborn", "test_sleep"]))
    await log.until_kind("tool_call_finished")
    started = time.monotonic()
    task.cancel()
    await asyncio.sleep(0.1)  # the person's second key press, while the tools clean up (a timing, not a wait)
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    assert time.monotonic() - started < 2
    ids = provider_ids([e.message for e in events if e.WhichOneof("kind") == "message"])
    results = {
        ids[e.message.tool_result.call_id]: e.message.tool_result
        for e in events
        if e.WhichOneof("kind") == "message" and e.message.role == pb.ROLE_TOOL
    }
    assert set(results) == {"slow", "fast"} and "interrupted" in results["slow"].error
    assert [e.run_finished.status for e in events if e.WhichOneof("kind") == "run_finished"] == [
        pb.RUN_STATUS_CANCELLED
    ]
    assert [e.agent_finished.status for e in events if e.WhichOneof("kind") == "agent_finished"] == [
        pb.AGENT_STATUS_CANCELLED
    ]
    # the stubborn tool ends at last: its result is not recorded
    await until(lambda: not _tool_tasks(), STUBBORN_SECONDS + 2, "the stubborn tool to end")
    await asyncio.sleep(0.1)  # what it would record is committed by then: the check is that nothing came
    finished = [e.tool_call_finished.result for e in events if e.WhichOneof("kind") == "tool_call_finished"]
    assert sorted(ids[r.call_id] for r in finished) == ["fast", "slow"]
    store.close()


async def test_a_bug_in_the_machinery_still_leaves_every_call_a_result(
    settings: Settings, scripted_model: ScriptedModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    from workbench.engine.agents import AgentTree
    from workbench.engine.store import Store
    from workbench.tools.registry import Toolbox

    real_invoke = Toolbox.invoke

    async def buggy_invoke(self: Toolbox, call_: pb.ToolCall, ctx: ToolContext) -> pb.ToolResult:
        if call_.provider_id == "bug":
            raise RuntimeError("bug in the machinery")
        return await real_invoke(self, call_, ctx)

    monkeypatch.setattr(Toolbox, "invoke", buggy_invoke)
    scripted_model.add(
        reply("", call("test_sleep", seconds=0, call_id="bug"), call("test_sleep", seconds=0.2, call_id="ok"))
    )
    store = Store(settings.db_path)
    session = store.create_session(settings.workspace, settings.model, "go")
    tree = AgentTree(settings, store, session)
    with pytest.raises(RuntimeError, match="bug in the machinery"):
        await tree.run_root("go", ["test_sleep"])
    messages = [e.message for e in store.events(session) if e.WhichOneof("kind") == "message"]
    ids = provider_ids(messages)
    results = {ids[m.tool_result.call_id]: m.tool_result for m in messages if m.role == pb.ROLE_TOOL}
    assert set(results) == {"bug", "ok"}
    assert results["bug"].is_error and "bug in the machinery" in results["bug"].error
    assert results["ok"].output == "slept 0.2"
    finished = [
        e.tool_call_finished.result.call_id
        for e in store.events(session)
        if e.WhichOneof("kind") == "tool_call_finished"
    ]
    assert sorted(ids[c] for c in finished) == ["bug", "ok"]
    store.close()
