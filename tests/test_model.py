"""The model gateway through litellm's real HTTP path: provider shapes, broken streams, usage, budgets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.scripted_server import ScriptedModel, call, cut, reply
from workbench.cli import main
from workbench.model import (
    ModelClient,
    ModelSpec,
    StreamIncomplete,
    add_usage,
    context_window,
    litellm,
    usage_from_wire,
)
from workbench.pb import workbench_pb2 as pb

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
    assert [(c.id, c.name) for c in message.tool_calls] == [("c1", "read_file"), ("c2", "ls")]
    assert json.loads(message.tool_calls[0].arguments) == long_args
    assert json.loads(message.tool_calls[1].arguments) == {"path": "."}
    assert scripted_model.requests[0]["stream"] is True


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
    assert broken.value.cause is not None and "after 10 chars" in str(broken.value)


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


def test_max_cost_ends_the_run_budget_exhausted_exit_3(
    scripted_model: ScriptedModel, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scripted_model.add(reply("", call("read_file", path="a.txt"), usage=(1000, 500)), reply("never"))
    code = run_cli(scripted_model, tmp_path, "--model", "openai/gpt-4o-mini", "--max-cost", "0.0001")
    assert code == 3
    assert len(scripted_model.requests) == 1
    assert "budget exhausted: cost budget exhausted" in capsys.readouterr().err


def test_max_tokens_ends_the_run_budget_exhausted_exit_3(
    scripted_model: ScriptedModel, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scripted_model.add(reply("", call("read_file", path="a.txt"), usage=(800, 300)), reply("never"))
    code = run_cli(scripted_model, tmp_path, "--model", "openai/scripted", "--max-tokens", "1000")
    assert code == 3
    assert len(scripted_model.requests) == 1
    assert "token budget exhausted: 1,100 of 1,000 tokens used" in capsys.readouterr().err


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

    from workbench.model import preload

    thread = preload()
    thread.join(timeout=60)
    assert not thread.is_alive() and gc.isenabled()
