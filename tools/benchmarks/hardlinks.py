"""Checkpoints of a tree full of hard links (issue 39 item 7): 5,000 files, then `cp -al` of them,
10,000 names of 5,000 files, as pnpm's node_modules and `cp -al` trees are.

    .venv/bin/python -m tools.benchmarks.hardlinks      # or: .venv/bin/python tools/bench.py hardlinks

Each figure against the same tree copied with `cp -a` (10,000 names of 10,000 files), the same run,
warm page cache:
- the first checkpoint (every name looked at, every file hashed);
- a checkpoint after one file was appended to through one of its names (both names change), median of 20;
- a checkpoint when nothing changed, median of 200;
- an undo of 20 such appends (40 names back, the links made again);
each the median of RUNS (default 3) runs, the two trees taking turns.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from workbench.checkpoints.checkpointer import Checkpointer  # noqa: E402
from workbench.config.settings import Settings  # noqa: E402
from workbench.pb import workbench_pb2 as pb  # noqa: E402

FILES = 5_000
RUNS = int(os.environ.get("BENCH_RUNS", "3"))
TOOL = pb.CHECKPOINT_REASON_TOOL_CALL


def make_tree(root: Path, links: bool) -> list[Path]:
    """FILES files of ~2 KB in 100 folders under src/, and copy/ beside it: hard links or copies."""
    files = []
    for i in range(FILES):
        folder = root / "src" / f"pkg{i % 100:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"f{i}.js"
        path.write_text(f"// module {i}\n" + "export const x = 1;\n" * 100)
        files.append(path)
    subprocess.run(["cp", "-al" if links else "-a", str(root / "src"), str(root / "copy")], check=True)
    return [root / "copy" / p.relative_to(root / "src") for p in files]


def report(name: str, value: float, base: float, unit: str) -> None:
    ratio = value / base if base else float("inf")
    print(f"  {name:<48} {value:10.3f} {unit:<2} vs cp -a tree {base:10.3f} {unit:<2} ratio {ratio:6.2f}x")


async def measure(tmp: Path, repo: Path, copies: list[Path], links: bool, run: int) -> dict[str, float]:
    """One checkpointer's figures on the tree at `repo` (left as it was found: the undo puts it back)."""
    cps = Checkpointer(Settings(workspace=repo, data_dir=tmp / f"data-{repo.name}-{run}"), "bench")
    start = time.perf_counter()
    cp = await cps.take(TOOL)
    first = time.perf_counter() - start
    assert cp is not None and not cp.error, cp
    base = cp.commit
    one: list[float] = []
    for i in range(20):
        with copies[(i * 97 + run) % len(copies)].open("a") as fh:
            fh.write(f"// patched {i}\n")
        start = time.perf_counter()
        cp = await cps.take(TOOL)
        one.append((time.perf_counter() - start) * 1000)
        assert cp is not None and cp.files_changed == (2 if links else 1), cp
    same: list[float] = []
    for _ in range(200):
        start = time.perf_counter()
        cp = await cps.take(TOOL)
        same.append((time.perf_counter() - start) * 1000)
        assert cp is not None and cp.unchanged
    assert cp is not None
    changes = cps.changes(cp.commit, base)
    start = time.perf_counter()
    cps.restore(cp.commit, base, changes)
    undo = (time.perf_counter() - start) * 1000
    if links:
        a, b = (repo / "src" / "pkg00" / "f0.js").stat(), copies[0].stat()
        assert a.st_ino == b.st_ino, "the undo did not keep the link"
    cps.close()
    return {"first": first, "one": statistics.median(one), "same": statistics.median(same), "undo": undo}


def main() -> None:
    print(f"hardlinks: {FILES:,} files under src/ and `cp -al` of them (10,000 names), medians of {RUNS} runs")
    with tempfile.TemporaryDirectory(prefix="wb-bench-hardlinks-") as tmp_name:
        tmp = Path(tmp_name)
        trees = {links: (tmp / ("linked" if links else "copied"), links) for links in (False, True)}
        copies = {links: make_tree(repo, links) for repo, links in trees.values()}
        found: dict[bool, list[dict[str, float]]] = {False: [], True: []}
        for run in range(RUNS):  # the two trees in turn: the machine's load falls on both alike
            for repo, links in trees.values():
                found[links].append(asyncio.run(measure(tmp, repo, copies[links], links, run)))
    plain, linked = (
        {k: statistics.median(r[k] for r in found[links]) for k in found[links][0]} for links in (False, True)
    )
    report("first checkpoint", linked["first"], plain["first"], "s")
    report("checkpoint after an append through one name", linked["one"], plain["one"], "ms")
    report("checkpoint, nothing changed", linked["same"], plain["same"], "ms")
    report("undo of 20 appends (cp -al: 40 names)", linked["undo"], plain["undo"], "ms")


if __name__ == "__main__":
    main()
