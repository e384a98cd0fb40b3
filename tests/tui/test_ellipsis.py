"""No row is cut without an ellipsis: the real app under Pilot at 80x24 and 160x48, with long agent
names, causes, a long task, model and workspace, each pane focused in turn. The header, the agent's
line, the working line, the status line, each Agents row, each Inbox row and the key footer either
show their whole text or end with `…` (Textual's Footer cut the transcript's keys under the palette
key, `y co▏^p palette`; an Inbox row wrapped a long name mid-word over three lines)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

from tests.tui_events import START, EventLog
from workbench.config.settings import Settings
from workbench.pb import workbench_pb2 as pb
from workbench.tui.agents_pane import row_label
from workbench.tui.app import WorkbenchApp
from workbench.tui.inbox_pane import entry_text

pytestmark = pytest.mark.tui

NAMES = (
    "integration-test-runner-for-the-payments-service",
    "lint",
    "documentation-checker-against-the-code-and-readme",
    "dependency-auditor",
)
TASK = "review the whole repository and write a report about every module and its tests " * 2


def long_tree() -> EventLog:
    log = EventLog()
    log.spawn("main", "main", TASK)
    log.run(TASK, workspace="/home/developer/projects/a-very-long-directory-name/with/nested/folders/app")
    log.say("Splitting the review.")
    for number, name in enumerate(NAMES, 1):
        agent = f"a{number}"
        log.tool("subagent", {"action": "create", "mode": "async", "name": name, "prompt": "x"}, output=agent)
        log.spawn(agent, name, "do the long thing " * 5, parent="main")
        log.run("do the long thing", agent_id=agent)
    log.add("main", "agent_status", pb.AgentStatusChanged(agent_id="main", status=pb.AGENT_STATUS_WAITING))
    command = "pytest -q tests/integration/payments/test_refunds_and_chargebacks.py --maxfail=1"
    log.tool("bash", {"command": command}, agent_id="a1", output="ok")
    cause = "model call failed: 401 invalid API key; check WORKBENCH_API_KEY and the provider's variable"
    log.finish("a2", pb.AGENT_STATUS_FAILED, cause=cause)
    failed = pb.InboxItem(child_id="a2", child_name="lint", status=pb.AGENT_STATUS_FAILED, cause=cause)
    log.add("main", "inbox_item", failed)
    log.finish("a3", pb.AGENT_STATUS_CANCELLED, cause="cancelled by the person: it took far too long to finish")
    cancelled = pb.InboxItem(
        child_id="a3", child_name=NAMES[2], status=pb.AGENT_STATUS_CANCELLED, cause="cancelled by the person"
    )
    log.add("main", "inbox_item", cancelled)
    return log


def screen_text(app: WorkbenchApp, y: int, x0: int, x1: int) -> str:
    strip = app.screen._compositor.render_strips()[y]
    return "".join(segment.text for segment in strip)[x0:x1]


def shown_whole_or_cut(shown: str, whole: str) -> bool:
    shown, whole = shown.strip(), whole.strip()
    return whole in shown or shown.endswith("…")


def bar_faults(app: WorkbenchApp, widget: Widget, where: str) -> list[str]:
    region = widget.content_region
    shown = screen_text(app, region.y, region.x, region.right)
    whole = str(widget.render())
    return [] if shown_whole_or_cut(shown, whole) else [f"{where}: {shown.strip()!r} cut from {whole!r}"]


def faults(app: WorkbenchApp, where: str) -> list[str]:
    found: list[str] = []
    for name in ("#header", "#agent-line", "#working", "#status"):
        found += bar_faults(app, app.query_one(name), f"{where} {name}")
    agents = app.agents_pane
    region = agents.content_region
    for agent_id, node in agents.nodes_by_id.items():
        y = region.y + node.line - round(agents.scroll_y)
        if region.y <= y < region.bottom:
            shown = screen_text(app, y, region.x, region.right).lstrip(" ▼├└─│")
            whole = row_label(app.view.agents[agent_id], app.clock()).plain
            if not shown_whole_or_cut(shown, whole):
                found.append(f"{where} Agents row {agent_id}: {shown.strip()!r} cut from {whole!r}")
    inbox = app.inbox_pane
    region = inbox.content_region
    wholes = [line for entry in app.view.inbox for line in entry_text(entry).plain.split("\n")]
    shown_lines = [screen_text(app, y, region.x, region.right) for y in range(region.y, region.bottom)]
    shown_lines = [line for line in shown_lines if line.strip()]
    if len(shown_lines) != len(wholes):
        found.append(f"{where} Inbox: {len(wholes)} lines drawn as {len(shown_lines)}: {shown_lines}")
    else:
        for shown, whole in zip(shown_lines, wholes, strict=True):
            if not shown_whole_or_cut(shown, whole):
                found.append(f"{where} Inbox row: {shown.strip()!r} cut from {whole!r}")
    footer = app.query_one(Footer)
    palette = next(k for k in footer.query(FooterKey) if k.has_class("-command-palette"))
    keys = [k for k in footer.query(FooterKey) if not k.has_class("-command-palette")]
    for key in keys:
        if key.display and key.region.right > palette.region.x:
            found.append(f"{where} footer: {key.description!r} runs under the palette key")
    text = screen_text(app, footer.region.y, footer.region.x, palette.region.x)
    if not all(key.display for key in keys) and "…" not in text:
        found.append(f"{where} footer: keys left out with no ellipsis: {text.strip()!r}")
    return found


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_no_row_is_cut_without_an_ellipsis(tmp_path: Path, size: tuple[int, int]) -> None:
    model = "openrouter/anthropic/claude-3.7-sonnet-with-a-long-provider-suffix"
    settings = Settings(model=model, workspace=tmp_path, data_dir=tmp_path / "d")
    app = WorkbenchApp(settings, clock=lambda: START + 60, blink=False, preload=False, offline=True)
    found: list[str] = []
    async with app.run_test(size=size) as pilot:
        app.apply_events(long_tree().events)
        panes: list[tuple[str, Any]] = [
            ("the prompt", app.prompt_input),
            ("the Agents pane", app.agents_pane),
            ("the transcript", app.transcript),
            ("the Inbox", app.inbox_pane),
        ]
        for name, pane in panes:
            pane.focus()
            for _ in range(4):  # the footer is recomposed for the focused pane, then fitted
                await pilot.pause()
            found += faults(app, f"{size[0]}x{size[1]}, {name} focused:")
    assert not found, "\n".join(found)
