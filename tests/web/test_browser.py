"""`workbench web` in a real browser (Debian's Chromium, headless, driven by Playwright), on the
offline demo model: the page with the token shows the app's header, a prompt typed into the page
runs, its tool calls ask for approval in the browser and are answered there, the answer shows; no
token, or a wrong one, is 403 with nothing of the app; a websocket from another origin is refused;
the app's keys (search, help, the palette) and a copy to the browser's clipboard; a resize; a tab
closed mid-run ends its app; two tabs on one live session in the engine (`workbench web ID`) see the
same reviews, one answers, the other closes mid-run and the run goes on.

WEB_SCREENSHOTS=DIR keeps the browser's screenshots there (screenshots/web-*.png)."""

from __future__ import annotations

import os
import shutil
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.web.browser import WORKBENCH, Served, Tab, browser, chromium

pytestmark = [pytest.mark.tui, pytest.mark.slow]

if chromium() is None and not os.environ.get("CI"):  # CI installs it (.ci/run): there it must be found
    pytest.skip("needs Chromium (apt-get install chromium)", allow_module_level=True)


@pytest.fixture
def served(tmp_path: Path, workspace: Path) -> Iterator[Served]:
    assert WORKBENCH.exists(), f"{WORKBENCH} is not installed (pip install -e .)"
    web = Served(  # the tabs' sessions in their own processes, whatever the setting `engine` defaults to
        ["--model", "demo", "--no-engine", "--workspace", str(workspace), "--data-dir", str(tmp_path / "d")], tmp_path
    )
    yield web
    web.stop()


@pytest.fixture
def chrome() -> Iterator[Any]:
    with browser() as launched:
        yield launched


def keep(page: Any, name: str, tmp_path: Path) -> None:
    shot = tmp_path / f"web-{name}.png"
    page.wait_for_timeout(300)  # xterm.js draws on its next animation frame
    page.screenshot(path=str(shot))
    if folder := os.environ.get("WEB_SCREENSHOTS"):
        shutil.copy(shot, Path(folder) / shot.name)


def test_the_demo_in_the_browser(served: Served, chrome: Any, workspace: Path, tmp_path: Path) -> None:
    page = chrome.new_page(viewport={"width": 1280, "height": 800})
    tab = Tab(page)
    page.goto(served.url)
    assert page.url == served.base + "/"  # the token left the address bar for the cookie
    tab.until("workbench", "demo (scripted")  # the header
    page.wait_for_selector("body.-first-byte")
    tab.until("· session ", "to main")  # the session is open: the prompt takes keys
    tab.type("fix the login check in auth.go")
    tab.press("Enter")
    approvals = 0
    screen = ""
    for _ in range(600):
        screen = tab.screen.text()
        if "Done:" in screen and "completed" in screen:
            break
        if "approval needed" in screen:
            if approvals == 0:
                keep(page, "approval", tmp_path)
            tab.press("Enter")  # the modal focuses "Approve once"
            approvals += 1
            tab.gone("approval needed")
        page.wait_for_timeout(200)
    assert "Done:" in screen, f"the demo did not finish; last screen:\n{screen}"
    assert approvals == 2  # write_file and the corrected edit_file (the first edit, which can only fail, is not asked)
    assert "write_file" in screen or "edit_file" in screen  # a tool call's block
    assert (workspace / "auth.go").exists()
    keep(page, "done", tmp_path)


def status_of(url: str, **headers: str) -> tuple[int, str]:
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def test_no_token_or_a_wrong_one_is_403_in_the_browser(served: Served, chrome: Any) -> None:
    page = chrome.new_page()
    for url in (served.base + "/", served.base + "/?token=not-the-token"):
        response = page.goto(url)
        assert response is not None and response.status == 403
        assert "needs the URL with its token" in page.content()
        assert page.locator("#terminal").count() == 0  # nothing of the app
    assert status_of(served.base + "/static/js/textual.js")[0] == 403
    assert served.token not in served.err.read_text()  # stderr holds no token; stdout, the one URL


def test_a_websocket_from_another_origin_is_refused(served: Served, chrome: Any, tmp_path: Path) -> None:
    """A page of another site (here: about:blank's null origin, and a page served from elsewhere)
    opens the websocket with the cookie in the browser's jar: refused, and no app starts."""
    context = chrome.new_context()
    page = context.new_page()
    page.goto(served.url)  # the cookie is in this browser now
    other = context.new_page()
    other.goto("about:blank")
    outcome = other.evaluate(
        """url => new Promise(done => {
            const ws = new WebSocket(url);
            ws.onopen = () => done("open");
            ws.onerror = () => done("refused");
        })""",
        served.base.replace("http://", "ws://") + "/ws",
    )
    assert outcome == "refused"
    assert status_of(
        served.base + "/ws",
        Cookie=f"workbench_web_{served.base.rsplit(':', 1)[1]}={served.token}",
        Origin="http://evil.example",
        Connection="Upgrade",
        Upgrade="websocket",
        **{"Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="},
    ) == (403, "403: the websocket's Origin is not this page's\n")
    log = (tmp_path / "d" / "workbench.log").read_text()
    assert "websocket refused" in log and served.token not in log  # the token is never logged


def children(pid: int) -> list[int]:
    return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def test_a_tab_closed_mid_run_ends_its_app(served: Served, chrome: Any, tmp_path: Path) -> None:
    """The tab closes while its run waits for an approval: its app quits (the session stays stored);
    and before that, a resize of the page redraws the app at the new size."""
    page = chrome.new_page(viewport={"width": 1280, "height": 800})
    tab = Tab(page)
    page.goto(served.url)
    tab.until("· session ", "to main")
    wide = tab.screen.screen.columns
    page.set_viewport_size({"width": 900, "height": 700})
    tab.until("to main")
    for _ in range(100):
        if tab.screen.screen.columns < wide and "to main" in tab.screen.text():
            break
        page.wait_for_timeout(100)
    assert tab.screen.screen.columns < wide  # the app was told the new size and drew at it
    assert "demo (scripted" in tab.screen.text()
    tab.type("fix the login check in auth.go")
    tab.press("Enter")
    tab.until("approval needed")
    assert len(children(served.process.pid)) == 1  # the tab's app
    page.close()
    for _ in range(150):
        if not children(served.process.pid):
            break
        time.sleep(0.1)
    assert children(served.process.pid) == []
    log = (tmp_path / "d" / "workbench.log").read_text()
    assert "tab closed (0 open)" in log


def test_the_keys_search_help_palette_and_the_browser_clipboard(tmp_path: Path, workspace: Path, chrome: Any) -> None:
    """The app's keys reach it through the page (Ctrl+F, F1, Ctrl+P: keys a browser has its own use
    for), and a copy lands in the browser's clipboard (OSC 52, read by xterm.js)."""
    web = Served(
        [
            "--model",
            "demo",
            "--approval",
            "auto",
            "--no-engine",
            "--workspace",
            str(workspace),
            "--data-dir",
            str(tmp_path / "d"),
        ],
        tmp_path,
    )
    try:
        context = chrome.new_context(viewport={"width": 1280, "height": 800})
        context.grant_permissions(["clipboard-read", "clipboard-write"], origin=web.base)
        page = context.new_page()
        tab = Tab(page)
        page.goto(web.url)
        tab.until("· session ", "to main")
        tab.type("fix the login check in auth.go")
        tab.press("Enter")
        tab.until("Done: CheckLogin")
        tab.press("Control+f")
        tab.until("search this transcript")
        tab.press("Escape")
        tab.gone("search this transcript")
        tab.press("F1")
        tab.until("the item before (a tall item scrolls first)")  # the help screen: the keymap table
        tab.press("Escape")
        tab.gone("the item before (a tall item scrolls first)")
        tab.press("Control+p")
        tab.until("Resume session")  # the command palette
        tab.type("Copy last answer")
        page.wait_for_timeout(300)
        tab.press("Enter")
        tab.until("Copied the last answer")
        copied = page.evaluate("navigator.clipboard.readText()")
        assert copied.startswith("Done: CheckLogin in auth.go now rejects an empty password")
    finally:
        web.stop()


def test_workbench_web_ID_no_engine_opens_that_session(tmp_path: Path, workspace: Path, chrome: Any) -> None:
    """`workbench web ID --no-engine`: a tab opens the stored session ID in its own process (its model
    and transcript); a second tab is told the session is open in another process."""
    import re
    import subprocess

    data = str(tmp_path / "d")
    ran = subprocess.run(
        [str(WORKBENCH), "run", "--model", "demo", "--approval", "auto", "--no-engine", "--workspace", str(workspace),
         "--data-dir", data, "fix the login check in auth.go"],
        capture_output=True, text=True, timeout=120, env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
    )  # fmt: skip
    found = re.search(r"workbench: session ([0-9a-f]+);", ran.stderr)
    assert ran.returncode == 0 and found, ran.stderr
    session = found.group(1)
    web = Served([session, "--no-engine", "--workspace", str(workspace), "--data-dir", data], tmp_path)
    try:
        first = Tab(chrome.new_page(viewport={"width": 1280, "height": 800}))
        first.page.goto(web.url)
        first.until("fix the login check in auth.go · demo (scripted", "Done: CheckLogin")  # its title, its model
        second = Tab(chrome.new_page(viewport={"width": 1280, "height": 800}))
        second.page.goto(web.url)
        second.until(f"session {session} is open in another workbench process")
    finally:
        web.stop()


def engine(data: str, *args: str) -> str:
    import subprocess

    done = subprocess.run([str(WORKBENCH), "engine", *args, "--data-dir", data], capture_output=True, text=True)
    return done.stdout


@pytest.mark.timeout(400)  # an engine starts, two servers, two apps on a loaded machine
def test_two_tabs_on_one_live_session_in_the_engine(tmp_path: Path, workspace: Path, chrome: Any) -> None:
    """A tab with --engine require opens its session in the engine; `workbench web ID` attaches a
    second tab to it: a prompt typed in the first asks for approval in both, the second answers, the
    first tab closes mid-run and the run goes on, answered and finished in the second."""
    import re

    data = str(tmp_path / "d")
    first_server = Served(["--model", "demo", "--engine", "require", "--workspace", str(workspace), "--data-dir", data],
                          tmp_path / "a" if (tmp_path / "a").mkdir() is None else tmp_path)  # fmt: skip
    second_server: Served | None = None
    try:
        first = Tab(chrome.new_page(viewport={"width": 1280, "height": 800}))
        first.page.goto(first_server.url)
        first.until("· session ", "to main", timeout=120)
        found = re.search(r"^  ([0-9a-f]{12})  ", engine(data, "status"), re.M)
        assert found, engine(data, "status")
        second_server = Served([found.group(1), "--workspace", str(workspace), "--data-dir", data],
                               tmp_path / "b" if (tmp_path / "b").mkdir() is None else tmp_path)  # fmt: skip
        second = Tab(chrome.new_page(viewport={"width": 1280, "height": 800}))
        second.page.goto(second_server.url)
        second.until("· session ", "to main", timeout=120)
        assert "2 clients attached" in engine(data, "status")
        first.type("fix the login check in auth.go")
        first.press("Enter")
        first.until("approval needed", "Review: write_file")
        second.until("approval needed", "Review: write_file")  # the same review in the other tab
        second.press("y")  # approve once, in the second tab
        first.gone("Review: write_file")  # its modal closes in the first
        first.until("Review: edit_file")  # the next review, in both
        second.until("Review: edit_file")
        first.page.close()  # the first tab closes mid-run: its app detaches, the run waits on
        second.press("y")
        second.until("Done: CheckLogin", timeout=120)
        assert "return false" in (workspace / "auth.go").read_text()
        assert "1 client attached" in engine(data, "status")
    finally:
        for served in (first_server, second_server):
            if served is not None:
                served.stop()
        engine(data, "stop")
