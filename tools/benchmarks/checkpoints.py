"""Checkpoints of the workspace (issue 24) on a generated repository of 10,000 files, ~200 MB.

    .venv/bin/python -m tools.benchmarks.checkpoints      # or: .venv/bin/python tools/bench.py checkpoints

Each figure with a baseline from the same run, warm page cache:
- the first checkpoint (every file hashed into the store) against `git add -A && git write-tree`
  into a scratch index of a scratch repository (target <= 1.2x); median of RUNS (default 3:
  each takes seconds on a shared machine; BENCH_RUNS=20 for the issue's medians of 20);
- a checkpoint after one file changed, against `git add FILE && git write-tree` on that index
  (target <= 20 ms), median of 20;
- a checkpoint when nothing changed, against committing one event to the SQLite log, what every
  tool call costs already (target <= 1 ms added), median of 200;
- the store after 500 checkpoints, each after a small edit of one file, packed (`git gc`), against
  one compressed copy of the tree plus every changed version compressed (target <= 1.1x);
- a rewind of 1,000 changed files against writing those 1,000 files' bytes with plain Python
  (target <= 2 s).
"""

from __future__ import annotations

import asyncio
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from workbench.checkpoints.checkpointer import Checkpointer  # noqa: E402
from workbench.checkpoints.repo import git_env, pack_and_prune, size_of  # noqa: E402
from workbench.config.settings import Settings  # noqa: E402
from workbench.engine.recorder import Recorder  # noqa: E402
from workbench.engine.store import Store  # noqa: E402
from workbench.pb import workbench_pb2 as pb  # noqa: E402

FILES, TOTAL = 10_000, 200_000_000
RUNS = int(os.environ.get("BENCH_RUNS", "3"))
TOOL = pb.CHECKPOINT_REASON_TOOL_CALL


def make_repo(root: Path) -> list[Path]:
    """10,000 files of text (sizes spread exponentially around 20 KB) in 1,000 folders."""
    rnd = random.Random(7)
    words = ["".join(rnd.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rnd.randint(2, 10))) for _ in range(5000)]
    lines = [" ".join(rnd.choices(words, k=12)) + "\n" for _ in range(20_000)]
    files = []
    for i in range(FILES):
        folder = root / f"pkg{i % 50:02d}" / f"mod{(i // 50) % 20:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        size = max(100, int(rnd.expovariate(1 / (TOTAL / FILES))))
        start = rnd.randrange(len(lines))
        body, got = [], 0
        while got < size:
            line = lines[(start + len(body)) % len(lines)]
            body.append(line)
            got += len(line)
        path = folder / f"f{i}.txt"
        path.write_text("".join(body))
        files.append(path)
    return files


def report(name: str, value: float, base_name: str, base: float, unit: str, target: str) -> None:
    ratio = value / base if base else float("inf")
    figure = f"{value:10.3f} {unit:<3} vs {base_name:<44} {base:10.3f} {unit:<3}"
    print(f"  {name:<46} {figure} ratio {ratio:6.2f}x  ({target})")


def git_add_one(env: dict[str, str], repo: Path, rel: str) -> float:
    start = time.perf_counter()
    subprocess.run(
        f"git add {rel} && git write-tree", shell=True, check=True, env=env, cwd=repo, stdout=subprocess.DEVNULL
    )
    return (time.perf_counter() - start) * 1000


def pack_baseline(git_dir: Path) -> int:
    subprocess.run(["git", "gc", "-q", "--aggressive"], env=git_env(git_dir), check=True)
    return size_of(git_dir / "objects")


def write_plain(originals: dict[Path, bytes]) -> float:
    start = time.perf_counter()
    for p, data in originals.items():
        p.write_bytes(data)
    return time.perf_counter() - start


def git_first(repo: Path, git_dir: Path) -> float:
    """`git add -A && git write-tree` into a new scratch repository and index (no object there yet,
    as none is in a new checkpoint store)."""
    subprocess.run(["git", "init", "-q", "--bare", str(git_dir)], check=True, env=git_env(git_dir))
    env = {**git_env(git_dir), "GIT_WORK_TREE": str(repo), "GIT_INDEX_FILE": str(git_dir / "scratch-index")}
    start = time.perf_counter()
    subprocess.run("git add -A && git write-tree", shell=True, check=True, env=env, cwd=repo, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    print(f"checkpoints: {FILES:,} files, ~{TOTAL // 1_000_000} MB (generating the tree takes a while)")
    with tempfile.TemporaryDirectory(prefix="wb-bench-checkpoints-") as tmp_name:
        tmp = Path(tmp_name)
        repo = tmp / "repo"
        files = make_repo(repo)
        megabytes = sum(f.stat().st_size for f in files) / 1e6
        subprocess.run(f"find {repo} -type f -exec cat {{}} + > /dev/null", shell=True, check=True)
        print(f"  the tree: {len(files):,} files, {megabytes:.0f} MB")
        asyncio.run(_measure(tmp, repo, files))


async def _measure(tmp: Path, repo: Path, files: list[Path]) -> None:
    firsts, gits = [], []
    for run in range(RUNS):
        baseline = tmp / ("git-baseline" if run == RUNS - 1 else f"git-scratch{run}")
        gits.append(await asyncio.to_thread(git_first, repo, baseline))
        settings = Settings(workspace=repo, data_dir=tmp / f"data{run}")
        cps = Checkpointer(settings, "bench")
        start = time.perf_counter()
        cp = await cps.take(TOOL)
        firsts.append(time.perf_counter() - start)
        assert cp is not None and not cp.error, cp
        if run < RUNS - 1:
            cps.close()
    report(
        "first checkpoint",
        statistics.median(firsts),
        "git add -A && git write-tree (scratch index)",
        statistics.median(gits),
        "s",
        "target <= 1.2x",
    )

    # one changed file
    env = {**git_env(tmp / "git-baseline"), "GIT_WORK_TREE": str(repo)}
    env["GIT_INDEX_FILE"] = str(tmp / "git-baseline" / "scratch-index")
    inc, git_inc = [], []
    for i in range(20):
        path = files[i * 37]
        with path.open("a") as fh:
            fh.write(f"one more line {i}\n")
        start = time.perf_counter()
        cp = await cps.take(TOOL)
        inc.append((time.perf_counter() - start) * 1000)
        assert cp is not None and cp.files_changed == 1, cp
        git_inc.append(git_add_one(env, repo, str(path.relative_to(repo))))
    report(
        "checkpoint after 1 changed file",
        statistics.median(inc),
        "git add FILE && git write-tree",
        statistics.median(git_inc),
        "ms",
        "target <= 20 ms",
    )

    # nothing changed
    store = Store(tmp / "events.db")
    recorder = Recorder(store, store.create_session(repo, "bench", "bench"), "main")
    same, event = [], []
    for _ in range(200):
        start = time.perf_counter()
        cp = await cps.take(TOOL)
        same.append((time.perf_counter() - start) * 1000)
        assert cp is not None and cp.unchanged
        start = time.perf_counter()
        recorder.emit(pb.Notice(level="info", text="x"))
        event.append((time.perf_counter() - start) * 1000)
    store.close()
    report(
        "checkpoint, nothing changed",
        statistics.median(same),
        "one event committed to the log",
        statistics.median(event),
        "ms",
        "target <= 1 ms",
    )

    # storage after 500 checkpoints of small edits
    rnd = random.Random(11)
    versions = 0
    for i in range(500):
        path = files[rnd.randrange(len(files))]
        data = path.read_bytes()
        cut = rnd.randrange(len(data))
        data = data[:cut] + f"edit {i}\n".encode() + data[cut:]
        path.write_bytes(data)
        versions += len(zlib.compress(data))
        cp = await cps.take(TOOL)
        assert cp is not None and not cp.error
    pack_and_prune(cps.store.path)
    tree_packed = pack_baseline(tmp / "git-baseline")
    stored = size_of(cps.store.path / "objects")
    report(
        "store after 500 checkpoints, packed",
        stored / 1e6,
        "one packed tree + changed versions, zlib",
        (tree_packed + versions) / 1e6,
        "MB",
        "target <= 1.1x",
    )
    alone = f"one packed copy of the tree alone: {tree_packed / 1e6:.1f} MB"
    print(f"    ({alone}; the 500 versions zlib'd: {versions / 1e6:.1f} MB)")

    # a rewind of 1,000 changed files; each side after a sync, as the agent's writes would be by
    # then (freeing a file's blocks on disk is most of a write's cost on a `discard` mount)
    before = await cps.take(TOOL)
    chosen = files[:: len(files) // 1000][:1000]
    originals = {p: p.read_bytes() for p in chosen}
    for p in chosen:
        p.write_bytes(originals[p] + b"changed\n")
    after = await cps.take(TOOL)
    assert before is not None and after is not None and after.files_changed == len(chosen)
    changes = cps.changes(after.commit, before.commit)
    os.sync()
    start = time.perf_counter()
    cps.restore(after.commit, before.commit, changes)
    rewind_s = time.perf_counter() - start
    assert all(p.read_bytes() == originals[p] for p in chosen)
    for p in chosen:
        p.write_bytes(originals[p] + b"changed\n")
    os.sync()
    plain_s = write_plain(originals)
    report(
        "rewind of 1,000 changed files",
        rewind_s,
        "writing those files with plain Python",
        plain_s,
        "s",
        "target <= 2 s",
    )
    cps.close()


if __name__ == "__main__":
    main()
