"""The approval modal under Pilot (real Textual): approve once, approve for the session, deny
with a reason; one modal at a time; a call settled elsewhere closes its modal; the diff comes
in the review's event, not from the workspace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.widgets import Static

from tests.scripted_server import ScriptedModel, call, reply
from tests.tui.test_app import SIZE, make_app, type_prompt
from tests.waiting import on_screen
from workbench.config.settings import Settings
from workbench.pb import workbench_pb2 as pb
from workbench.tui.approval import Approvals, ApprovalScreen, styled

pytestmark = pytest.mark.tui


class Host(App[None]):
    """A bare app that hosts the Approvals controller (the workbench app does the same)."""

    def __init__(self) -> None:
        super().__init__()
        self.answers: list[tuple[str, bool, str, bool]] = []
        self.waiting: list[pb.GuardDecision] = []  # what the session's pending_reviews would list
        self.approvals = Approvals(self, self.decide, lambda: self.waiting)

    def decide(self, call_id: str, approve: bool, reason: str, remember: bool) -> None:
        self.answers.append((call_id, approve, reason, remember))
        self.waiting = [d for d in self.waiting if d.call_id != call_id]

    def review(self, event: pb.Event) -> None:
        self.waiting.append(event.guard_decision)
        self.approvals.on_event(event)

    def settle(self, event: pb.Event) -> None:
        kind = event.WhichOneof("kind")
        call_id = event.review_decided.call_id if kind == "review_decided" else event.tool_call_finished.result.call_id
        self.waiting = [d for d in self.waiting if d.call_id != call_id]
        self.approvals.on_event(event)

    def compose(self) -> ComposeResult:
        yield Static("host")


def review(call_id: str, name: str = "bash", shown: str = "$ make deploy", **args: object) -> pb.Event:
    """A review's event as the guard commits it (`shown` is what guard.review.describe_call made)."""
    call = pb.ToolCall(id=call_id, name=name, arguments=json.dumps(args or {"command": "make deploy"}))
    decision = pb.GuardDecision(
        call_id=call_id,
        verdict=pb.GUARD_VERDICT_REVIEW,
        judge="mode",
        reason="ask mode: needs approval",
        call=call,
        shown=shown,
    )
    return pb.Event(agent_id="main", guard_decision=decision)


async def test_approve_once_and_for_the_session() -> None:
    app = Host()
    async with app.run_test() as pilot:
        app.review(review("c1"))
        app.review(review("c2", "write_file", "new file a.txt (1 lines):\n+x", path="a.txt", content="x\n"))
        await pilot.pause()
        assert isinstance(app.screen, ApprovalScreen) and app.screen.call_id == "c1"
        shown = str(app.screen.query_one("#approval-shown", Static).render())
        assert "$ make deploy" in shown
        await pilot.press("y")
        await pilot.pause()
        assert isinstance(app.screen, ApprovalScreen) and app.screen.call_id == "c2"
        assert "every write_file call" in str(app.screen.query_one("#always-hint").render())
        await pilot.press("a")
        await pilot.pause()
        assert not isinstance(app.screen, ApprovalScreen)
    assert app.answers == [("c1", True, "", False), ("c2", True, "", True)]


async def test_deny_with_a_reason() -> None:
    app = Host()
    async with app.run_test() as pilot:
        app.review(review("c1"))
        await pilot.pause()
        await pilot.click("#reason")
        await pilot.press(*"not on a Friday")
        await pilot.press("enter")
        await pilot.pause()
        assert not isinstance(app.screen, ApprovalScreen)
        app.review(review("c2"))
        await pilot.pause()
        await pilot.click("#deny")
        await pilot.pause()
    assert app.answers == [("c1", False, "not on a Friday", False), ("c2", False, "", False)]


async def test_a_call_settled_elsewhere_closes_its_modal() -> None:
    app = Host()
    async with app.run_test() as pilot:
        app.approvals.on_event(review("replayed"))  # a stored review of a resumed session: it waits no more
        await pilot.pause()
        assert not isinstance(app.screen, ApprovalScreen)
        app.review(review("c1"))
        app.review(review("c2"))
        app.review(review("c3"))
        await pilot.pause()
        # c2, still queued, is approved with c1's remembered approval; c1's run is cancelled
        app.settle(pb.Event(review_decided=pb.ReviewDecided(call_id="c2", approved=True)))
        app.settle(pb.Event(tool_call_finished=pb.ToolCallFinished(result=pb.ToolResult(call_id="c1", is_error=True))))
        await pilot.pause()
        assert isinstance(app.screen, ApprovalScreen) and app.screen.call_id == "c3"
        await pilot.press("n")
        await pilot.pause()
    assert app.answers == [("c3", False, "", False)]


async def test_the_app_asks_then_runs_or_gives_the_model_the_reason(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    """The real app on a real Session (scripted model over litellm's HTTP path, real SQLite):
    approve one write in the modal, deny the next with a reason the model then reads."""
    scripted_model.add(
        reply("", call("write_file", {"path": "approved.md", "content": "yes\n"})),
        reply("", call("write_file", {"path": "denied.md", "content": "no\n"})),
        reply("Understood: no denied.md."),
    )
    settings.approval = "ask"
    app = make_app(settings)
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, lambda: app.session is not None, what="the session")
        assert "approval: ask" in str(app.query_one("#status").render())
        await type_prompt(pilot, "write two notes")
        await on_screen(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the first approval modal")
        assert "approved.md" in str(app.screen.query_one("#approval-shown", Static).render())
        assert not (workspace / "approved.md").exists()
        agents = {a.id: a.status for a in app.session.agents()}  # type: ignore[union-attr]
        assert agents["main"] == pb.AGENT_STATUS_AWAITING_APPROVAL
        await pilot.press("y")
        await on_screen(pilot, lambda: (workspace / "approved.md").exists(), what="the approved write")
        await on_screen(
            pilot,
            lambda: (
                isinstance(app.screen, ApprovalScreen)
                and "denied.md" in str(app.screen.query_one("#approval-shown", Static).render())
            ),
            what="the second approval modal",
        )
        await pilot.click("#reason")
        await pilot.press(*"keep notes in docs/")
        await pilot.press("enter")
        await on_screen(pilot, lambda: app.view.last_answer.startswith("Understood"), what="the model's answer")
        await app._close_session()
    assert not (workspace / "denied.md").exists()
    denied = [m["content"] for m in scripted_model.requests[2]["messages"] if m["role"] == "tool"][-1]
    assert "The person denied this call: keep notes in docs/" in denied


async def test_the_diff_comes_in_the_event_not_from_the_clients_disk(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path, tmp_path: Path
) -> None:
    """The review's diff is made where the workspace is and travels in the event: the modal shows
    it although the file is gone from the workspace by the time the app draws it (moved away
    right after the review was committed, as a client on another machine never had it)."""
    (workspace / "auth.go").write_text("func check() bool {\n\treturn true\n}\n")
    edit = {"path": "auth.go", "old_text": "return true", "new_text": "return false"}
    scripted_model.add(reply("", call("edit_file", edit)), reply("Fixed."))
    settings.approval = "ask"
    app = make_app(settings)
    away = tmp_path / "auth.go.away"

    def move_away(event: pb.Event) -> None:
        if event.WhichOneof("kind") == "guard_decision" and event.guard_decision.verdict == pb.GUARD_VERDICT_REVIEW:
            (workspace / "auth.go").rename(away)

    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, lambda: app.session is not None, what="the session")
        assert app.session is not None
        app.session.subscribe(move_away)
        await type_prompt(pilot, "fix the check")
        await on_screen(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the approval modal")
        assert not (workspace / "auth.go").exists()
        shown = str(app.screen.query_one("#approval-shown", Static).render())
        assert "a/auth.go" in shown and "-\treturn true" in shown and "+\treturn false" in shown, shown
        away.rename(workspace / "auth.go")
        await pilot.press("y")
        await on_screen(pilot, lambda: app.view.last_answer == "Fixed.", what="the model's answer")
        await app._close_session()
    assert "return false" in (workspace / "auth.go").read_text()


async def test_ctrl_t_cycles_the_approval_mode(settings: Settings, scripted_model: ScriptedModel) -> None:
    settings.approval = "ask"
    app = make_app(settings)
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, lambda: app.session is not None, what="the session")
        await pilot.press("ctrl+t")
        await on_screen(pilot, lambda: "approval: auto" in str(app.query_one("#status").render()), what="auto")
        assert app.session.approval == "auto"  # type: ignore[union-attr]
        await pilot.press("ctrl+t")
        await on_screen(pilot, lambda: "approval: read-only" in str(app.query_one("#status").render()), what="ro")
        await app._close_session()


def test_the_call_is_data_never_markup() -> None:
    text = styled("$ echo '[bold red]x[/]' \\x1b\n+added\n-removed\n@@ -1 +1 @@")
    assert text.plain.splitlines()[0] == "$ echo '[bold red]x[/]' \\x1b"
    assert [span.style for span in text.spans] == ["bold", "green", "red", "cyan"]


async def test_a_looping_agent_asks_the_person_who_writes_a_note_then_cancels_it(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    """The real app on a real Session: the model that reads the same file forever stops after
    repeat_stop + 1 calls; the modal says it loops; a note reaches it; c cancels it."""
    (workspace / "same.txt").write_text("same\n")
    scripted_model.add(*[reply("", call("read_file", {"path": "same.txt"})) for _ in range(30)])
    settings.approval = "auto"
    app = make_app(settings)
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, lambda: app.session is not None, what="the session")
        await type_prompt(pilot, "read same.txt")
        await on_screen(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the looping modal")
        assert "is looping" in str(app.screen.query_one("#approval-title", Static).render())
        assert "Let it go on" in str(app.screen.query_one("#approve").render())
        assert len(scripted_model.requests) == settings.repeat_stop + 1
        await pilot.click("#reason")
        await pilot.press(*"the file says same; answer")
        await pilot.press("enter")
        await on_screen(pilot, lambda: len(scripted_model.requests) == settings.repeat_stop + 2, what="the noted call")
        assert scripted_model.requests[-1]["messages"][-1]["content"] == "the file says same; answer"
        await on_screen(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the looping modal again")
        await pilot.press("c")
        await on_screen(pilot, lambda: app.session is not None and not app.session.busy, what="the cancelled run")
        calls = len(scripted_model.requests)
        await pilot.pause(0.3)
        assert len(scripted_model.requests) == calls == settings.repeat_stop + 2
        assert app.session.last is not None and app.session.last.status == pb.RUN_STATUS_CANCELLED
        await app._close_session()


async def test_at_80_by_24_a_long_diff_leaves_the_buttons_on_the_screen() -> None:
    """Defect 3: at 80x24 the diff pushed the buttons off the screen (Enter approved blind)."""
    diff = "new file big.txt (60 lines):\n" + "".join(f"+line {n}\n" for n in range(60))
    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        app.notify("No model is set: a long toast that must not sit on the modal", timeout=30)
        app.review(review("c1", "write_file", diff, path="big.txt", content="x\n"))
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ApprovalScreen)
        for button in ("#approve", "#approve-always", "#deny", "#reason"):
            region = screen.query_one(button).region
            assert region.height and region.bottom <= 24 and region.right <= 80, f"{button} is off the screen: {region}"
        assert not app._notifications  # the modal cleared the toasts that would cover it
