"""The TUI under Pilot, driving a real Session: real litellm HTTP to the scripted model server,
a real SQLite file, a real tmux server. One test per behaviour of the issue's Tests section."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input

from tests.conftest import run_agent
from tests.scripted_server import Router, ScriptedModel, call, error, reply
from tests.waiting import on_screen
from workbench.config.settings import Settings
from workbench.pb import workbench_pb2 as pb
from workbench.tui.agents_pane import AgentsPane
from workbench.tui.app import WorkbenchApp
from workbench.tui.ask_screen import AskText
from workbench.tui.files_screen import ChangedFiles
from workbench.tui.inbox_pane import InboxPane
from workbench.tui.items import ToolItem, UserItem
from workbench.tui.messages import AssistantMessage, UserMessage
from workbench.tui.picker import ResumePicker
from workbench.tui.prompt_input import PromptInput
from workbench.tui.tool_block import ToolBlock
from workbench.tui.transcript import Transcript

pytestmark = pytest.mark.tui

SIZE = (150, 45)


def make_app(settings: Settings, **kwargs: Any) -> WorkbenchApp:
    # the TUI's default mode (ask) would stop each bash call at the approval modal, which
    # tests/tui/test_approval.py covers; these tests are about the rest, so calls just run
    settings.approval = settings.approval or "auto"
    return WorkbenchApp(settings, blink=False, preload=False, **kwargs)


async def settled(pilot: Pilot[Any], app: WorkbenchApp) -> None:
    """Wait until what the view model holds is on the screen (it redraws at most ten times a second)."""
    await on_screen(
        pilot, lambda: app.redraws.timer is None and app.redraws.pending is None, what="the screen to redraw"
    )
    await pilot.pause()


async def type_prompt(pilot: Pilot[Any], text: str) -> None:
    pilot.app.query_one(PromptInput).focus()
    await pilot.press(*text)
    await pilot.press("enter")


def tool_blocks(app: WorkbenchApp) -> list[ToolBlock]:
    return [view for view in app.query_one(Transcript).item_views() if isinstance(view, ToolBlock)]


def prompts(app: WorkbenchApp) -> list[UserMessage]:
    """The prompts in the shown transcript (their views: the transcript draws them)."""
    return [view for view in app.query_one(Transcript).item_views() if isinstance(view, UserMessage)]


async def test_a_prompt_gives_a_streamed_answer(settings: Settings, scripted_model: ScriptedModel) -> None:
    answer = "The answer is **42**, and here is why:\n\n" + "- a reason that takes a while to stream\n" * 8
    scripted_model.add(reply(answer))
    app = make_app(settings)
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, lambda: app.session is not None, what="the session to open")
        await type_prompt(pilot, "what is it?")
        await on_screen(pilot, lambda: app.view.last_answer == answer, what="the answer")
        await on_screen(pilot, lambda: not app.view.busy)
        await settled(pilot, app)
        transcript = app.query_one(Transcript)
        messages = [view for view in transcript.item_views() if isinstance(view, AssistantMessage)]
        assert len(messages) == 1 and messages[0].item.text == answer  # streamed deltas, then the whole message
        shown = transcript.text_of(messages[0].item)
        assert "42" in shown and "**" not in shown and "• a reason" in shown  # rendered as Markdown, not raw
        assert any("what is it?" in transcript.text_of(view.item) for view in prompts(app))
        assert scripted_model.requests[0]["stream"] is True
        kinds = [e.WhichOneof("kind") for e in app.session.events()]  # type: ignore[union-attr]
        assert kinds.index("text_delta") < kinds.index("message", kinds.index("text_delta"))
        await app._close_session()


async def test_a_failed_call_shows_its_cause_beside_its_partial_output(
    settings: Settings, scripted_model: ScriptedModel
) -> None:
    scripted_model.add(reply("", call("bash", command="echo first-part; echo second-part; exit 3")), reply("moving on"))
    app = make_app(settings, prompt="run it")
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, lambda: app.view.last_answer == "moving on", what="the run to go on after the failure")
        await settled(pilot, app)
        await on_screen(pilot, lambda: len(tool_blocks(app)) == 1 and tool_blocks(app)[0].failed())
        [block] = tool_blocks(app)
        transcript = app.query_one(Transcript)
        lines = transcript.text_of(block.item).splitlines()
        assert block.expanded  # a failure opens itself
        [titles] = [line for line in lines if "output so far" in line]
        assert "cause" in titles and titles.index("cause") > titles.index("output so far")  # side by side
        body = lines[1:]  # under the header, which shows the command
        assert any(line.startswith("  first-part ") for line in body) and any("exit code 3" in line for line in body)
        await pilot.resize_terminal(70, 45)
        await pilot.pause()
        lines = transcript.text_of(block.item).splitlines()  # narrow: the cause under the output
        output, cause = (
            lines.index("  output so far"),
            next(n for n, line in enumerate(lines) if line.strip() == "cause"),
        )
        assert output < cause and "first-part" in lines[output + 1]
        await app._close_session()


def tmux_commands(socket: str) -> list[str]:
    done = subprocess.run(
        ["tmux", "-L", socket, "list-panes", "-a", "-F", "#{pane_current_command}"],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.split()


async def test_escape_cancels_a_long_bash_call_and_a_second_prompt_works(
    settings: Settings, scripted_model: ScriptedModel
) -> None:
    scripted_model.add(reply("", call("bash", command="echo started; sleep 120")), reply("second answer"))
    app = make_app(settings, prompt="wait a long time")
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, lambda: tool_blocks(app) and "started" in tool_blocks(app)[0].item.streamed)
        socket = f"workbench-{app.session.id}"  # type: ignore[union-attr]
        await on_screen(pilot, lambda: "sleep" in tmux_commands(socket), what="sleep to run in tmux")
        app.query_one(PromptInput).focus()
        await pilot.press("escape")
        await on_screen(pilot, lambda: not app.view.busy, timeout=30, what="the run to stop")
        item = tool_blocks(app)[0].item
        assert item.result is not None and item.result.is_error and "interrupted" in item.result.error
        assert "sleep" not in tmux_commands(socket)  # the command is gone
        await type_prompt(pilot, "again")
        await on_screen(pilot, lambda: app.view.last_answer == "second answer", what="the second prompt's answer")
        await app._close_session()


async def test_cancelling_one_subagent_leaves_the_parent_running(
    settings: Settings, scripted_model: ScriptedModel
) -> None:
    router = Router(
        CHILD=[reply("", call("bash", command="sleep 120"))],
        parent=[
            reply(
                "", call("subagent", {"action": "create", "mode": "async", "name": "slow", "prompt": "CHILD: sleep"})
            ),
            reply("waiting for it"),
            reply("the child was cancelled; done"),
        ],
    )
    scripted_model.add(*[router] * 6)
    app = make_app(settings, prompt="parent task")
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, lambda: "a1" in app.view.agents and app.view.agents["a1"].tool_calls == 1)
        await on_screen(pilot, lambda: app.query_one("#side").display, what="the Agents column (shown with a subagent)")
        agents = app.query_one(AgentsPane)
        agents.focus()

        def a1_selected() -> bool:  # the row may be drawn after the view model has the agent
            if agents.selected_agent != "a1":
                agents.select_agent("a1")
            return agents.selected_agent == "a1"

        await on_screen(pilot, a1_selected, what=lambda: f"a1 selected: {agents.cursor_line=}")
        await pilot.press("c")
        assert agents.pending_cancel == "a1" and "y: yes" in str(agents.border_subtitle)
        await pilot.press("y")
        await on_screen(pilot, lambda: app.view.agents["a1"].status == pb.AGENT_STATUS_CANCELLED, what="a1 cancelled")
        await on_screen(pilot, lambda: app.view.inbox, what="the Inbox item")
        assert app.view.inbox[0].item.status == pb.AGENT_STATUS_CANCELLED and app.view.inbox[0].recipient == "main"
        # the parent kept running: it read the Inbox item in its next turn and finished well
        await on_screen(pilot, lambda: app.view.last_answer == "the child was cancelled; done", what="the parent's end")
        assert "cancel" in str(scripted_model.requests[-1]["messages"][-1]).lower()
        await on_screen(pilot, lambda: app.view.agents["main"].status == pb.AGENT_STATUS_COMPLETED)
        await on_screen(pilot, lambda: app.query_one(InboxPane).option_count == 1, what="the Inbox row drawn")
        await app._close_session()


async def test_a_child_failure_reaches_the_inbox_and_opens_the_child(
    settings: Settings, scripted_model: ScriptedModel
) -> None:
    router = Router(
        CHILD=[error(401, "invalid api key", code="invalid_api_key")],
        parent=[
            reply(
                "", call("subagent", {"action": "create", "mode": "async", "name": "lint", "prompt": "CHILD: lint it"})
            ),
            reply("waiting"),
            reply("the lint child failed; stopping"),
        ],
    )
    scripted_model.add(*[router] * 5)
    app = make_app(settings, prompt="parent task")
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, lambda: app.view.inbox, what="the Inbox item")
        entry = app.view.inbox[0]
        assert entry.item.status == pb.AGENT_STATUS_FAILED and "401" in entry.item.cause
        inbox = app.query_one(InboxPane)
        await on_screen(pilot, lambda: inbox.option_count == 1 and app.query_one("#side").display)
        inbox.focus()
        inbox.highlighted = 0
        await pilot.press("enter")
        await on_screen(pilot, lambda: app.query_one(Transcript).agent_id == "a1", what="the child's transcript")
        await on_screen(pilot, lambda: app.query_one(AgentsPane).selected_agent == "a1")
        assert any("CHILD: lint it" in view.item.text for view in prompts(app))
        await app._close_session()


async def test_a_queued_prompt_is_sent_at_the_next_turn(settings: Settings, scripted_model: ScriptedModel) -> None:
    scripted_model.add(
        reply("", call("bash", command="sleep 1.5; echo slept")),
        reply("both done"),
    )
    app = make_app(settings, prompt="first")
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, lambda: tool_blocks(app), what="the bash call")
        await type_prompt(pilot, "second")
        await on_screen(pilot, lambda: any(view.item.queued for view in prompts(app)), what="the queued prompt")
        queued = next(view for view in prompts(app) if view.item.queued)
        transcript = app.query_one(Transcript)
        assert queued.component == "transcript--queued" and "queued" in transcript.text_of(queued.item)
        await on_screen(pilot, lambda: not queued.item.queued, what="the queued prompt to reach the agent")
        await on_screen(pilot, lambda: app.view.last_answer == "both done" and not app.view.busy)
        # the next model call, right after the bash result, carried the queued prompt
        last = scripted_model.requests[1]["messages"]
        assert last[-1] == {"role": "user", "content": "second"} and last[-2]["role"] == "tool"
        await app._close_session()


async def test_resume_shows_the_old_transcript(settings: Settings, scripted_model: ScriptedModel) -> None:
    scripted_model.add(reply("", call("read_file", path="missing.txt")), reply("the old answer"))
    old = await run_agent(settings, "the old prompt")
    session_id = old.events[0].session_id
    app = make_app(settings, resume=session_id)
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, lambda: app.view.last_answer == "the old answer", what="the replayed transcript")
        await settled(pilot, app)
        transcript = app.query_one(Transcript)
        assert any("the old prompt" in view.item.text for view in prompts(app))
        [block] = tool_blocks(app)
        transcript.text_of(block.item)  # drawn: a failure opens itself
        assert block.item.failed and block.expanded
        assert app.view.session_id == session_id
        await app._close_session()


async def test_keys_history_newline_and_quit(settings: Settings, scripted_model: ScriptedModel) -> None:
    scripted_model.add(reply("one"), reply("two"))
    app = make_app(settings)
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, lambda: app.session is not None)
        prompt = app.query_one(PromptInput)
        await type_prompt(pilot, "first")
        await on_screen(pilot, lambda: app.view.last_answer == "one")
        await pilot.press("a", "ctrl+j", "b")
        assert prompt.text == "a\nb"  # Ctrl+J is a newline, not a send
        await pilot.press("up", "up")  # the first Up moves to line 1, the next browses history
        assert prompt.text == "first"
        await pilot.press("down")
        assert prompt.text == "a\nb"  # the draft comes back
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.is_running  # the first Ctrl+C only says how
        await pilot.press("ctrl+c")
        await on_screen(pilot, lambda: not app.is_running, what="the app to quit")
    assert app.session is None  # closed on the way out


async def test_no_model_offers_the_offline_demo_in_a_new_folder(settings: Settings) -> None:
    settings.model = ""
    app = make_app(settings)
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, lambda: app.query_one("#setup").display)
        await pilot.pause()
        help_text = str(app.query_one("#setup-help").render())
        assert "--model" in help_text and "WORKBENCH_MODEL" in help_text and "config.toml" in help_text
        await pilot.click("#try-demo")
        await on_screen(pilot, lambda: app.session is not None, what="the demo session")
        demo_folder = app.session.settings.workspace  # type: ignore[union-attr]
        assert demo_folder != settings.workspace and "workbench-demo-" in demo_folder.name
        await on_screen(pilot, lambda: app.view.last_answer.startswith("Done"), timeout=90, what="the demo's answer")
        failed = [i for i in app.view.transcript("main") if isinstance(i, ToolItem) and i.failed]
        assert failed and (demo_folder / "auth.go").exists()  # a real failure, then the recovery
        assert not list(settings.workspace.iterdir())  # nothing in the person's folder
        assert "scripted" in str(app.query_one("#header").render())
        await app._close_session()
    shutil.rmtree(demo_folder)


async def test_two_thousand_items_draw_only_the_rows_in_view(settings: Settings) -> None:
    from tests.tui_events import EventLog

    log = EventLog()
    log.spawn("main", "main", "long")
    log.run("long")
    for n in range(1000):
        log.tool("read_file", {"path": f"f{n}.txt"}, output=f"line {n}")
        log.say(f"answer {n}")
    app = WorkbenchApp(settings, blink=False, preload=False, offline=True)
    async with app.run_test(size=SIZE) as pilot:
        app.apply_events(log.events)
        await pilot.pause()
        transcript = app.query_one(Transcript)
        items = app.view.transcript("main")
        assert len(items) > 2000 and transcript.items is items
        assert len(transcript._lines) <= SIZE[1]  # only the items in view were drawn
        screen = "\n".join(strip.text for strip in app.screen._compositor.render_strips())
        assert "answer 999" in screen and "answer 0\n" not in screen
        transcript.focus()
        await pilot.press("home")
        await pilot.pause()
        assert transcript.frame()[0][0] == 0 and transcript.cursor == items[0].key  # the oldest, at once
        screen = "\n".join(strip.text for strip in app.screen._compositor.render_strips())
        assert "f0.txt" in screen and "answer 999" not in screen
        assert len(transcript._lines) <= 2 * SIZE[1]  # and nothing between was drawn
        await pilot.press("end")
        await pilot.pause()
        assert transcript.top is None and transcript.frame()[-1][0] == len(items) - 1  # back to the newest
        await asyncio.sleep(0)


async def test_the_picker_resumes_the_chosen_session(settings: Settings, scripted_model: ScriptedModel) -> None:
    scripted_model.add(reply("older answer"), reply("newer answer"), reply("continued"))
    older = await run_agent(settings, "older prompt")
    newer = await run_agent(settings, "newer prompt")
    app = make_app(settings, pick=True)
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, lambda: isinstance(app.screen, ResumePicker), what="the picker")
        picker = app.screen
        assert isinstance(picker, ResumePicker)
        assert [s.id for s in picker.sessions][:2] == [newer.events[0].session_id, older.events[0].session_id]
        await pilot.press("down", "enter")  # the older one
        await on_screen(pilot, lambda: app.view.last_answer == "older answer", what="the older transcript")
        assert app.session is not None and app.session.id == older.events[0].session_id
        await type_prompt(pilot, "go on")
        await on_screen(pilot, lambda: app.view.last_answer == "continued")
        assert "older prompt" in str(scripted_model.requests[-1]["messages"])  # the conversation continued
        await app._close_session()


async def test_switch_model_continues_the_session_on_the_new_model(
    settings: Settings, scripted_model: ScriptedModel
) -> None:
    scripted_model.add(reply("first"), reply("second"))
    app = make_app(settings, prompt="hello")
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, lambda: app.view.last_answer == "first" and not app.view.busy)
        session_id = app.session.id  # type: ignore[union-attr]
        app.action_switch_model()
        await on_screen(pilot, lambda: isinstance(app.screen, AskText), what="the model question")
        app.screen.query_one(Input).value = "openai/other-model"
        await pilot.press("enter")
        await on_screen(pilot, lambda: app.session is not None and app.session.settings.model == "openai/other-model")
        assert app.session.id == session_id  # type: ignore[union-attr]
        await type_prompt(pilot, "again")
        await on_screen(pilot, lambda: app.view.last_answer == "second")
        assert scripted_model.requests[-1]["model"] == "other-model"
        assert "hello" in str(scripted_model.requests[-1]["messages"])
        await app._close_session()


async def test_compact_now_compacts_between_runs(settings: Settings, scripted_model: ScriptedModel) -> None:
    """The palette's Compact now reaches Session.compact; its compaction notice reaches the view."""
    scripted_model.add(reply("one"), reply("two"), reply("three"), reply("the summary"))
    app = make_app(settings)
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, lambda: app.session is not None, what="the session to open")
        for count, prompt in enumerate(("a", "b", "c"), 1):
            await type_prompt(pilot, prompt)
            await on_screen(pilot, lambda n=count: len(scripted_model.requests) == n and not app.view.busy)
        app.action_compact()
        await on_screen(pilot, lambda: len(scripted_model.requests) == 4, what="the summary request")


async def test_a_selected_subagent_is_steered_by_the_prompt(settings: Settings, scripted_model: ScriptedModel) -> None:
    """Select a child and type: the prompt says whom it addresses, and the note reaches that child's
    next request while its parent keeps waiting on it."""
    router = Router(
        CHILD=[reply("", call("bash", command="sleep 3; echo drawn")), reply("drawn as asked")],
        parent=[
            reply("", call("subagent", {"action": "create", "mode": "async", "name": "slow", "prompt": "CHILD: draw"})),
            reply("waiting for it"),
            reply("done"),
        ],
    )
    scripted_model.add(*[router] * 6)
    app = make_app(settings, prompt="parent task")
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, lambda: "a1" in app.view.agents and app.view.agents["a1"].tool_calls == 1)
        prompt = app.query_one(PromptInput)
        assert prompt.border_title == "to main"
        await on_screen(pilot, lambda: app.query_one("#side").display, what="the Agents column (shown with a subagent)")
        agents = app.query_one(AgentsPane)
        agents.focus()

        def a1_selected() -> bool:
            if agents.selected_agent != "a1":
                agents.select_agent("a1")
            return agents.selected_agent == "a1" and app.selected == "a1"

        await on_screen(pilot, a1_selected, what="a1 selected")
        assert prompt.border_title == "to subagent slow (a1), at its next turn"
        await type_prompt(pilot, "use blue")
        await on_screen(pilot, lambda: app.view.agents["a1"].status == pb.AGENT_STATUS_COMPLETED, what="a1 done")
        child = [r for r in scripted_model.requests if "CHILD" in str(r["messages"][1]["content"])]
        assert child[-1]["messages"][-1] == {"role": "user", "content": "use blue"}
        parent = [r for r in scripted_model.requests if r["messages"][1]["content"] == "parent task"]
        assert all("use blue" not in str(r["messages"]) for r in parent)  # the note went to the child only
        await on_screen(pilot, lambda: "has finished" in str(prompt.border_title), what="the prompt says a1 finished")


async def test_the_first_prompt_shows_at_once_while_the_engine_starts(
    settings: Settings, scripted_model: ScriptedModel
) -> None:
    """Defect 1: Enter on the first frame showed nothing for ~4 s (the prompt waited for the session)."""
    scripted_model.add(reply("hello there"))
    app = make_app(settings)
    async with app.run_test(size=SIZE) as pilot:
        app.prompt_input.text = "quick hello"
        await pilot.press("enter")  # on the first frame: the engine is (normally) still starting
        await pilot.pause()  # one frame: the prompt is on the screen, whether the session is open or not
        assert [view.item.text for view in prompts(app)] == ["quick hello"]
        if app.session is None:  # still opening: the item and the working line say so
            assert "sending" in app.transcript.text_of(prompts(app)[0].item)
            assert app.working_line.display and "starting" in str(app.working_line.render())
        await on_screen(pilot, lambda: app.view.last_answer == "hello there", what="the answer")
        assert [view.item.text for view in prompts(app)] == ["quick hello"]  # once, not twice
        await app._close_session()


async def test_the_narrow_layout_follows_each_resize(settings: Settings) -> None:
    """Defect 2: the layout read the previous size, so it switched one resize late."""
    from tests.tui_events import subagents_with_inbox

    app = WorkbenchApp(settings, blink=False, preload=False, offline=True)
    async with app.run_test(size=(160, 48)) as pilot:
        app.apply_events(subagents_with_inbox().events)
        await pilot.pause()
        assert not app.screen.has_class("narrow")
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert app.screen.has_class("narrow") and app.query_one("#side").size.width <= 27
        await pilot.resize_terminal(160, 48)
        await pilot.pause()
        assert not app.screen.has_class("narrow")


async def test_typing_anywhere_goes_to_the_prompt(settings: Settings, scripted_model: ScriptedModel) -> None:
    """Defect 11: Tab into the transcript, the palette opened and closed, then typing: it reached nothing."""
    scripted_model.add(reply("", call("read_file", path="a.txt")), reply("one"), reply("two"))
    (settings.workspace / "a.txt").write_text("a\n")
    app = make_app(settings, prompt="first")
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, lambda: app.view.last_answer == "one" and not app.view.busy)
        await settled(pilot, app)
        transcript = app.query_one(Transcript)
        await pilot.press("tab")  # one tab stop: the transcript (its items are not tab stops)
        assert app.focused is transcript
        await pilot.press("ctrl+p")
        await on_screen(pilot, lambda: len(app.screen_stack) > 1, what="the palette")
        await pilot.press("escape")
        await on_screen(pilot, lambda: len(app.screen_stack) == 1)
        await pilot.press(*"second", "enter")
        await on_screen(pilot, lambda: app.view.last_answer == "two", what="the typed prompt's answer")
        await settled(pilot, app)
        assert any(view.item.text == "second" for view in prompts(app))
        assert isinstance(app.focused, PromptInput)
        await pilot.press("tab")
        await pilot.press("escape")  # Esc in a pane: back to the prompt
        assert isinstance(app.focused, PromptInput)
        await app._close_session()


async def test_three_children_each_delivery_once_inbox_read_root_row_restarts(
    settings: Settings, scripted_model: ScriptedModel
) -> None:
    """Defects 4, 5, 10: with three async children (fast, failing with HTTP 500, slow) each Inbox
    delivery shows once in the root's transcript, the unread count goes down once the root took
    them in, and the root's row starts again (status, elapsed) with the next run."""
    settings.retry_max_attempts = 1
    router = Router(
        FAST=[reply("fast done")],
        BROKEN=[error(500, "upstream exploded")],
        SLOW=[reply("", call("bash", command="sleep 1; echo slow")), reply("slow done")],
        parent=[
            reply(
                "",
                call("subagent", {"action": "create", "mode": "async", "name": "fast", "prompt": "FAST: go"}),
                call("subagent", {"action": "create", "mode": "async", "name": "broken", "prompt": "BROKEN: go"}),
                call("subagent", {"action": "create", "mode": "async", "name": "slow", "prompt": "SLOW: go"}),
            ),
            *[
                reply("noted", delay=0.5) for _ in range(6)
            ],  # one a turn (deliveries take 1 to 3 turns); 0.5 s: a run long enough to look at
        ],
    )
    scripted_model.add(*[router] * 12)
    app = make_app(settings, prompt="parent task")
    async with app.run_test(size=SIZE) as pilot:

        def all_reported() -> bool:
            rows = app.view.agents
            return not app.view.busy and len(rows) == 4 and all(r.final for r in rows.values())

        await on_screen(pilot, all_reported, timeout=90, what="the three children to report and the root to end")
        await settled(pilot, app)
        items = app.view.transcript("main")
        deliveries = [i for i in items if isinstance(i, UserItem) and i.author == pb.AUTHOR_INBOX]
        assert deliveries and len({i.text for i in deliveries}) == len(deliveries)  # each delivery once
        delivered = "\n".join(i.text for i in deliveries)
        assert all(f"({a})" in delivered for a in ("a1", "a2", "a3"))
        assert app.view.unread == 0 and "unread" not in str(app.inbox_pane.border_title)
        root = app.view.agents["main"]
        assert root.status == pb.AGENT_STATUS_COMPLETED
        first_end = root.ended
        await type_prompt(pilot, "again")
        await on_screen(pilot, lambda: app.view.busy, what="the second run")
        assert root.started >= first_end and root.ended == 0.0
        assert root.status not in (pb.AGENT_STATUS_COMPLETED, pb.AGENT_STATUS_FAILED)
        await on_screen(pilot, lambda: not app.view.busy, what="the second run's end")
        await app._close_session()


async def test_changed_files_show_every_change_of_a_new_file(settings: Settings, scripted_model: ScriptedModel) -> None:
    """Defect 7: Ctrl+O showed only the last hunk of a file made in the session, not its new-file diff."""
    scripted_model.add(
        reply("", call("write_file", path="a.txt", content="one\ntwo\n")),
        reply("", call("edit_file", path="a.txt", old_text="two", new_text="three")),
        reply("done"),
    )
    app = make_app(settings, prompt="make a.txt")
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, lambda: app.view.last_answer == "done" and not app.view.busy)
        await pilot.press("ctrl+o")
        await on_screen(pilot, lambda: isinstance(app.screen, ChangedFiles), what="the changed files")
        await pilot.pause()
        shown = str(app.screen.query_one("#diff").render())
        assert "@@ -0,0 +1,2 @@" in shown and "+one" in shown  # the file as it was made
        assert "-two" in shown and "+three" in shown  # and the edit after it
        await app._close_session()
