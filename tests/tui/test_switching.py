"""Switching the shown agent while events stream in (defect 10: an Inbox delivery, or any item,
drawn twice in the root's transcript).

The app folds events into the view model at once but redraws at most every RENDER_INTERVAL; an
agent chosen in between was shown from the view model (its new items included) and the redraw
then added those items again: two widgets for one item, and the older one, no longer tracked,
stayed on the screen in every transcript shown after. Seen in the real app on a real session
(three async children, the root streaming slowly, the person moving between a child and the root
every 40 ms: an answer drawn twice); here the same order of things, made certain by a long
redraw interval."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

import pytest

from tests.scripted_server import Router, ScriptedModel, call, error, reply
from tests.tui.test_app import SIZE, make_app, settled
from tests.tui_events import START, subagents_with_inbox
from tests.waiting import on_screen
from workbench.config.settings import Settings
from workbench.pb import workbench_pb2 as pb
from workbench.tui import redraw
from workbench.tui.app import WorkbenchApp

pytestmark = pytest.mark.tui

DELIVERY = "[Inbox: 1 item]\n- subagent tests (a1) completed\n  result: All 31 tests pass."


def screen(app: WorkbenchApp) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


async def test_an_item_that_arrives_while_the_person_switches_agents_is_drawn_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(redraw, "RENDER_INTERVAL", 3.0)  # the redraw after the switch comes later
    settings = Settings(model="openai/gpt-4.1", workspace=tmp_path, data_dir=tmp_path / "d")
    app = WorkbenchApp(settings, clock=lambda: START + 60, blink=False, preload=False, offline=True)
    log = subagents_with_inbox()
    async with app.run_test(size=(140, 40)) as pilot:
        for event in log.events:  # the subscriber's path: queued, folded in, drawn
            app._on_event(event)
        await on_screen(pilot, lambda: len(app.view.agents) == 5 and app.redraws.timer is None, what="the tree")
        app.agents_pane.focus()
        app.agents_pane.select_agent("a1")  # the person looks at a child
        await on_screen(pilot, lambda: app.transcript.agent_id == "a1", what="the child's transcript")
        delivery = pb.Message(role=pb.ROLE_USER, text=DELIVERY, author=pb.AUTHOR_INBOX)
        app._on_event(log.add("main", "message", delivery))  # the root takes its Inbox in
        await on_screen(pilot, lambda: app.view.unread < 3, what="the delivery folded in")
        assert app.redraws.timer is not None  # not drawn yet: the redraw waits its interval
        app.agents_pane.select_agent("main")  # and the person goes back to the root
        await on_screen(pilot, lambda: app.transcript.agent_id == "main", what="the root's transcript")
        await on_screen(pilot, lambda: app.redraws.timer is None, timeout=30, what="the redraw")
        await pilot.pause()
        drawn = screen(app).count("result: All 31 tests pass.")
        assert drawn == 1, f"the delivery is drawn {drawn} times"
        app.agents_pane.select_agent("a1")  # nothing of the root's stays behind in a child's transcript
        await on_screen(pilot, lambda: app.transcript.agent_id == "a1", what="the child's transcript again")
        await pilot.pause()
        assert "result: All 31 tests pass." not in screen(app)


@pytest.mark.tmux  # the slow child's bash call starts the session's tmux server
async def test_moving_between_agents_during_a_real_run_draws_each_item_once(
    settings: Settings, scripted_model: ScriptedModel
) -> None:
    """The tester's setup: three async children (fast, failing with HTTP 500, slow), the root taking
    in their Inbox deliveries while its answers stream slowly; the person moves between a child and
    the root every 40 ms. Before, every one of 3 runs drew items twice (the deliveries, an answer)."""
    settings.retry_max_attempts = 1
    answer = "Noted, " + "and here is more of the answer, streamed slowly. " * 6
    router = Router(
        FAST=[reply("fast done")],
        BROKEN=[error(500, "upstream exploded")],
        SLOW=[reply("", call("bash", command="sleep 3; echo slow")), reply("slow done")],
        parent=[
            reply(
                "Starting three children.",
                *(
                    call("subagent", {"action": "create", "mode": "async", "name": name, "prompt": f"{key}: go"})
                    for name, key in (("fast", "FAST"), ("broken", "BROKEN"), ("slow", "SLOW"))
                ),
            ),
            *[reply(answer, chunk_delay=0.05) for _ in range(8)],
        ],
    )
    scripted_model.add(*[router] * 14)
    app = make_app(settings, prompt="parent task")
    async with app.run_test(size=SIZE) as pilot:

        def done() -> bool:
            rows = app.view.agents
            return not app.view.busy and len(rows) == 4 and all(r.final for r in rows.values())

        await on_screen(pilot, lambda: len(app.view.agents) > 1, what="the first child")
        app.agents_pane.focus()
        deadline = time.monotonic() + 90
        while not done() and time.monotonic() < deadline:
            for agent in ("a1", "main"):
                app.agents_pane.select_agent(agent)
                await pilot.pause(0.04)
        assert done(), "the run did not end"
        app.agents_pane.select_agent("main")
        await on_screen(pilot, lambda: app.transcript.agent_id == "main", what="the root's transcript")
        await settled(pilot, app)
        transcript = app.transcript
        assert transcript.items is app.view.transcript("main")  # what it draws rows from
        drawn = Counter(item.key for item in transcript.items)
        assert drawn and max(drawn.values()) == 1, f"items drawn twice: {[k for k, n in drawn.items() if n > 1]}"
        rows = [number for number, _ in transcript.frame() if number >= 0]
        assert rows == sorted(rows)  # each item's rows once, in order
        await app._close_session()
