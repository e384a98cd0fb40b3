"""The registry: schema from the signature, argument validation, output limits."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

import pytest

from tests import waiting
from tests.conftest import RegisterTool, run_agent
from tests.scripted_server import ScriptedModel, call, reply
from workbench.config.settings import Settings
from workbench.core.feedback import Feedback, model_text
from workbench.engine.recorder import kind_of
from workbench.pb import workbench_pb2 as pb
from workbench.tools.arguments import BadArguments, parse_arguments
from workbench.tools.registry import (
    BUILTIN_MODULES,
    REGISTRY,
    Toolbox,
    ToolContext,
    limit_output,
    tool,
    unregister,
)


async def _schema_tool(
    name: str,
    ctx: ToolContext,
    count: int = 3,
    mode: Literal["fast", "slow"] = "fast",
    tags: list[str] | None = None,
    ratio: float | None = None,
) -> str:
    """Do a thing.

    Longer words.

    Args:
        name: who
        count: how many
            (continued)
        mode: how
    """
    return f"{name} {count} {mode} {tags} {ratio}"


@pytest.fixture(autouse=True)
def _tools(register_tool: RegisterTool) -> None:
    register_tool(_schema_tool, name="test_schema")


def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(
        workspace=tmp_path,
        settings=Settings(workspace=tmp_path, data_dir=tmp_path),
        session_dir=tmp_path / "s",
    )


def test_schema_from_signature_and_docstring() -> None:
    t = REGISTRY["test_schema"]
    assert t.definition.description == "Do a thing.\n\nLonger words."
    props = t.schema["properties"]
    assert t.schema["required"] == ["name"]
    assert props["count"] == {"type": "integer", "description": "how many (continued)", "default": 3}
    assert props["mode"]["enum"] == ["fast", "slow"]
    assert props["tags"] == {"type": "array", "items": {"type": "string"}}
    assert props["ratio"] == {"type": "number"}
    assert "ctx" not in props
    assert t.definition.parameters["properties"]["name"]["type"] == "string"


async def test_validation_messages(tmp_path: Path) -> None:
    box = Toolbox(["test_schema"])

    async def run(arguments: str) -> str:
        return model_text(await box.invoke(pb.ToolCall(id="c", name="test_schema", arguments=arguments), ctx(tmp_path)))

    assert await run('{"name": "a", "count": 2.0, "tags": ["x"]}') == "a 2 fast ['x'] None"
    assert "must be integer, got float 2.5" in await run('{"name": "a", "count": 2.5}')
    assert "must be integer, got boolean" in await run('{"name": "a", "count": true}')
    assert "must be one of fast, slow" in await run('{"name": "a", "mode": "medium"}')
    assert "argument 'tags'[1] must be string" in await run('{"name": "a", "tags": ["x", 1]}')
    assert "missing required argument 'name'" in await run("{}")
    assert "arguments must be a JSON object" in await run("[1]")
    assert (await run("")).startswith("Error: invalid arguments: missing required argument 'name'")


async def test_problems_come_in_a_fixed_order_and_loose_values_are_read(tmp_path: Path) -> None:
    """Missing arguments first, then unknown ones, then wrong values in the order the call gave
    them (pydantic reports them in declaration order: the checker sorts them back); null for an
    optional argument is its default, an int for a number stays an int, a non-string for an enum
    is a wrong type."""
    box = Toolbox(["test_schema"])

    async def run(arguments: object) -> str:
        call = pb.ToolCall(id="c", name="test_schema", arguments=json.dumps(arguments))
        return model_text(await box.invoke(call, ctx(tmp_path)))

    listed = (await run({"ratio": "x", "zz": 1, "mode": "m", "count": "2"})).split(". Expected")[0]
    assert listed == (
        "Error: invalid arguments: missing required argument 'name'; unknown argument 'zz'; "
        "argument 'ratio' must be number, got str 'x'; argument 'mode' must be one of fast, slow, got 'm'; "
        "argument 'count' must be integer, got str '2'"
    )
    assert await run({"name": "a", "count": None, "mode": None, "ratio": 2}) == "a 3 fast None 2"
    assert "argument 'mode' must be string, got int 1" in await run({"name": "a", "mode": 1})


async def test_an_enum_of_one_value_is_an_enum(tmp_path: Path, register_tool: RegisterTool) -> None:
    """pydantic writes a one-value Literal as `const`; the models are shown an enum, and told it."""

    async def only(ctx: ToolContext, server: Literal["gh"]) -> str:
        """One server."""
        return server

    register_tool(only, name="test_one_value")
    assert REGISTRY["test_one_value"].schema["properties"]["server"] == {"type": "string", "enum": ["gh"]}
    call = pb.ToolCall(id="c", name="test_one_value", arguments='{"server": "zz"}')
    result = await Toolbox(["test_one_value"]).invoke(call, ctx(tmp_path))
    assert "argument 'server' must be one of gh, got 'zz'" in result.error


async def test_unknown_tool_lists_the_available_ones(tmp_path: Path) -> None:
    box = Toolbox(["test_schema"])
    result = await box.invoke(pb.ToolCall(id="c", name="nope", arguments="{}"), ctx(tmp_path))
    assert result.error == "unknown tool 'nope'; available tools: test_schema"


async def test_unknown_tool_names_a_close_tool_or_bash_for_a_program(tmp_path: Path) -> None:
    box = Toolbox(["read_file", "bash"])
    result = await box.invoke(pb.ToolCall(id="c", name="readfile", arguments="{}"), ctx(tmp_path))
    assert result.error == "unknown tool 'readfile'; available tools: read_file, bash. Did you mean read_file?"
    result = await box.invoke(pb.ToolCall(id="c", name="pytset", arguments="{}"), ctx(tmp_path))
    assert result.error.endswith(
        'To run the program pytset, call bash: {"name": "bash", "arguments": {"command": "pytset"}}.'
    )
    result = await Toolbox(["read_file"]).invoke(pb.ToolCall(id="c", name="cat", arguments="{}"), ctx(tmp_path))
    assert result.error == "unknown tool 'cat'; available tools: read_file"  # no bash to offer


async def test_a_call_in_a_hint_is_complete_and_runnable_never_a_placeholder(tmp_path: Path) -> None:
    """Issue 37 item 2: the hint's call held `"command": "probe__echo ..."`; the model copied it and
    the harness ran `bash probe__echo ...` four times."""
    box = Toolbox(["read_file", "bash"])

    async def hint(name: str, arguments: str) -> str:
        return (await box.invoke(pb.ToolCall(id="c", name=name, arguments=arguments), ctx(tmp_path))).error

    listed = await hint("pytset", '{"args": ["-q", "tests/a b.py"]}')
    assert listed.endswith("""call bash: {"name": "bash", "arguments": {"command": "pytset -q 'tests/a b.py'"}}.""")
    assert (await hint("pytset", '{"command": "pytset -x"}')).endswith('{"command": "pytset -x"}}.')
    unclear = await hint("pytset", '{"verbose": true, "target": "tests"}')
    assert unclear.endswith(
        "To run the program pytset, call bash with its whole command line (pytset and its arguments)."
    )
    # a program's operands written as named arguments (a 1.5B model's mkdir(path=...), cp(source=, destination=))
    assert (await hint("cp", '{"source": "app.ini", "destination": "build/my app.ini"}')).endswith(
        """call bash: {"name": "bash", "arguments": {"command": "cp app.ini 'build/my app.ini'"}}."""
    )
    assert (await hint("mkdir", '{"path": "build"}')).endswith('{"command": "mkdir build"}}.')
    mcp_name = await hint("probe__echo", '{"text": "hi"}')
    assert mcp_name == "unknown tool 'probe__echo'; available tools: read_file, bash", (
        "an MCP tool's name is no program"
    )
    for error in (listed, unclear, mcp_name, await hint("pytset", "{}")):
        assert "..." not in error and "<" not in error


async def test_unknown_tool_naming_a_file_points_at_read_file_unless_it_is_a_program(tmp_path: Path) -> None:
    box = Toolbox(["read_file", "bash"])
    made_up = pb.ToolCall(id="c", name="get_log_level", arguments='{"path": "etc/logging.ini"}')
    result = await box.invoke(made_up, ctx(tmp_path))
    assert result.error.endswith('call read_file: {"name": "read_file", "arguments": {"path": "etc/logging.ini"}}.')
    program = pb.ToolCall(id="c", name="python3", arguments='{"path": "x.py"}')  # on PATH: bash runs it
    assert "call bash" in (await box.invoke(program, ctx(tmp_path))).error


def test_toolbox_rejects_unknown_names() -> None:
    try:
        Toolbox(["read_file", "teleport"])
    except ValueError as err:
        assert "teleport" in str(err) and "read_file" in str(err)
    else:
        raise AssertionError("no error")


def test_limit_output_keeps_head_and_tail(tmp_path: Path) -> None:
    result = pb.ToolResult(call_id="call/1", output="a" * 500 + "b" * 500)
    limit_output(result, 100, tmp_path / "out")
    assert result.output.startswith("a" * 50) and result.output.endswith("b" * 50)
    assert "900 characters" in result.output
    saved = tmp_path / "out" / "call_1.txt"
    assert saved.read_text() == "a" * 500 + "b" * 500
    small = pb.ToolResult(call_id="c", output="short")
    limit_output(small, 100, tmp_path / "out")
    assert small.output == "short" and "saved_output" not in small.metadata


async def test_non_feedback_exception_is_a_defect_event_and_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, register_tool: RegisterTool
) -> None:
    published: list[tuple[str, object]] = []

    async def buggy(ctx: ToolContext) -> str:
        """Crash."""
        return str({}["missing"])

    register_tool(buggy, name="test_buggy")

    c = ctx(tmp_path)
    c.publish = lambda message: published.append((kind_of(message), message))
    result = await Toolbox(["test_buggy"]).invoke(pb.ToolCall(id="c9", name="test_buggy"), c)
    assert result.is_error and result.error == "'missing'"
    ((kind, defect),) = published
    assert kind == "defect" and isinstance(defect, pb.Defect)
    assert defect.call_id == "c9" and defect.error_type == "KeyError" and "Traceback" in defect.traceback
    assert "defect in test_buggy" in caplog.text and "KeyError" in caplog.text


# --- hostile arguments: deep nesting, and huge values quoted back in errors ------------------

DEEP = "[" * 100_000 + "]" * 100_000  # json.loads raised RecursionError, which ended the run
HUGE = "x" * 3_000_000


async def test_deeply_nested_arguments_are_feedback(tmp_path: Path) -> None:
    box = Toolbox(["test_schema"])
    for arguments in ('{"name": ' + DEEP + "}", DEEP, '{"name": ' + '{"a": ' * 100_000 + "1" + "}" * 100_001):
        result = await box.invoke(pb.ToolCall(id="c", name="test_schema", arguments=arguments), ctx(tmp_path))
        assert result.is_error and "argument nesting too deep" in result.error, result.error[:200]


@pytest.mark.slow
async def test_deeply_nested_arguments_do_not_end_the_run(settings: Settings, scripted_model: ScriptedModel) -> None:
    scripted_model.add(reply("", call("read_file", '{"path": ' + DEEP + "}")), reply("recovered"))
    run = await run_agent(settings, "go")
    assert run.outcome.status == pb.RUN_STATUS_FINISHED and run.outcome.text == "recovered"
    (content,) = [m["content"] for m in scripted_model.requests[1]["messages"] if m["role"] == "tool"]
    assert "argument nesting too deep" in content


@pytest.mark.parametrize(
    ("name", "arguments", "says"),
    [
        (HUGE, {"name": "a"}, "unknown tool 'xxx"),
        ("test_schema", {"name": "a", HUGE: 1}, "unknown argument 'xxx"),
        ("test_schema", {"name": "a", "mode": HUGE}, "must be one of fast, slow, got 'xxx"),
        ("test_schema", {"name": "a", "count": HUGE}, "must be integer, got str 'xxx"),
        ("test_schema", {"name": "a", "tags": [HUGE, 1]}, "argument 'tags'[1] must be string"),
    ],
    ids=["tool name", "argument name", "enum value", "wrong type", "list item"],
)
async def test_a_huge_value_is_shortened_where_an_error_quotes_it(
    tmp_path: Path, name: str, arguments: dict[str, object], says: str
) -> None:
    result = await Toolbox(["test_schema"]).invoke(
        pb.ToolCall(id="c", name=name, arguments=json.dumps(arguments)), ctx(tmp_path)
    )
    assert result.is_error and says in result.error, result.error[:300]
    assert len(model_text(result)) < 2000 and (
        "(shortened: 3,000,000 characters)" in result.error or HUGE[:300] not in result.error
    )


async def test_a_wrong_type_deep_or_wide_value_is_previewed_briefly(tmp_path: Path) -> None:
    box = Toolbox(["test_schema"])
    for value in ([[[[[[1]]]]]] * 100_000, {"k": list(range(1_000_000))}, "[" * 900 + "]" * 900):
        arguments = (
            json.dumps({"name": "a", "count": value})
            if not isinstance(value, str)
            else '{"name": "a", "count": ' + value + "}"
        )
        result = await box.invoke(pb.ToolCall(id="c", name="test_schema", arguments=arguments), ctx(tmp_path))
        assert result.is_error and "argument 'count' must be integer" in result.error and len(result.error) < 2000


async def test_many_argument_problems_are_counted_not_all_listed(tmp_path: Path) -> None:
    arguments = json.dumps({"name": "a", **{f"extra{i}": 1 for i in range(100_000)}})
    result = await Toolbox(["test_schema"]).invoke(
        pb.ToolCall(id="c", name="test_schema", arguments=arguments), ctx(tmp_path)
    )
    assert "unknown argument 'extra9'" in result.error and "and 99,990 more problems" in result.error
    assert len(result.error) < 2000


async def test_an_error_text_obeys_the_output_limit(tmp_path: Path, register_tool: RegisterTool) -> None:
    async def loud(ctx: ToolContext) -> str:
        """Fail at length."""
        raise Feedback("start " + "y" * 3_000_000 + " end")

    register_tool(loud, name="test_loud_failure")

    c = ctx(tmp_path)
    result = await Toolbox(["test_loud_failure"]).invoke(pb.ToolCall(id="c", name="test_loud_failure"), c)
    assert len(result.error) <= c.settings.output_limit
    assert result.error.startswith("start yyy") and result.error.endswith("yyy end")
    assert "characters of this error cut from the middle" in result.error
    assert result.metadata["original_error_chars"] == 3_000_010


def test_parse_arguments_raises_only_bad_arguments() -> None:
    # the one reader of a model's arguments (the guard and the TUI may use it too): a ValueError
    assert parse_arguments("") == {} and parse_arguments('{"a": [1]}') == {"a": [1]}
    for text, says in [
        (DEEP, "argument nesting too deep"),
        ('{"a": ' + "[" * 100_000, "argument nesting too deep"),
        ('{"a": 1', "not valid JSON"),
        ("[1]", "must be a JSON object, not list"),
    ]:
        with pytest.raises(BadArguments, match=says):
            parse_arguments(text)


def test_toolbox_none_offers_the_builtin_tools_only(register_tool: RegisterTool) -> None:
    """What an agent is offered by default never depends on which test modules were imported."""
    register_tool(waiting.sleep, name="sleep")
    assert list(Toolbox(["sleep"]).tools) == ["sleep"]  # a test's tool, by name
    offered = Toolbox(None).tools
    assert "sleep" not in offered and "test_schema" not in offered
    assert {t.fn.__module__ for t in offered.values()} == {f"workbench.tools.{m}" for m in BUILTIN_MODULES}
    assert set(offered) == {
        *("read_file", "write_file", "edit_file", "ls", "glob", "grep"),
        *("web_search", "web_fetch", "skill", "bash", "tmux", "subagent"),
    }


def test_an_unregistered_tool_is_gone() -> None:
    async def gone(ctx: ToolContext) -> str:
        """Be gone."""
        return ""

    tool(gone, name="test_gone")
    assert "test_gone" in Toolbox(["test_gone"]).tools
    unregister("test_gone")
    with pytest.raises(ValueError, match="unknown tool"):
        Toolbox(["test_gone"])
