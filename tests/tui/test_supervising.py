"""Supervising a tree in the real app (Pilot) on a real Session: a grandchild's review reaches the
person while two of its parent's siblings keep running: its row is highlighted at depth 2, the
header counts it, the bell and a desktop notification are written, the modal names the agent and
its task; Esc puts it aside, ctrl+r and Enter on its row bring it back."""

from __future__ import annotations

from typing import Any

import pytest
from textual.widgets import Static

from tests.engine.test_agents import after_inbox, create, route, user_texts
from tests.scripted_server import ScriptedModel, call, reply
from tests.tui.test_app import SIZE, make_app
from tests.waiting import on_screen
from workbench.config.settings import Settings
from workbench.pb import workbench_pb2 as pb
from workbench.tui.agents_pane import AgentsPane, row_label
from workbench.tui.approval import ApprovalScreen

pytestmark = pytest.mark.tui

RUNNING = pb.AGENT_STATUS_RUNNING


def root_reply(body: dict[str, Any]) -> dict[str, Any]:
    return reply("All three done." if "\n".join(user_texts(body)).count("completed") >= 3 else "Waiting.")


async def test_a_grandchilds_review_reaches_the_person_while_two_siblings_run(
    settings: Settings, scripted_model: ScriptedModel, workspace: Any
) -> None:
    settings.approval = "auto"
    settings.guard_review = ["write_file:*"]  # only the grandchild's write is reviewed
    route(
        scripted_model,
        {
            "ROOT": [
                reply(
                    "",
                    create("CHILD A: have a grandchild write", name="parent"),
                    create("CHILD B: sleep", name="sib-b"),
                    create("CHILD C: sleep", name="sib-c"),
                )
            ]
            + [root_reply] * 10,
            "CHILD A": [reply("", create("GRAND: write the note", name="grand")), reply("waiting")]
            + [after_inbox("A done")] * 5,
            "CHILD B": [reply("", call("bash", command="sleep 6; echo b")), reply("B done")],
            "CHILD C": [reply("", call("bash", command="sleep 6; echo c")), reply("C done")],
            "GRAND": [reply("", call("write_file", path="note.md", content="hi\n")), reply("G done")],
        },
    )
    app = make_app(settings, prompt="ROOT task")
    async with app.run_test(size=SIZE) as pilot:
        # the modal is app.screen as soon as it is pushed; its widgets mount after (a loaded machine saw none yet)
        await on_screen(
            pilot,
            lambda: isinstance(app.screen, ApprovalScreen) and bool(app.screen.query("#approval-title")),
            what="the grandchild's review",
        )
        view = app.view
        grand = next(a for a, row in view.agents.items() if row.info.name == "grand")
        assert view.agents[grand].info.depth == 2
        screen = app.screen
        assert isinstance(screen, ApprovalScreen)
        assert f"(agent {grand})" in str(screen.query_one("#approval-title", Static).render())
        assert "its task: GRAND: write the note" in str(screen.query_one("#approval-task", Static).render())
        # the two siblings keep running while the grandchild waits for the person
        siblings = [a for a, row in view.agents.items() if row.info.name in ("sib-b", "sib-c")]
        assert [view.agents[s].status for s in siblings] == [RUNNING, RUNNING]
        assert all(view.agents[s].tool_calls == 1 for s in siblings)
        assert view.needs_you == 1 and view.agents[grand].reviews == 1
        header = app.header_bar
        await on_screen(pilot, lambda: "1 needs you" in str(header.render()), what="the header's count")
        working = app.working_line
        await on_screen(pilot, lambda: "1 waiting for your review" in str(working.render()), what="the working line")
        assert "needs you" in row_label(view.agents[grand], 0).plain
        assert app.last_alert == f"\a\x1b]9;workbench: {grand} needs you: review write_file\x1b\\"
        # Esc puts it aside: it keeps waiting, and ctrl+r brings it back from anywhere
        await pilot.press("escape")
        await on_screen(pilot, lambda: not isinstance(app.screen, ApprovalScreen), what="the modal put aside")
        assert app.session is not None and len(app.session.pending_reviews()) == 1
        assert not (workspace / "note.md").exists()
        await pilot.press("ctrl+r")
        await on_screen(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="ctrl+r: the review again")
        await on_screen(pilot, lambda: app.agents_pane.selected_agent == grand, what="ctrl+r selects its agent")
        await pilot.press("escape")
        await on_screen(pilot, lambda: not isinstance(app.screen, ApprovalScreen), what="aside again")
        # Enter on the highlighted row opens its review
        agents = app.query_one(AgentsPane)
        agents.focus()
        await on_screen(pilot, lambda: agents.select_agent(grand) or agents.selected_agent == grand, what="its row")
        await pilot.press("enter")
        await on_screen(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="Enter: the review again")
        await pilot.press("y")
        await on_screen(pilot, lambda: (workspace / "note.md").exists(), what="the approved write")
        await on_screen(pilot, lambda: view.needs_you == 0 and "needs you" not in str(header.render()), what="no count")
        await on_screen(pilot, lambda: view.last_answer == "All three done.", what="the root's answer", timeout=90)
        assert all(row.status == pb.AGENT_STATUS_COMPLETED for row in view.agents.values())
        await app._close_session()
