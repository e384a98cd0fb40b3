"""The TUI: first frame, events per second into a live app, key-press latency, memory.

    .venv/bin/python -m tools.benchmarks.tui      # or: .venv/bin/python tools/bench.py tui
    .venv/bin/python -m tools.benchmarks.tui keys # the key-to-frame lines alone

Each figure has a baseline from the same run:
- first frame of the app in a real terminal (tmux, median of 5 launches), against a bare Textual
  app with the same layout, widgets and CSS and no Workbench import (tools/benchmarks/_bare_tui.py),
  at the same terminal size (target: at most 1.3x);
- events applied per second into a live app (widgets and all), against the bare view model;
- key press to frame in a real terminal (tmux control mode reports the app's output), with
  10,000 transcript items and 100 live subagents, against the same app empty and against `cat`;
  and again while litellm imports in the background (the app's real start);
- scroll from the newest item to the oldest (Home in the transcript) to the first frame drawn
  that shows it, against one item (Up) to its frame, timed at the app's drawing;
- RSS of that 10,000-item, 100-agent app, against a process that only imported litellm.
"""

from __future__ import annotations

import asyncio
import compileall
import gc
import os
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # as workbench runs it: no network at import
if sys.argv[1:3] == ["scene", "app"]:
    gc.disable()  # as the console script starts the app (cli/launch.py): on again after its first frame
ROOT = Path(__file__).resolve().parent.parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.tui_events import EventLog  # noqa: E402
from workbench.config.settings import Settings  # noqa: E402
from workbench.pb import workbench_pb2 as pb  # noqa: E402

SIZE = (150, 45)
# The header row's model, in both apps' first frame ("workbench" alone was also in a traceback's paths)
FIRST_ROW = b"demo (scripted, not a language model)"


ITEMS, AGENTS = 10_000, 100


def big_scene(items: int = ITEMS, agents: int = AGENTS) -> EventLog:
    """A root with `items` transcript items and `agents` running subagents, started 20-30 s ago
    (the worst case for the tree: every row's elapsed time changes every second)."""
    log = EventLog(start=time.time() - 30, step=0.001)
    log.spawn("main", "main", "a long session")
    log.run("a long session")
    for n in range(items // 2):
        log.tool("read_file", {"path": f"src/module_{n}.py"}, output=f"{n}: " + "x = 1\n" * 5, seconds=0.001)
        log.say(f"Step {n}: read `src/module_{n}.py`; **nothing** to change here.")
    for n in range(agents):
        agent_id = f"a{n + 1}"
        log.spawn(agent_id, f"worker{n + 1}", f"check part {n + 1}", parent="main")
        log.run(f"check part {n + 1}", agent_id=agent_id)
    log.add("main", "agent_status", pb.AgentStatusChanged(agent_id="main", status=pb.AGENT_STATUS_WAITING))
    return log


# --- the process inside the terminal -----------------------------------------------------


def scene(kind: str, ready: str) -> None:
    """Run the app in this terminal: `big`/`empty` (offline, fixed events); `big-unfrozen` (big,
    its history left in the collector's generations: the baseline of `tui/heap.py`); `import`
    (big, litellm importing from 0.5 s after its history is drawn); or `app` (the real start:
    run_app on the demo model in a temporary folder).
    Each full collection's milliseconds are appended to `ready`.gc as it ends."""
    from workbench.tui.app import WorkbenchApp
    from workbench.tui.run import run_app

    folder = Path(tempfile.mkdtemp(prefix="bench-tui-"))
    settings = Settings(model="demo", workspace=folder, data_dir=folder / ".data")
    if kind == "app":
        run_app(settings, None, None, False)
        return
    log_collections(Path(ready + ".gc"))
    if kind == "thousand":  # 1,000 items, no subagent: `workbench web`'s key to frame (tools/benchmarks/web.py)
        events = big_scene(1_000, 0).events
    else:
        events = big_scene().events if kind != "empty" else []

    class Scene(WorkbenchApp):
        def _start(self) -> None:
            if kind == "big-unfrozen":
                self.freeze_history = lambda events: False  # type: ignore[method-assign]
            self.apply_events(events)
            if kind == "import":  # once the history's own frame is drawn, as the app shows a resumed
                self.set_timer(0.5, self._import)  # session's after the import; keys go meanwhile
            else:
                self.call_after_refresh(lambda: Path(ready).write_text(str(os.getpid())))

        def _import(self) -> None:
            import threading

            from workbench.tui.app import start_litellm_import

            thread = self.client.litellm_import = start_litellm_import()

            def note_done() -> None:
                thread.join()
                Path(ready + ".imported").write_text(str(time.time()))

            threading.Thread(target=note_done, daemon=True).start()
            Path(ready).write_text(str(os.getpid()))

    Scene(settings, preload=False, offline=True).run()


def log_collections(path: Path) -> None:
    """Append each full (generation 2) collection's milliseconds to `path` as it ends."""
    started = [0.0]

    def note(phase: str, info: dict[str, int]) -> None:
        if info["generation"] != 2:
            return
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            with path.open("a") as out:
                out.write(f"{(time.perf_counter() - started[0]) * 1000:.1f}\n")

    gc.callbacks.append(note)


def collections_since(ready: Path, seen: int) -> list[float]:
    """The full collections' milliseconds the scene logged after the first `seen` of them."""
    log = Path(str(ready) + ".gc")
    return [float(x) for x in log.read_text().split()][seen:] if log.exists() else []


# --- the driver: tmux control mode sees every byte the app writes ------------------------


class Terminal:
    """A tmux server with one pane running `command`, read through control mode."""

    def __init__(self, command: list[str]) -> None:
        self.socket = f"bench-tui-{uuid.uuid4().hex[:8]}"
        self.started = time.perf_counter()
        subprocess.run(
            ["tmux", "-L", self.socket, "-f", "/dev/null", "new-session", "-d", "-s", "s",
             "-x", str(SIZE[0]), "-y", str(SIZE[1]), *command],
            check=True,
            env={**os.environ, "TERM": "xterm-256color", "TEXTUAL_ANIMATIONS": "none"},
        )  # fmt: skip
        self.control = subprocess.Popen(
            ["tmux", "-L", self.socket, "-C", "attach", "-t", "s"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            bufsize=0,
        )
        assert self.control.stdout is not None
        self.out = self.control.stdout
        self.buffer = b""

    def lines(self, timeout: float) -> list[bytes]:
        """Lines control mode printed within `timeout` seconds (at least one if any came)."""
        ready, _, _ = select.select([self.out], [], [], timeout)
        if not ready:
            return []
        data = os.read(self.out.fileno(), 1 << 20)
        if not data:
            raise EOFError("the terminal ended (its program exited)")
        self.buffer += data
        *done, self.buffer = self.buffer.split(b"\n")
        return done

    def wait_output(self, needle: bytes, timeout: float) -> float:
        """perf_counter time at which pane output holding `needle` arrived."""
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            for line in self.lines(0.05):
                if line.startswith(b"%output") and needle in line:
                    return time.perf_counter()
        raise TimeoutError(f"no output with {needle!r} within {timeout} s")

    def drain(self, quiet: float = 0.03) -> None:
        while self.lines(quiet):
            pass

    def send(self, keys: str) -> None:
        assert self.control.stdin is not None
        self.control.stdin.write(f"send-keys -t s {keys}\n".encode())

    def pid(self) -> int:
        done = subprocess.run(
            ["tmux", "-L", self.socket, "display", "-p", "-t", "s", "#{pane_pid}"], capture_output=True, text=True
        )
        return int(done.stdout.strip())

    def close(self) -> None:
        self.control.kill()
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)


def key_latencies(term: Terminal, presses: int, gap: float = 0.02) -> list[float]:
    """Milliseconds from sending `Z` to the pane's first output holding it; a backspace after each."""
    samples = []
    term.drain()
    for _ in range(presses):
        start = time.perf_counter()
        term.send("Z")
        samples.append((term.wait_output(b"Z", 10) - start) * 1000)
        term.drain(gap)
        term.send("BSpace")
        term.drain(gap)
    return samples


def p50_p95(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def scene_terminal(kind: str, tmp: Path) -> tuple[Terminal, Path]:
    ready = tmp / f"ready-{kind}-{uuid.uuid4().hex[:6]}"
    term = Terminal([sys.executable, "-m", "tools.benchmarks.tui", "scene", kind, str(ready)])
    deadline = time.monotonic() + 120
    while not ready.exists():
        if time.monotonic() > deadline:
            term.close()
            raise TimeoutError(f"the {kind} scene did not start")
        term.lines(0.05)
    return term, ready


def compile_bytecode() -> None:
    """Byte-compile Workbench and the baseline as an installed copy is (pip compiles a wheel's
    modules; an editable install writes them at its first run). With PYTHONDONTWRITEBYTECODE set,
    as in this sandbox, every launch compiled Workbench's modules from source while Textual's came
    from the .pyc files written at its install (docs/DECISIONS.md, 2026-12-01)."""
    for folder in (ROOT / "workbench", ROOT / "tools" / "benchmarks"):
        compileall.compile_dir(folder, quiet=1)


def first_frame(tmp: Path, runs: int = 5) -> tuple[float, float, float]:
    """Median seconds to the first frame of the installed `workbench` (demo model, empty folder),
    of the app's entry alone (`run_app`, without the command line's own start), and of the bare
    Textual app with the same layout, widgets and CSS; each launched `runs` times in turn."""
    compile_bytecode()
    command, entry, bare = [], [], []
    workbench = str(Path(sys.executable).with_name("workbench"))
    for n in range(runs):
        folder = tmp / f"frame-{n}"
        folder.mkdir()
        cli = [workbench, "--model", "demo", "--workspace", str(folder), "--data-dir", str(tmp / "data")]
        for argv, samples in (
            (cli, command),
            ([sys.executable, "-m", "tools.benchmarks.tui", "scene", "app", ""], entry),
            ([sys.executable, "-m", "tools.benchmarks._bare_tui"], bare),
        ):
            term = Terminal(argv)
            samples.append(term.wait_output(FIRST_ROW, 60) - term.started)
            term.close()
    return statistics.median(command), statistics.median(entry), statistics.median(bare)


async def scroll_to_oldest(runs: int = 7) -> tuple[float, float]:
    """Milliseconds from Home in the transcript (at the newest of 10,000 items, 100 agents) to the
    first frame the app draws that shows the oldest item, median of `runs`, in this process (in
    tmux the live agents' ticking leaves no quiet frame to time); and, as the baseline, Up (one
    item) to the first frame drawn after it. Pilot sets the scene; the times come from the app's
    own drawing (`App._display`), not from Pilot's waits (which take 100+ ms by themselves). End
    brings the newest back between runs."""
    from textual import events as textual_events

    from workbench.tui.app import WorkbenchApp

    folder = Path(tempfile.mkdtemp(prefix="bench-tui-"))
    app = WorkbenchApp(Settings(workspace=folder, data_dir=folder / "d"), blink=False, preload=False, offline=True)
    frames: list[float] = []
    wanted: list[bytes] = []  # text the frame must show ([] : any frame)
    draw = app._display

    def display(screen, update) -> None:  # type: ignore[no-untyped-def]
        draw(screen, update)
        shown = "\n".join(strip.text for strip in screen._compositor.render_strips()) if wanted else ""
        if all(needle.decode() in shown for needle in wanted):
            frames.append(time.perf_counter())

    app._display = display  # type: ignore[method-assign]
    home, up = [], []

    async def key_to_frame(key: str, needles: list[bytes]) -> float:
        frames.clear()
        wanted[:] = needles
        start = time.perf_counter()
        app.post_message(textual_events.Key(key, None))
        while not frames:  # noqa: ASYNC110
            await asyncio.sleep(0.0005)
        wanted.clear()
        return (frames[0] - start) * 1000

    async with app.run_test(size=SIZE) as pilot:
        app.apply_events(big_scene().events)
        await pilot.pause()
        app.transcript.focus()
        await pilot.pause()
        for _ in range(runs):
            await pilot.press("end")
            await pilot.pause()
            up.append(await key_to_frame("up", []))
            await pilot.pause()
            home.append(await key_to_frame("home", [b"module_0.py"]))  # the oldest call's argument
            await pilot.pause()
    shutil.rmtree(folder, ignore_errors=True)
    return statistics.median(home), statistics.median(up)


async def events_per_second(count_items: int = 6000) -> tuple[float, float, int, int]:
    """Events/s through the app's subscriber path (queue, one message per batch, widgets), and
    into a bare view model; with the number of events sent and applied."""
    from workbench.tui.app import WorkbenchApp
    from workbench.tui.view import SessionView

    log = EventLog()
    log.spawn("main", "main", "many events")
    log.run("many events")
    for n in range(count_items // 3):
        call = log.tool("bash", {"command": f"make step{n}"}, streamed=f"building step {n}\n" * 3, output="ok")
        log.say(f"step {n} done ({call.id})")
    events = log.events
    start = time.perf_counter()
    SessionView().apply(events)
    bare = len(events) / (time.perf_counter() - start)

    folder = Path(tempfile.mkdtemp(prefix="bench-tui-"))
    app = WorkbenchApp(Settings(workspace=folder, data_dir=folder / "d"), blink=False, preload=False, offline=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        start = time.perf_counter()
        for i in range(0, len(events), 50):  # commits arrive in bursts, as from a busy session
            for event in events[i : i + 50]:
                app._on_event(event)
            await asyncio.sleep(0)
        # applied to the view model and drawn: the app's own queue and redraw timer drain it
        while app.view.last_seq < events[-1].seq or app.redraws.pending is not None:  # noqa: ASYNC110
            await asyncio.sleep(0.001)
        await pilot.pause()
        live = len(events) / (time.perf_counter() - start)
        applied = app.view.last_seq
    shutil.rmtree(folder, ignore_errors=True)
    return live, bare, len(events), applied


async def full_collection(frozen: bool, runs: int = 5) -> float:
    """Median milliseconds of a full collection (`gc.collect()`) in an app that applied the
    10,000 items and 100 agents, its history frozen as the app does (`tui/heap.py`) or not; in
    this process, with what it froze before unfrozen first."""
    from workbench.tui.app import WorkbenchApp

    folder = Path(tempfile.mkdtemp(prefix="bench-tui-"))
    app = WorkbenchApp(Settings(workspace=folder, data_dir=folder / "d"), blink=False, preload=False, offline=True)
    if not frozen:
        app.freeze_history = lambda events: False  # type: ignore[method-assign]
    samples = []
    gc.unfreeze()
    async with app.run_test(size=SIZE) as pilot:
        app.apply_events(big_scene().events)
        await pilot.pause()
        for _ in range(runs):
            start = time.perf_counter()
            gc.collect()
            samples.append((time.perf_counter() - start) * 1000)
    gc.unfreeze()
    shutil.rmtree(folder, ignore_errors=True)
    return statistics.median(samples)


def key_lines(tmp: Path, rounds: int = 3, presses: int = 60) -> tuple[float, float]:
    """Print key to frame with 10,000 items and 100 agents, its history frozen (as the app does)
    and not (`big-unfrozen`), launched in turn `rounds` times, against the empty app and `cat`;
    with the full collections each scene made while keys were pressed. Each launch's first press,
    which also waits for the app to finish the history's load, is given apart. The frozen figure."""
    cat = Terminal(["cat"])
    time.sleep(0.3)
    base = p50_p95(key_latencies(cat, presses))
    cat.close()
    empty, _ = scene_terminal("empty", tmp)
    quiet = p50_p95(key_latencies(empty, presses))
    empty.close()
    samples: dict[str, list[float]] = {"big": [], "big-unfrozen": []}
    pauses: dict[str, list[float]] = {"big": [], "big-unfrozen": []}
    memory: dict[str, list[float]] = {"big": [], "big-unfrozen": []}
    firsts: dict[str, list[float]] = {"big": [], "big-unfrozen": []}
    for _ in range(rounds):
        for kind in samples:
            term, ready = scene_terminal(kind, tmp)
            firsts[kind].extend(key_latencies(term, 1))  # the app still finishing the history's load
            before = len(collections_since(ready, 0))
            samples[kind].extend(key_latencies(term, presses))
            pauses[kind].extend(collections_since(ready, before))
            memory[kind].append(rss_mb(term.pid()))
            term.close()
    frozen, unfrozen = p50_p95(samples["big"]), p50_p95(samples["big-unfrozen"])
    print(f"  key to frame, 10,000 items + 100 agents p50/p95  {frozen[0]:6.1f}/{frozen[1]:5.1f} ms   "
          f"vs empty app {quiet[0]:5.1f}/{quiet[1]:5.1f} ms, cat {base[0]:5.1f}/{base[1]:5.1f} ms   "
          f"(target p95 < 50 ms)")  # fmt: skip
    collection = {kind: asyncio.run(full_collection(kind == "big")) for kind in ("big-unfrozen", "big")}
    print(f"    a full collection with the history frozen {collection['big']:6.1f} ms   vs not frozen "
          f"{collection['big-unfrozen']:6.1f} ms (in one process, median of 5)")  # fmt: skip
    for kind, figures in (("big", frozen), ("big-unfrozen", unfrozen)):
        longest = max(pauses[kind], default=0.0)
        print(f"    {'history frozen' if kind == 'big' else 'not frozen (before)':<20} p50/p95 {figures[0]:6.1f}/"
              f"{figures[1]:5.1f} ms, longest {max(samples[kind]):5.1f}"
              f"   full collections meanwhile {len(pauses[kind]):3d}, longest {longest:6.1f} ms "
              f"RSS {statistics.median(memory[kind]):4.0f} MB ({len(samples[kind])} presses)")  # fmt: skip
    every = firsts["big"] + firsts["big-unfrozen"]
    print(f"    each launch's first press apart (the app finishing the history's load) median "
          f"{statistics.median(every):6.1f} ms, longest {max(every):6.1f} ms")  # fmt: skip
    return frozen


def import_lines(tmp: Path, rounds: int = 3, presses: int = 40) -> float:
    """Print key to frame while litellm imports in the app with 10,000 items and 100 agents (its
    real start), against the same processes after the import, launched `rounds` times; with how
    long the import took. The import starts once the history's frame is drawn (the first key
    after a long load waits for that frame: `key_lines` gives it apart). Return the app's RSS
    (MB) with litellm."""
    during: list[float] = []
    after: list[float] = []
    windows: list[float] = []
    pauses: list[float] = []
    pauses_after: list[float] = []
    memory = 0.0
    for _ in range(rounds):
        term, ready = scene_terminal("import", tmp)
        imported = Path(str(ready) + ".imported")
        started, seen = time.time(), len(collections_since(ready, 0))
        while not imported.exists() and len(during) < 200 * rounds:
            during.extend(key_latencies(term, 1, gap=0.01))
        deadline = time.monotonic() + 60
        while not imported.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        windows.append(float(imported.read_text()) - started)
        pauses.extend(collections_since(ready, seen))  # while it imported (the collector is off then)
        seen += len(collections_since(ready, seen))
        after.extend(key_latencies(term, presses))
        pauses_after.extend(collections_since(ready, seen))
        memory = rss_mb(term.pid())  # the app with 10,000 items, 100 agents and litellm loaded
        term.close()
    d, a = p50_p95(during), p50_p95(after)
    print(f"  key to frame while litellm imports p50/p95 {d[0]:6.1f}/{d[1]:5.1f} ms   vs after it, same "
          f"processes {a[0]:5.1f}/{a[1]:5.1f} ms   ({len(during)} presses during {rounds} imports of "
          f"{statistics.median(windows):.2f} s (median), {len(after)} after; full collections during "
          f"{len(pauses)}, after {len(pauses_after)}, "
          f"longest {max(pauses + pauses_after, default=0.0):.1f} ms)")  # fmt: skip
    return memory


def main() -> None:
    print("tui:")
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        frame, app_only, bare_app = first_frame(tmp)
        print(f"  first frame of `workbench` (tmux)    {frame * 1000:8.0f} ms   vs a bare Textual app, same layout "
              f"{bare_app * 1000:6.0f} ms   ratio {frame / bare_app:5.2f}x (target <= 1.3x; median of 5)")  # fmt: skip
        print(f"  first frame of run_app alone         {app_only * 1000:8.0f} ms   ratio {app_only / bare_app:5.2f}x "
              "(without the command line's start)")  # fmt: skip

        live, bare, sent, applied = asyncio.run(events_per_second())
        print(f"  events applied into a live app       {live:8.0f} /s   vs the bare view model "
              f"{bare:8.0f} /s   ratio {live / bare:5.2f}x (target >= 10000/s; {applied} of {sent})")  # fmt: skip

        key_lines(tmp)
        scroll, step = asyncio.run(scroll_to_oldest())
        print(f"  scroll newest -> oldest (Home), 10,000 items   {scroll:6.1f} ms   vs one item (Up) "
              f"{step:5.1f} ms   ratio {scroll / step:5.2f}x (key to frame, median of 7; target < 100 ms)")  # fmt: skip

        memory = import_lines(tmp)

        code = "import litellm, resource; print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
        probe = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        base_rss = int(probe.stdout.strip()) / 1024
        print(f"  RSS, 10,000 items + 100 agents + litellm       {memory:8.0f} MB   vs a process with litellm "
              f"{base_rss:8.0f} MB   ratio {memory / base_rss:5.2f}x   (target < 400 MB)")  # fmt: skip


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "scene":
        scene(sys.argv[2], sys.argv[3])
    elif sys.argv[1:] == ["keys"]:  # the key-to-frame lines alone
        with tempfile.TemporaryDirectory() as name:
            print("tui keys:")
            key_lines(Path(name))
            import_lines(Path(name))
    else:
        main()
