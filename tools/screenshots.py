#!/usr/bin/env python3
"""Screenshots of the real app, as SVG and PNG, into screenshots/ (the README shows them).

    .venv/bin/python tools/screenshots.py            # every scene
    .venv/bin/python tools/screenshots.py welcome    # only the scenes whose names start so

Each scene drives the real app on a real session: the offline demo model (the welcome in a fresh
folder before the first prompt, the approval modal of the default ask mode, and the main view),
the scripted model server (a failed call with partial output; subagents with the Inbox; a looping
agent stopped for the person; a grandchild's review put aside, its row marked "needs you"; the
rewind screen), and the resume picker over the sessions those made.
PNGs are drawn from the SVGs with cairosvg.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import cairosvg  # noqa: E402
from textual.pilot import Pilot  # noqa: E402

from tests.engine.test_agents import after_inbox, create, route  # noqa: E402
from tests.scripted_server import Router, ScriptedModel, call, error, reply  # noqa: E402
from tests.waiting import on_screen  # noqa: E402
from workbench.config.settings import Settings  # noqa: E402
from workbench.tui.app import DEMO_PROMPT, WorkbenchApp  # noqa: E402
from workbench.tui.approval import ApprovalScreen  # noqa: E402
from workbench.tui.footer import KeysFooter  # noqa: E402
from workbench.tui.rewind_screen import RewindReview, TurnPicker  # noqa: E402

OUT = ROOT / "screenshots"
SIZES = {"": (160, 48), "-80x24": (80, 24)}  # a roomy terminal and the smallest usual one
ONLY = tuple(sys.argv[1:])  # scene names to shoot (each a start of the name); none: all


async def until(pilot: Pilot[Any], condition: Callable[[], object]) -> None:
    """The scene's state, waited for as the tests wait (tests/waiting.py), with a scene's patience."""
    await on_screen(pilot, condition, timeout=120.0, what="the scene's state")


PNG_FONT = "DejaVu Sans Mono"  # installed here; the SVG's Fira Code is not, and cairosvg's fallback is proportional


def write_png(svg: str, path: Path) -> None:
    """The SVG drawn as a PNG in a monospaced font: with the proportional fallback, bold names ran
    into the next word (`maincompleted`) and rows were cut early."""
    svg = svg.replace("font-family: Fira Code, monospace", f"font-family: {PNG_FONT}")
    cairosvg.svg2png(bytestring=svg.encode(), write_to=str(path))


def footer_drawn(app: WorkbenchApp) -> bool:
    """The screen's key footer, if it has one, is drawn with its keys: a focus change recomposes it,
    and for a moment (0.4 s under load) the row is blank."""
    return not app.screen.query(KeysFooter) or "palette" in app.export_screenshot()


async def shoot(
    app: WorkbenchApp, name: str, scene: Callable[[Pilot[Any]], Awaitable[None]], size: tuple[int, int]
) -> None:
    if ONLY and not name.startswith(ONLY):
        return
    async with app.run_test(size=size) as pilot:
        await scene(pilot)
        await pilot.pause(0.3)
        await until(pilot, lambda: footer_drawn(app))  # a focus change recomposes the key footer
        svg = app.export_screenshot(title=f"workbench: {name}")
        await app._close_session()
    (OUT / f"{name}.svg").write_text(svg)
    write_png(svg, OUT / f"{name}.png")
    print(f"  {name}.svg, {name}.png")


async def main() -> None:
    OUT.mkdir(exist_ok=True)
    for suffix, size in SIZES.items():
        await shoot_all(suffix, size)


async def shoot_all(suffix: str, size: tuple[int, int]) -> None:
    """Every scene at one terminal size, each file named with `suffix`."""
    data = Path(tempfile.mkdtemp(prefix="workbench-shots-"))
    demo_ws = data / "demo"
    demo_ws.mkdir()
    server = ScriptedModel()
    try:
        fresh = data / "fresh"  # a folder with nothing in it yet: the welcome before the first prompt
        fresh.mkdir()
        app = WorkbenchApp(Settings(model="demo", workspace=fresh, data_dir=data / "data"), blink=False)
        opened = app

        async def welcome(pilot: Pilot[Any]) -> None:
            await until(pilot, lambda: opened.session is not None)

        await shoot(app, f"welcome{suffix}", welcome, size)

        # the TUI's default approval mode (ask): the demo's first write waits for the person
        demo = Settings(model="demo", workspace=demo_ws, data_dir=data / "data")
        app = WorkbenchApp(demo, prompt=DEMO_PROMPT, blink=False)

        async def approval(pilot: Pilot[Any]) -> None:
            await until(pilot, lambda: isinstance(app.screen, ApprovalScreen))

        await shoot(app, f"approval{suffix}", approval, size)

        # the other scenes are about the rest of the app: their calls run without asking
        demo_ws = data / "demo-auto"
        demo_ws.mkdir()
        demo = Settings(model="demo", workspace=demo_ws, data_dir=data / "data", approval="auto")
        app = WorkbenchApp(demo, prompt=DEMO_PROMPT, blink=False)

        async def main_view(pilot: Pilot[Any]) -> None:
            await until(pilot, lambda: app.view.last_answer.startswith("Done") and not app.view.busy)

        await shoot(app, f"main-view{suffix}", main_view, size)

        project = data / "project"
        project.mkdir()
        scripted = Settings(
            model="openai/gpt-4.1",
            api_base=server.url,
            api_key="sk-screenshots",
            workspace=project,
            data_dir=data / "data",
            approval="auto",
        )
        command = (
            "for t in auth db api cli; do echo tests/test_$t.py PASSED; sleep 0.1; done; echo 'FAILED web'; exit 1"
        )
        server.add(
            reply("Running the test suite first.", call("bash", command=command)),
            reply("One test fails in `tests/test_web.py`. I'll read it before changing anything."),
        )
        app = WorkbenchApp(scripted, prompt="run the tests and fix what fails", blink=False)

        async def failed_call(pilot: Pilot[Any]) -> None:
            await until(pilot, lambda: not app.view.busy and app.view.last_answer)

        await shoot(app, f"failed-call{suffix}", failed_call, size)

        router = Router(
            TESTS=[reply("", call("bash", command="echo 31 passed")), reply("All 31 tests pass.")],
            LINT=[error(401, "invalid api key", code="invalid_api_key")],
            DOCS=[reply("", call("bash", command="sleep 30"))],
            review=[
                reply(
                    "I'll split the review across three subagents.",
                    call("subagent", {"action": "create", "name": "tests", "prompt": "TESTS: run the suite"}),
                    call("subagent", {"action": "create", "name": "lint", "prompt": "LINT: run the linters"}),
                    call("subagent", {"action": "create", "name": "docs", "prompt": "DOCS: check the README"}),
                ),
                reply("Waiting for the subagents."),
                reply("Waiting for docs."),
                reply("Waiting for docs."),
            ],
        )
        server.add(*[router] * 12)
        app = WorkbenchApp(scripted, prompt="review the repository", blink=False)

        async def subagents(pilot: Pilot[Any]) -> None:
            await until(pilot, lambda: len(app.view.inbox) >= 2)
            app.agents_pane.focus()
            app.agents_pane.select_agent("a2")

        await shoot(app, f"subagents-inbox{suffix}", subagents, size)

        await shoot_supervision(server, scripted, data, suffix, size)

        app = WorkbenchApp(scripted, pick=True, blink=False)

        async def picker(pilot: Pilot[Any]) -> None:
            await until(pilot, lambda: len(app.screen_stack) > 1)

        await shoot(app, f"resume-picker{suffix}", picker, size)
    finally:
        server.close()
        shutil.rmtree(data, ignore_errors=True)


async def shoot_supervision(
    server: ScriptedModel, scripted: Settings, data: Path, suffix: str, size: tuple[int, int]
) -> None:
    """A looping agent stopped for the person; a grandchild's review put aside while two siblings run;
    the rewind screen over a turn that changed files."""
    server.script.clear()  # what the scenes before left unused
    looping_ws = data / "looping"
    looping_ws.mkdir()
    (looping_ws / "same.txt").write_text("same\n")
    server.add(*[reply("", call("read_file", {"path": "same.txt"})) for _ in range(8)])
    looping = replace(scripted, workspace=looping_ws)
    app = WorkbenchApp(looping, prompt="what does same.txt say?", blink=False)

    async def stopped(pilot: Pilot[Any]) -> None:
        await until(pilot, lambda: isinstance(app.screen, ApprovalScreen))

    await shoot(app, f"looping{suffix}", stopped, size)
    server.script.clear()

    tree_ws = data / "tree"
    tree_ws.mkdir()
    tree = replace(scripted, workspace=tree_ws, guard_review=["write_file:*"])

    def root(body: dict[str, Any]) -> dict[str, Any]:
        texts = [m["content"] for m in body["messages"] if m["role"] == "user"]
        return reply("All three done." if "\n".join(texts).count("completed") >= 3 else "Waiting.")

    route(
        server,
        {
            "REVIEW": [
                reply(
                    "Three subagents: docs writes its notes through a helper of its own.",
                    create("DOCS: have a helper write the notes", name="docs"),
                    create("TESTS: run the suite", name="tests"),
                    create("LINT: run the linters", name="lint"),
                )
            ]
            + [root] * 10,
            "DOCS": [reply("", create("NOTES: write the release notes", name="notes")), reply("waiting")]
            + [after_inbox("docs done")] * 5,
            "TESTS": [reply("", call("bash", command="sleep 20; echo 31 passed")), reply("31 passed")],
            "LINT": [reply("", call("bash", command="sleep 20; echo clean")), reply("clean")],
            "NOTES": [reply("", call("write_file", path="NOTES.md", content="# Release notes\n")), reply("written")],
        },
        copies=60,
    )
    app = WorkbenchApp(tree, prompt="REVIEW the repository", blink=False)

    async def needs_you(pilot: Pilot[Any]) -> None:
        await until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, ApprovalScreen))
        grand = next(a for a, row in app.view.agents.items() if row.info.name == "notes")
        app.agents_pane.focus()
        app.agents_pane.select_agent(grand)

    await shoot(app, f"needs-you{suffix}", needs_you, size)
    server.script.clear()

    rewind_ws = data / "rewind"
    (rewind_ws / "src").mkdir(parents=True)
    (rewind_ws / "src" / "config.py").write_text("PORT = 8080\nDEBUG = False\n")
    (rewind_ws / "README.md").write_text("# app\n")
    server.add(
        reply("", call("edit_file", path="src/config.py", old_text="PORT = 8080", new_text="PORT = 9090")),
        reply("", call("bash", command="rm README.md && echo 'DEBUG = True' >> src/config.py")),
        reply("The port is 9090 and debugging is on."),
    )
    rewind = replace(scripted, workspace=rewind_ws)
    app = WorkbenchApp(rewind, prompt="move the app to port 9090 with debugging on", blink=False)

    async def rewind_screen(pilot: Pilot[Any]) -> None:
        await until(pilot, lambda: app.view.last_answer.startswith("The port") and not app.view.busy)
        await pilot.press("ctrl+g")
        await until(pilot, lambda: isinstance(app.screen, TurnPicker))
        await pilot.press("b", "enter")
        await until(pilot, lambda: isinstance(app.screen, RewindReview))

    await shoot(app, f"rewind{suffix}", rewind_screen, size)


if __name__ == "__main__":
    asyncio.run(main())
