"""read_file and grep throughput on a generated tree of 10,000 files, against `cat` and `grep -r`.

    .venv/bin/python -m tools.benchmarks.files      # or: .venv/bin/python tools/bench.py files

Both sides run in the same process run, on the same tree, with a warm page cache (one untimed
pass first), median of three passes:
- read_file: every file through `Toolbox.invoke` (argument validation, confinement, decoding,
  numbering, the per-agent "seen" record), against one `cat` process reading all of them
  (`xargs -0 cat > /dev/null`), and against a bare `Path.read_bytes()` loop in Python.
- grep: one grep tool call over the tree (walk, .gitignore rules, binary check, sorted capped
  report), against `grep -rnE PATTERN DIR > /dev/null`; a rare pattern and a common one.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from workbench.config.settings import Settings  # noqa: E402
from workbench.core.feedback import model_text  # noqa: E402
from workbench.pb import workbench_pb2 as pb  # noqa: E402
from workbench.tools.registry import Toolbox, ToolContext  # noqa: E402

FOLDERS, PER_FOLDER = 100, 100  # 10,000 files
RARE = r"NEEDLE_[0-9]+"  # in one file of a hundred
COMMON = r"return"  # on many lines of every file


def make_tree(root: Path) -> list[Path]:
    """10,000 Python-like files of about 1 KB each, in 100 folders."""
    files = []
    for d in range(FOLDERS):
        folder = root / f"pkg{d:02}"
        folder.mkdir(parents=True)
        for f in range(PER_FOLDER):
            n = d * PER_FOLDER + f
            body = [f'"""Module {n}."""', "", "import os", ""]
            for k in range(12):
                body += [
                    f"def handle_{k}(value: int) -> int:",
                    f"    total = value * {k} + {n}",
                    "    return total",
                    "",
                ]
            if n % 100 == 7:
                body.append(f"# NEEDLE_{n} marks this file")
            path = folder / f"mod{f:03}.py"
            path.write_text("\n".join(body) + "\n")
            files.append(path)
    return files


def median_seconds(fn: Callable[[], object], runs: int = 3) -> float:
    fn()  # warm the page cache and the code paths
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def report(name: str, value: float, baseline_name: str, baseline: float, unit: str) -> None:
    print(
        f"  {name:<36} {value:10.1f} {unit}   vs {baseline_name:<30} {baseline:10.1f} {unit}"
        f"   ratio {baseline / value if value else float('inf'):6.2f}x slower"
    )


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="wb-bench-files-") as tmp:
        root = Path(tmp) / "ws"
        files = make_tree(root)
        megabytes = sum(p.stat().st_size for p in files) / 1e6
        settings = Settings(workspace=root, data_dir=Path(tmp) / "data")
        ctx = ToolContext(workspace=root, settings=settings, session_dir=Path(tmp) / "session")
        toolbox = Toolbox(["read_file", "grep"])
        rel = [p.relative_to(root).as_posix() for p in files]
        print(f"files: {len(files):,} files, {megabytes:.1f} MB, {shutil.which('grep')} and {shutil.which('cat')}")

        def read_all_tool() -> None:
            async def run() -> None:
                for i, path in enumerate(rel):
                    call = pb.ToolCall(id=f"r{i}", name="read_file", arguments=json.dumps({"path": path}))
                    result = await toolbox.invoke(call, ctx)
                    assert not result.is_error, model_text(result)

            asyncio.run(run())

        def read_all_python() -> None:
            for path in files:
                path.read_bytes()

        listing = b"\0".join(str(p).encode() for p in files)

        def read_all_cat() -> None:
            subprocess.run(["xargs", "-0", "cat"], input=listing, stdout=subprocess.DEVNULL, check=True)

        tool_s = median_seconds(read_all_tool)
        cat_s = median_seconds(read_all_cat)
        python_s = median_seconds(read_all_python)
        print("  read_file, every file (files per second; higher is better)")
        report("read_file tool", len(files) / tool_s, "one cat process (xargs cat)", len(files) / cat_s, "files/s")
        report("read_file tool", megabytes / tool_s, "one cat process (xargs cat)", megabytes / cat_s, "MB/s")
        report("read_file tool", len(files) / tool_s, "bare Path.read_bytes loop", len(files) / python_s, "files/s")
        print(f"    per file: read_file {tool_s / len(files) * 1e6:.0f} us, cat {cat_s / len(files) * 1e6:.0f} us")

        print("  grep over the tree (MB searched per second; higher is better)")
        for label, pattern in (("rare", RARE), ("common", COMMON)):

            def grep_tool(pattern: str = pattern) -> None:
                call = pb.ToolCall(id="g", name="grep", arguments=json.dumps({"pattern": pattern}))
                result = asyncio.run(toolbox.invoke(call, ctx))
                assert not result.is_error, model_text(result)

            def grep_r(pattern: str = pattern) -> None:
                subprocess.run(["grep", "-rnE", pattern, str(root)], stdout=subprocess.DEVNULL, check=True)

            tool_s = median_seconds(grep_tool)
            grep_s = median_seconds(grep_r)
            report(f"grep tool, {label} /{pattern}/", megabytes / tool_s, "grep -rnE", megabytes / grep_s, "MB/s")
            print(f"    wall time: grep tool {tool_s * 1000:.0f} ms, grep -r {grep_s * 1000:.0f} ms")


if __name__ == "__main__":
    main()
