"""A real browser on `workbench web`: the installed command serving on a free port of 127.0.0.1, and
Debian's Chromium, headless, driven by Playwright (its own browser download is not reachable here:
`executable_path` names the system's). Keys go in through the page (xterm.js, then the websocket);
the screen comes back from the bytes the page received on its websocket, read with pyte (xterm.js
draws on a canvas, so the page's DOM holds no text).

Also used by tools/benchmarks/web.py."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pyte

WORKBENCH = Path(sys.executable).with_name("workbench")
URL = re.compile(r"open (http://\S+)")


def chromium() -> str | None:
    """The system Chromium's binary (Debian's /usr/bin/chromium is a shell wrapper around it)."""
    for candidate in ("/usr/lib/chromium/chromium", shutil.which("chromium"), shutil.which("chromium-browser")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


class Served:
    """`workbench web ARGS --port 0` in its own process; `url` is the printed one, token and all."""

    def __init__(self, args: list[str], tmp: Path, env: dict[str, str] | None = None) -> None:
        self.out, self.err = tmp / "web.out", tmp / "web.err"
        environment = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", **(env or {})}
        with self.out.open("wb") as out, self.err.open("wb") as err:
            self.process = subprocess.Popen(
                [str(WORKBENCH), "web", "--port", "0", *args], stdout=out, stderr=err, env=environment
            )
        self.url = self._printed_url()

    def _printed_url(self, timeout: float = 60.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if found := URL.search(self.out.read_text()):
                return found.group(1)
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        raise AssertionError(f"`workbench web` printed no URL; stderr:\n{self.err.read_text()}")

    @property
    def base(self) -> str:
        return self.url.split("?", 1)[0].rstrip("/")

    @property
    def token(self) -> str:
        return self.url.split("token=", 1)[1]

    def stop(self) -> int:
        self.process.terminate()
        try:
            return self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()


class Screen:
    """What a tab's terminal shows, from the bytes its websocket received (resizes followed)."""

    def __init__(self) -> None:
        self.screen = pyte.Screen(80, 24)
        self.stream = pyte.ByteStream(self.screen)
        self.frames = 0
        self.first_frame: float | None = None  # time.monotonic() of the first bytes of the app

    def watch(self, websocket: Any) -> None:
        found = re.search(r"width=(\d+)&height=(\d+)", websocket.url)
        if found:
            self.screen.resize(int(found.group(2)), int(found.group(1)))
        websocket.on("framereceived", self._received)
        websocket.on("framesent", self._sent)

    def _received(self, payload: str | bytes) -> None:
        if isinstance(payload, bytes):
            if self.first_frame is None:
                self.first_frame = time.monotonic()
            self.frames += 1
            self.stream.feed(payload)

    def _sent(self, payload: str | bytes) -> None:
        if isinstance(payload, str) and payload.startswith('["resize"'):
            size = json.loads(payload)[1]
            self.screen.resize(size["height"], size["width"])

    def text(self) -> str:
        return "\n".join(line.rstrip() for line in self.screen.display)


class Tab:
    def __init__(self, page: Any) -> None:
        self.page = page
        self.screen = Screen()
        page.on("websocket", self.screen.watch)

    def until(self, *needles: str, timeout: float = 90.0) -> str:
        """The screen once it shows every needle (a generous bound: the machine is shared)."""
        deadline = time.monotonic() + timeout
        text = ""
        while time.monotonic() < deadline:
            text = self.screen.text()
            if all(n in text for n in needles):
                return text
            self.page.wait_for_timeout(100)  # Playwright hands over the websocket's frames while it waits
        raise AssertionError(f"the tab never showed {needles}; last screen:\n{text}")

    def gone(self, needle: str, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while needle in self.screen.text() and time.monotonic() < deadline:
            self.page.wait_for_timeout(100)

    def type(self, text: str) -> None:
        self.page.locator(".xterm-helper-textarea").focus()  # the terminal's keys go to its textarea
        self.page.keyboard.type(text)

    def press(self, key: str) -> None:
        self.page.locator(".xterm-helper-textarea").focus()
        self.page.keyboard.press(key)


@contextmanager
def browser() -> Iterator[Any]:
    """Headless Chromium from the system; the caller opens pages (`new_page`)."""
    from playwright.sync_api import sync_playwright

    executable = chromium()
    assert executable, "no chromium here: apt-get install chromium (.ci/run installs it)"
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        try:
            yield launched
        finally:
            launched.close()
