"""The guard on MCP calls: by mode, by the person's read-only marks (never the server's hint), by rules on JSON."""

from __future__ import annotations

import json

import pytest

from tests.mcp.conftest import S1, probe, with_servers
from tests.scripted_server import ScriptedModel, reply
from workbench.config.mcp_servers import parse_server
from workbench.config.settings import Settings
from workbench.guard.guardrail import Guard
from workbench.mcp.manager import McpManager
from workbench.pb import workbench_pb2 as pb

RECORD, REVIEW, BLOCK = pb.GUARD_VERDICT_RECORD, pb.GUARD_VERDICT_REVIEW, pb.GUARD_VERDICT_BLOCK
LISTED = [
    {"name": "get_issue", "description": "", "inputSchema": {"type": "object"}, "readOnlyHint": True},
    {"name": "create_issue", "description": "", "inputSchema": {"type": "object"}, "readOnlyHint": True},
]


def guard(settings: Settings, mode: str, **server: object) -> Guard:
    """A guard that knows the servers' tools (as listed by a start, here set directly: no process)."""
    servers = [probe("gh", **server), parse_server("web", {"url": "https://mcp.example/mcp"})]
    settings = with_servers(settings, *servers)
    manager = McpManager(settings, settings.sessions_dir / S1, S1)
    for connection in manager.connections.values():
        connection.tools = list(LISTED)
    judged = Guard(settings, mode=mode)  # a guard_model in the settings makes its model judge
    judged.mcp = manager
    return judged


def check(g: Guard, name: str, **args: object) -> pb.GuardDecision:
    return g.check(pb.ToolCall(id="c", name=name, arguments=json.dumps(args)))


@pytest.mark.parametrize(
    ("mode", "server", "tool", "verdict"),
    [
        ("read-only", {}, "gh__create_issue", BLOCK),  # its readOnlyHint is not trusted
        ("read-only", {"read_only": ["get_*"]}, "gh__get_issue", RECORD),
        ("read-only", {"read_only": ["get_*"]}, "gh__create_issue", BLOCK),
        ("ask", {}, "gh__get_issue", REVIEW),
        ("ask", {"read_only": True}, "gh__create_issue", RECORD),
        ("auto", {}, "gh__create_issue", RECORD),  # sandboxed
        ("auto", {"sandbox": "off"}, "gh__create_issue", REVIEW),
        ("auto", {}, "web__create_issue", RECORD),  # over HTTP: runs elsewhere
    ],
)
def test_mcp_calls_by_mode(settings: Settings, mode: str, server: dict[str, object], tool: str, verdict: int) -> None:
    decision = check(guard(settings, mode, **server), tool, title="x")
    assert decision.verdict == verdict, decision.reason


def test_rules_match_the_arguments_as_compact_json(settings: Settings) -> None:
    settings.guard_allow = ['gh__create_issue:{"repo":"mine/*"*']
    settings.guard_block = ['gh__create_issue:*"label":"secret"*']
    g = guard(settings, "ask")
    assert check(g, "gh__create_issue", repo="mine/app", title="t").verdict == RECORD
    assert check(g, "gh__create_issue", repo="theirs/app", title="t").verdict == REVIEW
    blocked = check(g, "gh__create_issue", repo="mine/app", label="secret")
    assert blocked.verdict == BLOCK and "guard_block" in blocked.reason


def test_mcp_tools_count_as_changing_for_repeats_unless_marked_read_only(settings: Settings) -> None:
    """A create_issue between two identical reads is a change (the repeat check must not refuse the
    second read); the tools arrive after the loop was built, so the set is read at each question."""
    from workbench.tools.registry import Toolbox

    settings = with_servers(settings, probe("gh", read_only=["get_*"]))
    manager = McpManager(settings, settings.sessions_dir / S1, S1)
    box = Toolbox(["read_file", *manager.patterns()], manager)
    changing = box.changing()
    assert "gh__create_issue" not in changing  # not offered yet
    manager.connections["gh"].tools = list(LISTED)
    manager._changed()  # as a start or list_changed does
    assert "gh__create_issue" in changing and "gh__get_issue" not in changing and "read_file" not in changing


async def test_the_model_judge_is_asked_only_about_mcp_calls_that_can_act(
    settings: Settings, scripted_model: ScriptedModel
) -> None:
    settings.guard_model = "openai/judge"
    g = guard(settings, "auto", read_only=["get_*"])
    scripted_model.add(reply(json.dumps({"verdict": "review", "reason": "creates an issue."})))
    reading = await g.judge(pb.ToolCall(id="a", name="gh__get_issue", arguments='{"n": 1}'))
    assert reading.verdict == RECORD and scripted_model.requests == []
    acting_call = await g.judge(pb.ToolCall(id="b", name="gh__create_issue", arguments='{"title": "x"}'))
    assert acting_call.verdict == REVIEW and len(scripted_model.requests) == 1
