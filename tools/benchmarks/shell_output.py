"""A command's output in bounds: peak RSS, event-log growth and saved bytes for `yes | head -c N`.

    .venv/bin/python -m tools.benchmarks.shell_output [SIZE] [--tree OTHER_CHECKOUT]

Each measurement runs in a fresh child process (so its peak RSS is its own): a real SQLite
store, the bash tool through `Toolbox.invoke` with output events recorded, then the peak RSS
(ru_maxrss), the database's growth and the saved output's size. The baseline in the same
run is the same child doing `true` (the RSS of Python with workbench loaded). `--tree` runs
the same child against another checkout (an older commit, for a before/after).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent

CHILD = textwrap.dedent(
    """
    import asyncio, json, resource, sys, time, uuid
    from pathlib import Path
    sys.path.insert(0, sys.argv[1])
    from workbench.config.settings import Settings
    from workbench.pb import workbench_pb2 as pb
    from workbench.engine.recorder import Recorder
    from workbench.engine.store import Store
    from workbench.tools.registry import Toolbox, ToolContext
    from workbench.terminal.host import TerminalHost

    async def main(command: str, tmp: Path) -> dict:
        settings = Settings(workspace=tmp, data_dir=tmp / "data")
        store = Store(settings.db_path)
        session = store.create_session(tmp, "bench", "bench")
        store.flush()
        before = sum(p.stat().st_size for p in settings.data_dir.glob("workbench.db*"))
        recorder = Recorder(store, session, "main")
        host = TerminalHost(f"wbbench-out-{uuid.uuid4().hex[:8]}")
        ctx = ToolContext(workspace=tmp, settings=settings, session_dir=tmp / "session", terminal=host,
                          on_output=recorder.output)
        start = time.perf_counter()
        try:
            result = await Toolbox(["bash"]).invoke(pb.ToolCall(id="c1", name="bash",
                                                    arguments=json.dumps({"command": command, "timeout": 600})), ctx)
            recorder.emit(pb.ToolCallFinished(result=result))
        finally:
            await host.close()
        seconds = time.perf_counter() - start
        store.close()
        after = sum(p.stat().st_size for p in settings.data_dir.glob("workbench.db*"))
        saved = sum(p.stat().st_size for p in (tmp / "session").glob("outputs/*"))
        return {"rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "db_mb": (after - before) / 1e6,
                "saved_mb": saved / 1e6, "seconds": seconds, "error": result.error}

    print(json.dumps(asyncio.run(main(sys.argv[2], Path(sys.argv[3])))))
    """
)


def measure(tree: Path, command: str) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="wbbench-out-") as tmp:
        out = subprocess.run(
            [sys.executable, "-c", CHILD, str(tree), command, tmp], capture_output=True, text=True, check=True
        )
        return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def report(label: str, figures: dict[str, float], base: dict[str, float]) -> None:
    print(
        f"  {label:<40} peak RSS {figures['rss_mb']:8.1f} MB (vs `true` {base['rss_mb']:6.1f} MB, "
        f"{figures['rss_mb'] / base['rss_mb']:5.2f}x)  event log +{figures['db_mb']:8.1f} MB  "
        f"saved {figures['saved_mb']:8.1f} MB  {figures['seconds']:6.1f} s"
    )


def main(size: str = "1G", tree: Path = ROOT) -> None:
    """Peak RSS, event-log growth and saved output for `yes | head -c SIZE` against `true`."""
    print(f"shell output bounds: `yes | head -c {size}` through the bash tool ({tree})")
    base = measure(tree, "true")
    report(f"yes | head -c {size}", measure(tree, f"yes | head -c {size}"), base)


if __name__ == "__main__":
    args = sys.argv[1:]
    other = ROOT
    if "--tree" in args:
        i = args.index("--tree")
        other = Path(args[i + 1]).resolve()
        del args[i : i + 2]
    main(args[0] if args else "1G", other)
