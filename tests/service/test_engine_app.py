"""The app as a client of the engine (issue 32 items 3-5), under Pilot (real Textual), with a real
engine process, a second real client on the same session, litellm's real HTTP to the scripted
server. Nothing mocked."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from tests.scripted_server import ScriptedModel, call, reply
from tests.service.test_engine import wb
from tests.tui.test_app import SIZE, make_app, type_prompt
from tests.waiting import on_screen
from workbench.config.settings import Settings
from workbench.pb import workbench_pb2 as pb
from workbench.service.client import EngineClient, RemoteSession
from workbench.service.place import engine_place
from workbench.tui.approval import ApprovalScreen

pytestmark = [pytest.mark.tui, pytest.mark.slow, pytest.mark.tmux]
MODAL_CLOSED_WITHIN = 0.5  # seconds for a review answered elsewhere to close the modal here (60-70 ms at load 4)


async def test_the_app_in_the_engine_sees_a_review_answered_elsewhere_and_detaches(
    settings: Settings,
    scripted_model: ScriptedModel,
    workspace: Path,
    data: Path,
) -> None:
    assert (await asyncio.to_thread(wb, "engine", "start", "--data-dir", data)).returncode == 0
    (workspace / "auth.go").write_text("func check() bool {\n\treturn true\n}\n")
    edit = {"path": "auth.go", "old_text": "return true", "new_text": "return false"}
    scripted_model.add(reply("", call("edit_file", edit)), reply("Fixed."))
    settings.approval, settings.engine, settings.data_dir, settings.sandbox = "ask", "require", data, "off"
    app = make_app(settings)
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, lambda: app.session is not None, 120, what="the session in the engine")
        session = app.session
        assert isinstance(session, RemoteSession), session
        engine = await EngineClient.connect(engine_place(data).socket)
        other = await RemoteSession.attach(await engine.attach(session.id))  # a second client
        await engine.close()
        seen: list[pb.Event] = []
        other.subscribe(seen.append, after=0)
        await type_prompt(pilot, "fix the check")
        await on_screen(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the approval modal")
        (waiting,) = await _pending(other)
        answered = time.monotonic()
        other.decide(waiting.call_id, True)
        await on_screen(pilot, lambda: not isinstance(app.screen, ApprovalScreen), what="the modal to close")
        closed_after = time.monotonic() - answered
        await on_screen(pilot, lambda: app.view.last_answer == "Fixed.", what="the model's answer")
        assert closed_after < MODAL_CLOSED_WITHIN, closed_after
        assert "return false" in (workspace / "auth.go").read_text()
        await pilot.press("ctrl+backslash")  # detach: the app ends, the session goes on
        await on_screen(pilot, lambda: app.detached, what="the app to detach")
    assert [e.seq for e in seen] == list(range(1, len(seen) + 1))  # the other client: every event, once
    engine = await EngineClient.connect(engine_place(data).socket)
    live = [s.id for s in await engine.sessions()]
    await engine.close()
    assert session.id in live
    again = make_app(settings, resume=session.id)  # `workbench attach ID`: the app on the live session
    async with again.run_test(size=SIZE) as pilot:
        await on_screen(pilot, lambda: again.view.last_answer == "Fixed.", 60, what="the replayed answer")
        assert isinstance(again.session, RemoteSession)
        await pilot.press("ctrl+backslash")
        await on_screen(pilot, lambda: again.detached, what="the app to detach")
    await other.close()  # ends it for everyone


async def _pending(session: RemoteSession) -> list[pb.GuardDecision]:
    deadline = time.monotonic() + 30
    while not session.pending_reviews():
        assert time.monotonic() < deadline, "the other client never saw the review"
        await asyncio.sleep(0.02)
    return session.pending_reviews()
