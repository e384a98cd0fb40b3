"""Context compaction: on overflow and above the threshold, through the real HTTP path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.conftest import run_agent
from tests.scripted_server import ScriptedModel, call, error, reply
from workbench.config.settings import Settings
from workbench.engine.compaction import SUMMARY_PREFIX, split, transcript
from workbench.pb import workbench_pb2 as pb

OVERFLOW = error(
    400,
    "This model's maximum context length is 8192 tokens. However, your messages resulted in 9120 tokens.",
    code="context_length_exceeded",
    type_="invalid_request_error",
)


def msg(role: int, text: str = "", calls: tuple[str, ...] = ()) -> pb.Message:
    m = pb.Message(role=role, text=text)  # type: ignore[arg-type]
    for c in calls:
        m.tool_calls.append(pb.ToolCall(id=c, name="read_file", arguments='{"path": "x"}'))
    return m


def result(call_id: str) -> pb.Message:
    return pb.Message(role=pb.ROLE_TOOL, tool_result=pb.ToolResult(call_id=call_id, name="read_file", output="x"))


def conversation() -> list[pb.Message]:
    return [
        msg(pb.ROLE_SYSTEM, "system"),
        msg(pb.ROLE_USER, "task"),
        msg(pb.ROLE_ASSISTANT, "one", ("c1", "c2")),
        result("c1"),
        result("c2"),
        msg(pb.ROLE_ASSISTANT, "", ("c3",)),
        result("c3"),
        msg(pb.ROLE_USER, "[Inbox] child done"),
        msg(pb.ROLE_ASSISTANT, "three", ("c4",)),
        result("c4"),
    ]


def assert_pairs(wire: list[dict[str, Any]]) -> None:
    """Every tool message answers a call of the assistant message before it, and every call is answered."""
    pending: list[str] = []
    for m in wire:
        if m["role"] == "tool":
            assert m["tool_call_id"] in pending
            pending.remove(m["tool_call_id"])
        else:
            assert not pending, f"calls {pending} have no result"
            pending = [c["id"] for c in m.get("tool_calls") or []]
    assert not pending


# --- the cut ---------------------------------------------------------------------------------


def test_split_keeps_the_system_prompt_and_the_last_turns_with_their_results() -> None:
    parts = split(conversation(), keep_turns=2)
    assert [m.text for m in parts.system] == ["system"]
    assert [m.text or m.tool_result.call_id for m in parts.older] == ["task", "one", "c1", "c2"]
    # the Inbox message just before the last turn goes with it; results stay after their call
    assert [m.text or m.tool_result.call_id for m in parts.recent] == ["", "c3", "[Inbox] child done", "three", "c4"]


def test_split_never_cuts_at_a_tool_result() -> None:
    messages = conversation()
    for keep in range(0, 5):
        parts = split(messages, keep)
        assert parts.system + parts.older + parts.recent == messages
        if parts.recent:
            assert parts.recent[0].role != pb.ROLE_TOOL
    assert split(messages, 1).recent[0].text == "[Inbox] child done"
    assert split(messages, 0).recent == []
    assert split(messages[:2], 2).older == []  # the prompt alone: nothing older


def test_transcript_shows_calls_with_results_and_cuts_long_items() -> None:
    messages = conversation()[1:5]
    messages[3].tool_result.output = "y" * 10_000
    text = transcript(messages)
    assert "USER:\ntask" in text and 'TOOL CALL read_file {"path": "x"}' in text
    assert "TOOL RESULT read_file (ok):\nx" in text
    assert "characters left out" in text and len(text) < 6_000


# --- through the loop ------------------------------------------------------------------------


def three_tool_turns(workspace: Path) -> list[dict[str, Any]]:
    for name in "abc":
        (workspace / f"{name}.txt").write_text(f"contents of {name}\n")
    return [reply(f"reading {n}", call("read_file", path=f"{n}.txt", call_id=f"call_{n}")) for n in "abc"]


def summarizer(seen: list[dict[str, Any]]) -> Any:
    def answer(body: dict[str, Any]) -> dict[str, Any]:
        seen.append(body)
        return reply("The person asked to read three files; a.txt holds 'contents of a'.", usage=(50, 20))

    return answer


async def test_overflow_compacts_then_the_call_is_made_again(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    seen: list[dict[str, Any]] = []
    scripted_model.add(*three_tool_turns(workspace), OVERFLOW, summarizer(seen), reply("done"))
    run = await run_agent(settings, "read the three files")
    assert run.outcome.status == pb.RUN_STATUS_FINISHED and run.outcome.text == "done"
    assert len(scripted_model.requests) == 6
    # the summary request: no tools, a transcript of the older turns
    (summary_request,) = seen
    assert "tools" not in summary_request
    assert "contents of a" in summary_request["messages"][1]["content"]
    # the call made again: system prompt, the summary, then the last two turns with their results
    again = scripted_model.requests[5]["messages"]
    assert again[0]["role"] == "system" and again[0] == scripted_model.requests[0]["messages"][0]
    assert again[1]["role"] == "user" and again[1]["content"].startswith(SUMMARY_PREFIX)
    assert "a.txt holds 'contents of a'" in again[1]["content"]
    assert [m.get("tool_call_id") for m in again[2:]] == [None, "call_b", None, "call_c"]
    assert_pairs(again)
    (compaction,) = run.of("compaction")
    assert compaction.messages_before == 8 and compaction.messages_after == 6
    assert "context window" in compaction.reason and compaction.tokens_before > 0
    (summary,) = [m for m in run.of("message") if m.text.startswith(SUMMARY_PREFIX)]
    assert summary.role == pb.ROLE_USER and summary.author == pb.AUTHOR_WORKBENCH
    kinds = run.kinds()
    assert kinds.index("compaction") < len(kinds) - 1 - kinds[::-1].index("message")
    # the summary call's tokens count as usage: 3 turns + summary + the answer
    assert run.outcome.usage.calls == 5 and run.outcome.usage.input_tokens == 4 * 10 + 50


async def test_a_second_overflow_fails_the_run_clearly(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.add(*three_tool_turns(workspace), OVERFLOW, summarizer([]), OVERFLOW, reply("never"))
    run = await run_agent(settings, "read the three files")
    assert run.outcome.status == pb.RUN_STATUS_FAILED
    assert len(scripted_model.requests) == 6
    assert "still too long for the model after compaction" in run.outcome.reason
    assert len(run.of("compaction")) == 1


async def test_overflow_with_nothing_older_to_summarize_fails(
    settings: Settings, scripted_model: ScriptedModel
) -> None:
    scripted_model.add(OVERFLOW, reply("never"))
    run = await run_agent(settings, "x" * 100)
    assert run.outcome.status == pb.RUN_STATUS_FAILED
    assert len(scripted_model.requests) == 1
    assert "context window" in run.outcome.reason and "nothing older to summarize" in run.outcome.reason


async def test_overflow_of_the_summary_request_fails_clearly(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.add(*three_tool_turns(workspace), OVERFLOW, OVERFLOW)
    run = await run_agent(settings, "read the three files")
    assert run.outcome.status == pb.RUN_STATUS_FAILED
    assert "too long even to summarize" in run.outcome.reason


async def test_compacts_above_the_threshold_of_a_known_window(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    settings.model = "openai/gpt-4o-mini"  # litellm knows its window (128k) and its price
    settings.compact_threshold = 0.0001  # about 13 tokens: compact as soon as there are older turns
    seen: list[dict[str, Any]] = []
    scripted_model.add(*three_tool_turns(workspace), summarizer(seen), reply("done"))
    run = await run_agent(settings, "read the three files")
    assert run.outcome.status == pb.RUN_STATUS_FINISHED
    assert len(scripted_model.requests) == 5 and len(seen) == 1
    (compaction,) = run.of("compaction")
    assert "over 0% of the model's 128,000-token window" in compaction.reason
    final = scripted_model.requests[4]["messages"]
    assert final[1]["content"].startswith(SUMMARY_PREFIX)
    assert_pairs(final)


async def test_unknown_window_compacts_only_on_overflow(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    settings.compact_threshold = 0.0001  # would compact at once if the window of openai/scripted were known
    scripted_model.add(*three_tool_turns(workspace), reply("done"))
    run = await run_agent(settings, "read the three files")
    assert run.outcome.status == pb.RUN_STATUS_FINISHED
    assert not run.of("compaction") and len(scripted_model.requests) == 4


def test_prompt_tokens_uses_the_providers_count_and_estimates_the_rest() -> None:
    from workbench.engine.compaction import prompt_tokens

    user = pb.Message(role=pb.ROLE_USER, text="word " * 1000)
    assert 1200 < prompt_tokens([user], []) < 1300  # before any reply: about 4 characters a token
    answered = pb.Message(role=pb.ROLE_ASSISTANT, text="ok")
    answered.usage.input_tokens, answered.usage.output_tokens = 5000, 20
    tool = pb.Message(role=pb.ROLE_TOOL, tool_result=pb.ToolResult(call_id="c", output="x" * 400))
    assert 5020 + 100 <= prompt_tokens([user, answered, tool], []) < 5020 + 130
