"""The TUI's view model, fed real event streams (the engine with the scripted model server)."""

from __future__ import annotations

from rich.text import Text

from tests.conftest import run_agent
from tests.scripted_server import ScriptedModel, call, reply
from tests.tui_events import subagents_with_inbox
from workbench.config.settings import Settings
from workbench.pb import workbench_pb2 as pb
from workbench.tui.items import AssistantItem, NoticeItem, ToolItem, UserItem
from workbench.tui.text import argument_summary, plain, printable
from workbench.tui.view import IGNORED_KINDS, SessionView


async def test_a_run_folds_into_rows_items_files_and_usage(settings: Settings, scripted_model: ScriptedModel) -> None:
    scripted_model.add(
        reply("Let me write it.", call("write_file", path="a.txt", content="one\n")),
        reply("", call("edit_file", path="a.txt", old_text="two", new_text="three")),
        reply("", call("bash", command="printf 'partial\\n'; exit 4")),
        reply("Done."),
    )
    run = await run_agent(settings, "make a.txt")
    view = SessionView()
    changes = view.apply(run.events)

    row = view.agents["main"]
    assert row.status == pb.AGENT_STATUS_COMPLETED and row.tool_calls == 3 and row.ended >= row.started
    items = view.transcript("main")
    assert isinstance(items[0], UserItem) and items[0].text == "make a.txt"
    tools = [i for i in items if isinstance(i, ToolItem)]
    assert [t.call.name for t in tools] == ["write_file", "edit_file", "bash"]
    assert not tools[0].failed and "+one" in tools[0].diff
    assert tools[1].failed and "old_text" in tools[1].result.error  # type: ignore[union-attr]
    assert tools[2].failed and "partial" in tools[2].streamed  # the partial output is kept beside the cause
    answers = [i.text for i in items if isinstance(i, AssistantItem)]
    assert answers == ["Let me write it.", "Done."]  # streamed and complete messages make one item each
    assert list(view.changed_files) == ["a.txt"] and "+one" in view.changed_files["a.txt"]
    assert view.usage.input_tokens > 0 and view.prompt_tokens > 0
    assert not view.busy and view.last_answer == "Done."
    assert any(isinstance(i, NoticeItem) and i.kind == "files" for i in items)  # "changed: a.txt" after the run
    assert changes.runs_ended and changes.runs_ended[0].status == pb.RUN_STATUS_FINISHED


async def test_batches_and_replays_give_the_same_state(settings: Settings, scripted_model: ScriptedModel) -> None:
    scripted_model.add(reply("Hello " * 40, call("bash", command="for i in 1 2 3; do echo line $i; done")), reply("ok"))
    run = await run_agent(settings, "go")
    whole, one_by_one = SessionView(), SessionView()
    whole.apply(run.events)
    for event in run.events:
        one_by_one.apply([event])
    one_by_one.apply(run.events)  # a re-sync repeats events: nothing doubles

    def texts(view: SessionView) -> list[str]:
        return [getattr(i, "text", "") or getattr(i, "streamed", "") for i in view.transcript("main")]

    assert texts(whole) == texts(one_by_one)
    assert len(whole.transcript("main")) == len(one_by_one.transcript("main"))


def test_children_inbox_and_unread() -> None:
    view = SessionView()
    view.apply(subagents_with_inbox().events)
    assert [row.info.id for _, row in view.tree_order()] == ["main", "a1", "a2", "a3", "a4"]
    assert [depth for depth, _ in view.tree_order()] == [0, 1, 1, 1, 1]
    assert view.agents["a2"].status == pb.AGENT_STATUS_FAILED and view.agents["a2"].final
    assert not view.agents["a4"].final and view.agents["a4"].tool_calls == 1
    assert view.unread == 3 and [e.item.child_id for e in view.inbox] == ["a1", "a2", "a3"]
    assert view.inbox[1].item.cause == "model call failed: 401 invalid API key"


def test_queued_prompt_is_marked_until_it_reaches_the_agent() -> None:
    from tests.tui_events import EventLog

    log = EventLog()
    log.spawn("main", "main", "first")
    log.run("first")
    log.add("main", "prompt_queued", pb.PromptQueued(text="second"))
    view = SessionView()
    view.apply(log.events)
    queued = view.transcript("main")[-1]
    assert isinstance(queued, UserItem) and queued.queued
    changes = view.apply([log.add("main", "message", pb.Message(role=pb.ROLE_USER, text="second"))])
    assert not queued.queued and queued.key in changes.updated
    assert sum(isinstance(i, UserItem) for i in view.transcript("main")) == 2  # not shown twice


def test_model_and_tool_text_is_data() -> None:
    assert printable("a\x1b[31mred\x07\r\n\tok") == "a\\x1b[31mred\\x07\\x0d\n\tok"
    text = plain("[bold]not markup[/bold] \x1b]0;title\x07")
    assert isinstance(text, Text) and text.plain == "[bold]not markup[/bold] \\x1b]0;title\\x07" and not text.spans
    assert argument_summary("bash", '{"command": "ls -la\\nrm x"}') == "ls -la"
    assert argument_summary("read_file", "{not json") == "{not json"


def test_the_first_frame_path_imports_neither_litellm_nor_the_engine() -> None:
    import subprocess
    import sys

    code = (
        "import sys; import workbench.tui.app; "
        "print(sorted(m for m in sys.modules if m == 'litellm'"
        " or m in ('workbench.session.session', 'workbench.engine.loop')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


async def test_a_stopped_run_says_stopped_once(settings: Settings, scripted_model: ScriptedModel) -> None:
    """Defect 10's cosmetic half: a looping run ended as "run stopped: stopped: agent main repeated …"."""
    (settings.workspace / "same.txt").write_text("same\n")
    scripted_model.add(*[reply("", call("read_file", path="same.txt")) for _ in range(20)])
    run = await run_agent(settings, "read it")
    view = SessionView()
    view.apply(run.events)
    notices = [i.text for i in view.transcript("main") if isinstance(i, NoticeItem) and i.kind == "run"]
    assert notices == ["run stopped: agent main repeated read_file(same.txt) 4 times"]


def test_every_event_kind_has_a_handler_or_is_listed_as_ignored() -> None:
    """The view model finds a kind's handler by name (`_on_KIND`): a kind renamed in the proto, or a
    new one, would be dropped silently. Each kind is handled or listed in IGNORED_KINDS, not both,
    and each handler names a kind that exists."""
    kinds = {f.name for f in pb.Event.DESCRIPTOR.oneofs_by_name["kind"].fields}
    handled = {name.removeprefix("_on_") for name in dir(SessionView) if name.startswith("_on_")}
    assert handled <= kinds, f"handlers of no Event kind: {sorted(handled - kinds)}"
    assert not handled & IGNORED_KINDS, f"handled and listed as ignored: {sorted(handled & IGNORED_KINDS)}"
    assert kinds - handled == IGNORED_KINDS, (
        f"kinds with no handler, not listed: {sorted(kinds - handled - IGNORED_KINDS)}"
    )
