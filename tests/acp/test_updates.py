"""Workbench's events as ACP updates (workbench/acp/updates.py), the prompt's blocks as text and the
modes (workbench/acp/agent.py): pure mappings, no process."""

from __future__ import annotations

import json
from pathlib import Path

from acp.helpers import embedded_text_resource, image_block, resource_block, resource_link_block, text_block

from workbench.acp.agent import MODES, prompt_text
from workbench.acp.updates import Updates, fenced, stop_reason, title
from workbench.config.choices import APPROVAL_MODES
from workbench.pb import workbench_pb2 as pb


def event(agent: str = "main", **kind: object) -> pb.Event:
    return pb.Event(session_id="s", agent_id=agent, **kind)  # type: ignore[arg-type]


def test_the_modes_are_the_approval_modes() -> None:
    assert sorted(MODES) == sorted(APPROVAL_MODES)


def test_text_streamed_then_the_rest_of_the_message_once() -> None:
    updates = Updates(Path("/ws"))
    sent = updates.of(event(text_delta=pb.TextDelta(text="Hello ")))
    sent += updates.of(event(message=pb.Message(role=pb.ROLE_ASSISTANT, text="Hello world")))
    sent += updates.of(event(message=pb.Message(role=pb.ROLE_ASSISTANT, text="Unstreamed")))
    assert [u.content.text for u in sent] == ["Hello ", "world", "Unstreamed"]
    assert updates.of(event(agent="a1", text_delta=pb.TextDelta(text="child"))) == []  # a subagent's words stay in it


def test_a_subagents_call_names_it_and_carries_its_id() -> None:
    updates = Updates(Path("/ws"))
    updates.of(event(agent_spawned=pb.AgentSpawned(agent=pb.AgentInfo(id="a1", name="tester"))))
    call = pb.ToolCall(id="wb_1", name="bash", arguments=json.dumps({"command": "make   test"}))
    [start] = updates.of(event(agent="a1", tool_call_started=pb.ToolCallStarted(call=call)))
    assert start.title == "[tester] bash: make test" and start.kind == "execute" and start.status == "pending"
    assert start.field_meta == {"workbench": {"agent_id": "a1"}}


def test_a_failed_call_shows_its_output_then_its_cause() -> None:
    updates = Updates(Path("/ws"))
    call = pb.ToolCall(id="wb_1", name="bash", arguments=json.dumps({"command": "make"}))
    updates.of(event(tool_call_started=pb.ToolCallStarted(call=call)))
    [running] = updates.of(event(guard_decision=pb.GuardDecision(call_id="wb_1", verdict=pb.GUARD_VERDICT_RECORD)))
    assert running.status == "in_progress"
    result = pb.ToolResult(call_id="wb_1", name="bash", output="cc: error\n", error="exit 2", is_error=True)
    [end] = updates.of(event(tool_call_finished=pb.ToolCallFinished(result=result)))
    assert end.status == "failed"
    assert [c.content.text for c in end.content] == ["```\ncc: error\n```", "Error: exit 2"]


def test_an_edit_shows_its_diff_at_the_files_absolute_path() -> None:
    updates = Updates(Path("/ws"))
    args = {"path": "a.go", "old_text": "return true", "new_text": "return false"}
    call = pb.ToolCall(id="wb_1", name="edit_file", arguments=json.dumps(args))
    [start] = updates.of(event(tool_call_started=pb.ToolCallStarted(call=call)))
    assert start.locations[0].path == "/ws/a.go" and start.kind == "edit"
    result = pb.ToolResult(call_id="wb_1", name="edit_file", output="edited")
    [end] = updates.of(event(tool_call_finished=pb.ToolCallFinished(result=result)))
    [diff] = end.content
    assert (diff.type, diff.path, diff.old_text, diff.new_text) == ("diff", "/ws/a.go", "return true", "return false")


def test_prompt_blocks_become_the_text_the_model_reads() -> None:
    blocks = [
        text_block("look at"),
        resource_link_block("auth.go", "file:///ws/auth.go"),
        resource_block(embedded_text_resource("file:///ws/a.txt", "hello")),
        image_block("AAAA", "image/png"),
    ]
    text = prompt_text(blocks)
    assert text.startswith("look at\n[auth.go](file:///ws/auth.go)\n<context uri='file:///ws/a.txt'>\nhello\n")
    assert "an image block was attached and not sent" in text


def test_fences_outlast_the_backticks_inside_and_stop_reasons() -> None:
    assert fenced("```py\nx\n```") == "````\n```py\nx\n```\n````"
    assert title(pb.ToolCall(name="ls", arguments="not json")) == "ls"
    assert stop_reason(pb.RunFinished(status=pb.RUN_STATUS_CANCELLED)) == "cancelled"
    budget = pb.RunFinished(status=pb.RUN_STATUS_BUDGET_EXHAUSTED, reason="turn limit reached (100 model calls)")
    assert stop_reason(budget) == "max_turn_requests"
    assert stop_reason(pb.RunFinished(status=pb.RUN_STATUS_FINISHED)) == "end_turn"


def test_inbox_deliveries_are_thoughts_and_usage_names_the_window() -> None:
    updates = Updates(Path("/ws"), window=128_000)
    item = pb.InboxItem(
        kind=pb.INBOX_KIND_COMPLETION, child_name="tester", status=pb.AGENT_STATUS_COMPLETED, result="all green"
    )
    [thought] = updates.of(event(inbox_item=item))
    assert thought.session_update == "agent_thought_chunk"
    assert thought.content.text == "Inbox: subagent tester completed: all green\n"
    usage = pb.UsageUpdate(
        call=pb.Usage(input_tokens=900, output_tokens=100), session_total=pb.Usage(input_tokens=5000, cost=0.25)
    )
    [used] = updates.of(event(usage_update=usage))
    assert (used.used, used.size, used.cost.amount, used.cost.currency) == (1000, 128_000, 0.25, "USD")
    assert updates.of(event(usage_update=pb.UsageUpdate()))[0].cost is None  # unknown is not 0
