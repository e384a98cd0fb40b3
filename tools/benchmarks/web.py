"""`workbench web` in a real browser (Debian's Chromium, headless, through Playwright).

    .venv/bin/python tools/bench.py web        # or: .venv/bin/python -m tools.benchmarks.web

Each figure has a baseline from the same run, launched in turn:
- page load to the app's first frame in the browser (navigation start to the first websocket
  message holding the header's model, timed in the page), against `workbench` in a real terminal
  (tmux) to its first frame (the same needle), both on the demo model in an empty folder;
- key press to frame in the browser with a 1,000-item transcript (keydown to the first websocket
  message holding the key, timed in the page; xterm.js then draws at its next animation frame),
  against the same scene in a terminal (tmux control mode), p50/p95 (target p95 < 100 ms).
"""

from __future__ import annotations

import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
ROOT = Path(__file__).resolve().parent.parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.web.browser import Served, browser  # noqa: E402
from tools.benchmarks.tui import FIRST_ROW, Terminal, compile_bytecode, key_latencies, p50_p95  # noqa: E402

# In the page, before textual.js: the times (performance.now(), ms from the navigation's start) of the
# websocket messages holding `window.needle`, and of each keydown.
TIMING = """
window.needle = %r;
window.hits = [];
window.keys = [];
const Native = window.WebSocket;
const decoder = new TextDecoder();
window.WebSocket = class extends Native {
  constructor(...args) {
    super(...args);
    window.opened = performance.now();
    this.addEventListener("message", (event) => {
      const at = performance.now();
      const text = typeof event.data === "string" ? event.data : decoder.decode(event.data);
      if (window.needle && text.includes(window.needle)) window.hits.push(at);
    });
  }
};
document.addEventListener("keydown", () => window.keys.push(performance.now()), true);
"""


def page_first_frame(chrome: Any, url: str) -> tuple[float, float]:
    """ms from navigation start to the first message of the app holding the header's model, and
    to the page's opening its websocket (the page, its script and the redirect before it)."""
    context = chrome.new_context(viewport={"width": 1280, "height": 800}, bypass_csp=True)  # for wait_for_function
    context.add_init_script(TIMING % FIRST_ROW.decode())
    page = context.new_page()
    page.goto(url)
    page.wait_for_function("window.hits.length > 0", timeout=120_000)
    first, opened = page.evaluate("[window.hits[0], window.opened]")
    context.close()  # the tab's app quits
    return float(first), float(opened)


def terminal_first_frame(folder: Path, data: Path) -> float:
    workbench = str(Path(sys.executable).with_name("workbench"))
    term = Terminal([workbench, "--model", "demo", "--workspace", str(folder), "--data-dir", str(data)])
    try:
        return (term.wait_output(FIRST_ROW, 60) - term.started) * 1000
    finally:
        term.close()


def first_frames(chrome: Any, tmp: Path, runs: int = 5) -> tuple[list[float], list[float], list[float]]:
    web = Served(["--model", "demo", "--workspace", str(tmp), "--data-dir", str(tmp / "data")], tmp)
    browser_ms: list[float] = []
    opened_ms: list[float] = []
    terminal_ms: list[float] = []
    try:
        for n in range(runs):
            folder = tmp / f"frame-{n}"
            folder.mkdir()
            first, opened = page_first_frame(chrome, web.url)
            browser_ms.append(first)
            opened_ms.append(opened)
            terminal_ms.append(terminal_first_frame(folder, tmp / "data"))
    finally:
        web.stop()
    return browser_ms, opened_ms, terminal_ms


def scene_server(tmp: Path, ready: Path) -> tuple[subprocess.Popen[bytes], str]:
    """`workbench web`'s server whose tabs run the 1,000-item scene of tools/benchmarks/tui.py."""
    token = secrets.token_urlsafe(16)
    port_file = tmp / f"port-{uuid.uuid4().hex[:6]}"
    tab = [sys.executable, "-m", "tools.benchmarks.tui", "scene", "thousand", str(ready)]
    process = subprocess.Popen(
        [sys.executable, "-m", "tools.benchmarks.web", "serve", token, str(port_file), *tab], cwd=ROOT
    )
    deadline = time.monotonic() + 60
    while not port_file.exists() or not port_file.read_text():
        if time.monotonic() > deadline or process.poll() is not None:
            raise TimeoutError("the scene's server did not start")
        time.sleep(0.05)
    return process, f"http://127.0.0.1:{port_file.read_text()}/?token={token}"


def browser_keys(chrome: Any, tmp: Path, presses: int = 60) -> list[float]:
    """ms from keydown of `Z` to the first message holding it, a Backspace after each."""
    ready = tmp / f"ready-web-{uuid.uuid4().hex[:6]}"
    server, url = scene_server(tmp, ready)
    try:
        context = chrome.new_context(viewport={"width": 1280, "height": 800}, bypass_csp=True)  # for wait_for_function
        context.add_init_script(TIMING % "Z")
        page = context.new_page()
        page.goto(url)
        deadline = time.monotonic() + 120
        while not ready.exists():
            if time.monotonic() > deadline:
                raise TimeoutError("the scene did not draw its history")
            page.wait_for_timeout(50)
        page.wait_for_timeout(500)
        page.locator(".xterm-helper-textarea").focus()
        samples = []
        for _ in range(presses):
            seen = int(page.evaluate("window.hits.length"))
            page.keyboard.press("Z")
            page.wait_for_function(f"window.hits.length > {seen}", timeout=10_000)
            key_at, hit_at = page.evaluate("[window.keys[window.keys.length - 1], window.hits[window.hits.length - 1]]")
            samples.append(float(hit_at) - float(key_at))
            page.wait_for_timeout(20)
            page.keyboard.press("Backspace")
            page.wait_for_timeout(30)
        context.close()
        return samples
    finally:
        server.terminate()
        server.wait(timeout=30)


def terminal_keys(tmp: Path, presses: int = 60) -> list[float]:
    ready = tmp / f"ready-term-{uuid.uuid4().hex[:6]}"
    term = Terminal([sys.executable, "-m", "tools.benchmarks.tui", "scene", "thousand", str(ready)])
    try:
        deadline = time.monotonic() + 120
        while not ready.exists():
            if time.monotonic() > deadline:
                raise TimeoutError("the scene did not draw its history")
            term.lines(0.05)
        time.sleep(0.5)
        return key_latencies(term, presses)
    finally:
        term.close()


def main() -> None:
    print("web: `workbench web` in headless Chromium (Playwright), against `workbench` in tmux")
    compile_bytecode()
    with tempfile.TemporaryDirectory() as name, browser() as chrome:
        tmp = Path(name)
        in_browser, opened, in_terminal = first_frames(chrome, tmp)
        b, o, t = statistics.median(in_browser), statistics.median(opened), statistics.median(in_terminal)
        print(f"  page load to first frame (browser)   {b:8.0f} ms   vs `workbench` in a terminal {t:6.0f} ms   "
              f"ratio {b / t:5.2f}x (median of {len(in_browser)}, launched in turn)")  # fmt: skip
        print(f"    of which the page until its websocket opens {o:6.0f} ms; the tab's app from then {b - o:6.0f} ms")
        web_keys: list[float] = []
        term_keys: list[float] = []
        for _ in range(2):
            web_keys += browser_keys(chrome, tmp)
            term_keys += terminal_keys(tmp)
        w, k = p50_p95(web_keys), p50_p95(term_keys)
        print(f"  key to frame, 1,000 items p50/p95 (browser) {w[0]:6.1f}/{w[1]:5.1f} ms   vs in a terminal "
              f"{k[0]:5.1f}/{k[1]:5.1f} ms   (target p95 < 100 ms; {len(web_keys)} presses each)")  # fmt: skip


def serve_scene(token: str, port_file: str, tab: list[str]) -> None:
    from workbench.web.server import WebServer, bind, serve

    listener = bind("127.0.0.1", 0)
    port = listener.getsockname()[1]
    Path(port_file).write_text(str(port))
    serve(WebServer(tab, token, port), listener)


if __name__ == "__main__":
    if sys.argv[1:2] == ["serve"]:
        serve_scene(sys.argv[2], sys.argv[3], sys.argv[4:])
    else:
        main()
