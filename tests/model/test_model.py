"""The model gateway through litellm's real HTTP path: provider shapes, broken streams, usage, budgets."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.conftest import RegisterTool
from tests.scripted_server import ScriptedModel, call, cut, reply
from workbench.cli.main import main
from workbench.config.settings import Settings
from workbench.model.gateway import (
    FIRST_CALL_MODULES,
    CallDeadlineExceeded,
    ModelClient,
    ModelSpec,
    StreamIncomplete,
    add_usage,
    context_window,
    litellm,
    messages_to_wire,
    provider_stream,
    usage_from_wire,
)
from workbench.model.retry import classify
from workbench.model.stream import ReplyAssembler
from workbench.pb import workbench_pb2 as pb
from workbench.tools.registry import ToolContext

PROMPT = [pb.Message(role=pb.ROLE_USER, text="hi")]


def client(server: ScriptedModel, model: str = "openai/scripted") -> ModelClient:
    return ModelClient(ModelSpec(model, api_base=server.url, api_key="sk-test", timeout=10))


# --- provider shapes -------------------------------------------------------------------------


async def test_text_and_parallel_streamed_tool_calls_in_one_message(scripted_model: ScriptedModel) -> None:
    long_args = {"path": "src/" + "deep/" * 20 + "file.py", "offset": 10}  # streamed in many pieces
    scripted_model.add(
        reply(
            "Reading both files.", call("read_file", long_args, call_id="c1"), call("ls", {"path": "."}, call_id="c2")
        )
    )
    deltas: list[str] = []
    message = await client(scripted_model).complete(PROMPT, [], deltas.append)
    assert message.role == pb.ROLE_ASSISTANT and message.text == "Reading both files."
    assert "".join(deltas) == "Reading both files."
    assert [(c.provider_id, c.name) for c in message.tool_calls] == [("c1", "read_file"), ("c2", "ls")]
    assert json.loads(message.tool_calls[0].arguments) == long_args
    assert json.loads(message.tool_calls[1].arguments) == {"path": "."}
    assert scripted_model.requests[0]["stream"] is True


async def test_an_openai_compatible_stream_is_read_from_the_sdk_under_litellms_wrapper(
    scripted_model: ScriptedModel,
) -> None:
    """The fast path (model.provider_stream) is taken for OpenAI-compatible providers, so litellm's
    per-chunk wrapper and its end-of-stream logging are skipped; usage still arrives. If a litellm
    upgrade moves the SDK's stream, this fails rather than silently falling back."""
    spec = ModelSpec("openai/scripted", api_base=scripted_model.url, api_key="sk-test", timeout=10)
    scripted_model.add(reply("one two", usage=(7, 3)))
    response = await litellm().acompletion(**ModelClient(spec).request(PROMPT, []))
    raw = provider_stream(response)
    assert raw is not None
    assembler = ReplyAssembler()
    async for chunk in raw:
        assembler.take(chunk)
    assert assembler.finished and "".join(assembler.text) == "one two"
    assert (assembler.usage.prompt_tokens, assembler.usage.completion_tokens) == (7, 3)
    scripted_model.add(reply("again", usage=(7, 3)))
    message = await ModelClient(spec).complete(PROMPT, [])
    assert message.text == "again" and (message.usage.input_tokens, message.usage.output_tokens) == (7, 3)


def test_the_demo_model_keeps_litellms_stream_wrapper() -> None:
    class Wrapped:  # a custom provider's stream: no OpenAI SDK stream under it
        completion_stream = iter(())

    assert provider_stream(Wrapped()) is None and provider_stream(object()) is None


def test_the_modules_warmed_for_litellms_first_call_exist_in_the_pinned_release() -> None:
    """model.FIRST_CALL_MODULES are imported in the preload thread; a renamed one would only be
    skipped there (and the first call would pay for it again), so the pinned litellm must have each."""
    import importlib

    for name in FIRST_CALL_MODULES:
        importlib.import_module(name)


def test_request_turns_every_retry_off() -> None:
    kwargs = ModelClient(ModelSpec("openai/x")).request(PROMPT, [])
    assert kwargs["num_retries"] == 0 and kwargs["max_retries"] == 0
    lm = litellm()
    assert lm.num_retries == 0 and lm.drop_params is False  # drop_params would re-send a 422


async def test_a_cut_stream_raises_stream_incomplete_with_the_partial_size(scripted_model: ScriptedModel) -> None:
    scripted_model.add(cut("half a sen"))
    deltas: list[str] = []
    with pytest.raises(StreamIncomplete) as broken:
        await client(scripted_model).complete(PROMPT, [], deltas.append)
    assert broken.value.partial_chars == len("half a sen") == len("".join(deltas))
    # the connection closed before a finish reason: the SDK's stream just ends, so the message says so
    assert "ended without a finish reason after 10 chars" in str(broken.value)
    assert classify(broken.value).action == "retry"


# --- usage and cost --------------------------------------------------------------------------


async def test_known_model_has_cost_from_the_local_table(scripted_model: ScriptedModel) -> None:
    scripted_model.add(reply("ok", usage=(1000, 500)))
    message = await client(scripted_model, "openai/gpt-4o-mini").complete(PROMPT, [])
    assert (message.usage.input_tokens, message.usage.output_tokens, message.usage.calls) == (1000, 500, 1)
    prompt_cost, completion_cost = litellm().cost_per_token(
        model="openai/gpt-4o-mini", prompt_tokens=1000, completion_tokens=500
    )
    assert message.usage.HasField("cost") and message.usage.cost == pytest.approx(prompt_cost + completion_cost)
    assert message.usage.cost > 0


async def test_prompt_tokens_read_from_the_cache_are_priced_as_cache_reads(scripted_model: ScriptedModel) -> None:
    """800 of 1,000 prompt tokens came from the provider's cache: litellm's cache-read price for
    them (a tenth to a half of the input price), not the full input price."""
    scripted_model.add(reply("ok", usage=(1000, 500), cached=800))
    message = await client(scripted_model, "openai/gpt-4o-mini").complete(PROMPT, [])
    assert message.usage.cache_read_tokens == 800
    prompt_cost, completion_cost = litellm().cost_per_token(
        model="openai/gpt-4o-mini", prompt_tokens=1000, completion_tokens=500, cache_read_input_tokens=800
    )
    full_prompt, _ = litellm().cost_per_token(model="openai/gpt-4o-mini", prompt_tokens=1000, completion_tokens=500)
    assert prompt_cost < full_prompt
    assert message.usage.cost == pytest.approx(prompt_cost + completion_cost)


async def test_unknown_model_has_tokens_and_no_cost(scripted_model: ScriptedModel) -> None:
    scripted_model.add(reply("ok", usage=(12, 3)))
    message = await client(scripted_model, "openai/my-local-model").complete(PROMPT, [])
    assert (message.usage.input_tokens, message.usage.output_tokens) == (12, 3)
    assert not message.usage.HasField("cost")  # unknown, not 0


def test_totals_keep_unknown_cost_unknown() -> None:
    total = pb.Usage()
    add_usage(total, usage_from_wire(None, "openai/unknown"))
    assert total.calls == 1 and not total.HasField("cost")
    add_usage(total, pb.Usage(input_tokens=5, cost=0.25, calls=1))
    add_usage(total, pb.Usage(input_tokens=5, calls=1))
    assert total.input_tokens == 10 and total.calls == 3 and total.cost == 0.25


def test_context_window() -> None:
    assert context_window("openai/gpt-4o-mini") == 128_000
    assert context_window("openai/scripted") == 0  # unknown: compaction only on overflow
    assert context_window("workbench_demo/scripted") == 0


# --- budgets through `workbench run` ----------------------------------------------------------


def run_cli(server: ScriptedModel, tmp_path: Path, *flags: str) -> int:
    workspace = tmp_path / "cli-ws"
    workspace.mkdir(exist_ok=True)
    return main(
        [
            "run",
            "read a file",
            "--api-base",
            server.url,
            "--api-key",
            "sk-test",
            "--workspace",
            str(workspace),
            "--data-dir",
            str(tmp_path / "cli-data"),
            *flags,
        ]
    )


@pytest.mark.tmux
def test_max_cost_ends_the_run_budget_exhausted_exit_3(
    scripted_model: ScriptedModel, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scripted_model.add(reply("", call("read_file", path="a.txt"), usage=(1000, 500)), reply("never"))
    code = run_cli(scripted_model, tmp_path, "--model", "openai/gpt-4o-mini", "--max-cost", "0.0001")
    assert code == 3
    assert len(scripted_model.requests) == 1
    assert "budget exhausted: cost budget exhausted" in capsys.readouterr().err


@pytest.mark.tmux
def test_max_tokens_ends_the_run_budget_exhausted_exit_3(
    scripted_model: ScriptedModel, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scripted_model.add(reply("", call("read_file", path="a.txt"), usage=(800, 300)), reply("never"))
    code = run_cli(scripted_model, tmp_path, "--model", "openai/scripted", "--max-tokens", "1000")
    assert code == 3
    assert len(scripted_model.requests) == 1
    assert "token budget exhausted: 1,100 of 1,000 tokens used" in capsys.readouterr().err


@pytest.mark.tmux
def test_a_failed_model_call_exits_1_with_one_line(
    scripted_model: ScriptedModel, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.scripted_server import error

    scripted_model.add(error(401, "Incorrect API key provided"))
    code = run_cli(scripted_model, tmp_path, "--model", "openai/scripted")
    assert code == 1
    err = capsys.readouterr().err.strip().splitlines()
    line = next(line for line in err if line.startswith("workbench: failed:"))
    assert line.startswith("workbench: failed: model call failed: authentication failed (401)")
    assert "OPENAI_API_KEY" in line


def test_preload_turns_the_gc_back_on_when_litellm_is_ready() -> None:
    import gc

    from workbench.model.gateway import preload

    thread = preload()
    thread.join(timeout=60)
    assert not thread.is_alive() and gc.isenabled()


# --- tool-call ids: ours in the session, the provider's on the wire ----------------------------


async def _big(ctx: ToolContext, tag: str) -> str:
    """Print many lines, each naming `tag`.

    Args:
        tag: a word to repeat
    """
    return "".join(f"{tag} line {i}\n" for i in range(5_000))


async def test_reused_provider_ids_keep_every_saved_output(
    settings: Settings, scripted_model: ScriptedModel, register_tool: RegisterTool
) -> None:
    """A server that numbers ids per reply (call_0 every turn): each turn's saved output stays its own."""
    from tests.conftest import run_agent

    register_tool(_big, name="test_model_big")
    settings.output_limit = 2_000
    scripted_model.add(
        reply("", call("test_model_big", tag="first", call_id="call_0")),
        reply("", call("test_model_big", tag="second", call_id="call_0")),
        reply("done"),
    )
    run = await run_agent(settings, "go", tools=["test_model_big"])
    first, second = run.results()
    assert first.call_id != second.call_id
    assert Path(first.metadata["saved_output"]).read_text().startswith("first line 0\n")
    assert Path(second.metadata["saved_output"]).read_text().startswith("second line 0\n")
    calls = [c for m in run.of("message") for c in m.tool_calls]
    assert [c.provider_id for c in calls] == ["call_0", "call_0"]
    assert [c.id for c in calls] == [first.call_id, second.call_id]
    # on the wire every result answers the provider's id of its own call
    last = scripted_model.requests[-1]["messages"]
    assert [m["tool_calls"][0]["id"] for m in last if m.get("tool_calls")] == ["call_0", "call_0"]
    assert [m["tool_call_id"] for m in last if m["role"] == "tool"] == ["call_0", "call_0"]


async def test_a_provider_id_repeated_within_one_reply_is_made_distinct(scripted_model: ScriptedModel) -> None:
    scripted_model.add(reply("", call("ls", {"path": "a"}, call_id="same"), call("ls", {"path": "b"}, call_id="same")))
    message = await client(scripted_model).complete(PROMPT, [])
    first, second = message.tool_calls
    assert first.id != second.id and first.provider_id != second.provider_id
    assert first.provider_id == "same"
    results = [
        pb.Message(role=pb.ROLE_TOOL, tool_result=pb.ToolResult(call_id=c.id, output=c.provider_id))
        for c in message.tool_calls
    ]
    wire = messages_to_wire([*PROMPT, message, *results])
    assert [c["id"] for c in wire[1]["tool_calls"]] == [first.provider_id, second.provider_id]
    assert [m["tool_call_id"] for m in wire[2:]] == [first.provider_id, second.provider_id]


def test_a_call_saved_without_a_provider_id_uses_its_id_on_the_wire() -> None:
    """Sessions saved before provider ids existed resume with their ids unchanged on the wire."""
    old = pb.Message(role=pb.ROLE_ASSISTANT, tool_calls=[pb.ToolCall(id="call_abc", name="ls", arguments="{}")])
    result = pb.Message(role=pb.ROLE_TOOL, tool_result=pb.ToolResult(call_id="call_abc", output="x"))
    wire = messages_to_wire([*PROMPT, old, result])
    assert wire[1]["tool_calls"][0]["id"] == "call_abc" and wire[2]["tool_call_id"] == "call_abc"


# --- hostile streams: huge arguments, invalid Unicode ----------------------------------------


async def test_lone_surrogates_are_replaced_and_noted_and_the_reply_is_kept(scripted_model: ScriptedModel) -> None:
    raw_arguments = '{"path": "x\ud801"}'  # the code point itself, not a JSON escape of it
    scripted_model.add(reply("bad \ud800 text", call("ls\udfff", raw_arguments)))
    deltas: list[str] = []
    notices: list[pb.Notice] = []
    message = await client(scripted_model).complete(PROMPT, [], deltas.append, on_notice=notices.append)
    assert message.text == "bad \ufffd text" and "".join(deltas) == message.text
    (only,) = message.tool_calls
    assert only.name == "ls\ufffd" and json.loads(only.arguments) == {"path": "x\ufffd"}
    message.SerializeToString()  # storable: the UnicodeEncodeError that ended the run is gone
    assert len(notices) == 3 and all("U+FFFD" in n.text for n in notices)


async def test_a_lone_surrogate_from_the_model_does_not_end_the_run(
    settings: Settings, scripted_model: ScriptedModel
) -> None:
    from tests.conftest import run_agent

    scripted_model.add(reply("looking \ud83d", call("nosuch\ud800tool")), reply("done \udc00"))
    run = await run_agent(settings, "go", tools=["ls"])
    assert run.outcome.status == pb.RUN_STATUS_FINISHED and run.outcome.text == "done \ufffd"
    (result,) = run.results()
    assert result.is_error and "nosuch\ufffdtool" in result.error


async def test_argument_deltas_are_reported_throttled(scripted_model: ScriptedModel) -> None:
    args = {"content": "x" * 24_000}  # 1,000 argument chunks from the scripted server
    scripted_model.add(reply("", call("write_file", args)))
    now = [0.0]

    def clock() -> float:
        now[0] += 0.001  # one millisecond per chunk: about 1 s of streaming
        return now[0]

    seen: list[pb.ToolCallDelta] = []
    reply_ = ReplyAssembler(on_call_delta=seen.append, clock=clock)
    model = client(scripted_model)
    await model._stream(PROMPT, [], reply_)
    message = reply_.message("m")
    assert json.loads(message.tool_calls[0].arguments) == args
    assert 5 <= len(seen) <= 12  # about ten a second, not one per chunk
    assert all(d.name == "write_file" and d.index == 0 for d in seen)
    assert [d.chars for d in seen] == sorted(d.chars for d in seen)


async def test_complete_reports_argument_progress(scripted_model: ScriptedModel) -> None:
    scripted_model.add(reply("", call("write_file", {"content": "y" * 100})))
    seen: list[pb.ToolCallDelta] = []
    await client(scripted_model).complete(PROMPT, [], on_call_delta=seen.append)
    assert seen and seen[0].name == "write_file"


def test_ten_megabytes_of_arguments_assemble_in_linear_time() -> None:
    """Item 12 of the hardening issue: `arguments +=` per delta spent 27 s on 10 MB."""
    from types import SimpleNamespace as NS

    piece = "a" * 24
    chunks = [
        NS(
            usage=None,
            choices=[
                NS(
                    delta=NS(content=None, tool_calls=[NS(index=0, id=None, function=NS(name="w", arguments=piece))]),
                    finish_reason=None,
                )
            ],
        )
    ] * (10_000_000 // len(piece))
    reply_ = ReplyAssembler()
    started = time.monotonic()
    for chunk in chunks:
        reply_.take(chunk)
    message = reply_.message("m")
    assert len(message.tool_calls[0].arguments) == len(chunks) * len(piece)
    assert time.monotonic() - started < 10  # quadratic: minutes; linear: well under a second


# --- bounds of one call: output cap and deadline -------------------------------------------------


def test_every_call_has_an_output_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 16 item 6: a reply ran 7,500 tokens for 11.5 minutes; no cap was sent."""
    assert ModelClient(ModelSpec("openai/no-such-model")).request(PROMPT, [])["max_tokens"] == 8192
    known = litellm().get_model_info("openai/gpt-4o")["max_output_tokens"]
    assert ModelClient(ModelSpec("openai/gpt-4o")).request(PROMPT, [])["max_tokens"] == known
    assert ModelClient(ModelSpec("openai/gpt-4o", max_output_tokens=500)).request(PROMPT, [])["max_tokens"] == 500


async def test_the_cap_reaches_the_server(scripted_model: ScriptedModel) -> None:
    scripted_model.add(reply("ok"))
    spec = ModelSpec("openai/scripted", api_base=scripted_model.url, api_key="k", max_output_tokens=321)
    await ModelClient(spec).complete(PROMPT, [])
    assert scripted_model.requests[0]["max_tokens"] == 321


async def test_a_call_past_its_deadline_ends_as_a_broken_stream(scripted_model: ScriptedModel) -> None:
    scripted_model.add(reply("too late", delay=5))
    spec = ModelSpec("openai/scripted", api_base=scripted_model.url, api_key="k", call_deadline=0.5)
    started = time.monotonic()
    with pytest.raises(StreamIncomplete) as broken:
        await ModelClient(spec).complete(PROMPT, [])
    assert time.monotonic() - started < 3
    assert "passed its 0.5 s deadline (model_call_deadline)" in str(broken.value)
    assert isinstance(broken.value.cause, CallDeadlineExceeded)


async def test_a_run_sends_the_settings_cap_and_records_progress_and_notices(
    settings: Settings, scripted_model: ScriptedModel
) -> None:
    from tests.conftest import run_agent

    settings.max_output_tokens = 1234
    scripted_model.add(reply("odd \ud800", call("ls", {"path": "." + " " * 3000})), reply("done"))
    run = await run_agent(settings, "go", tools=["ls"])
    assert run.outcome.status == pb.RUN_STATUS_FINISHED
    assert [r["max_tokens"] for r in scripted_model.requests] == [1234, 1234]
    (first, *_) = run.of("tool_call_delta")
    assert first.name == "ls" and first.index == 0
    (notice,) = run.of("notice")
    assert notice.level == "warning" and "U+FFFD" in notice.text


# --- the answer reminder at the end of a request ---------------------------------------------


async def test_a_request_that_ends_with_results_that_succeeded_ends_with_the_answer_reminder(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    """A model litellm does not know (a local one) gets the reminder at the end of its request,
    only there: earlier turns go back as they were; after a failed call it is not added."""
    from tests.conftest import run_agent
    from workbench.model.text_calls import ECHO_NEXT, ECHO_READ

    (workspace / "a.txt").write_text("alpha\n")
    scripted_model.add(
        reply("", call("read_file", {"path": "a.txt"})),
        reply("", call("read_file", {"path": "missing.txt"})),
        reply("", call("ls", {"path": "."})),
        reply("alpha"),
    )
    run = await run_agent(settings, "what is in a.txt?", tools=["read_file", "ls"])
    assert run.outcome.status == pb.RUN_STATUS_FINISHED
    tool_texts = [[m["content"] for m in r["messages"] if m["role"] == "tool"] for r in scripted_model.requests]
    assert tool_texts[0] == []
    assert tool_texts[1][-1].endswith(ECHO_NEXT)  # read a.txt: it may answer now
    assert not tool_texts[2][-1].endswith(ECHO_NEXT)  # a failed call: its error says what to do
    assert tool_texts[3][-1].endswith(ECHO_READ)  # ls listed paths: read before answering about a file
    assert not any(t.endswith((ECHO_NEXT, ECHO_READ)) for t in tool_texts[3][:-1])  # only at the end
    assert ECHO_NEXT not in "".join(r.output for r in run.results())  # on the wire only, never stored


@pytest.mark.parametrize(("model", "setting"), [("openai/gpt-4o", "auto"), ("openai/scripted", "off")])
async def test_a_known_model_or_the_setting_off_gets_no_answer_reminder(
    settings: Settings, scripted_model: ScriptedModel, model: str, setting: str
) -> None:
    from tests.conftest import run_agent

    settings.model, settings.answer_reminder = model, setting
    (settings.workspace / "a.txt").write_text("alpha\n")
    scripted_model.add(reply("", call("ls", {"path": "."})), reply("done"))
    run = await run_agent(settings, "list", tools=["ls"])
    assert run.outcome.status == pb.RUN_STATUS_FINISHED
    (tool,) = [m for m in scripted_model.requests[-1]["messages"] if m["role"] == "tool"]
    assert tool["content"] == run.results()[0].output  # no closing line of any kind
