"""The guard's cost per tool call with modes and rules only (no model judge), against the loop's
own overhead per tool call measured in the same run.

    .venv/bin/python -m tools.benchmarks.guard      # or: .venv/bin/python tools/bench.py guard

A mix of calls a session makes (reads, writes, edits, bash command lines of a few commands,
tmux, web_fetch), each bash command line different so no parse is reused, judged in `ask`
and `auto` mode with a few of the person's allow / review / block rules. Target: < 0.2 ms.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from workbench.config.settings import Settings  # noqa: E402
from workbench.pb import workbench_pb2 as pb  # noqa: E402

CALLS_PER_MODE = 20_000
RULES = {
    "guard_allow": ["bash:git status*", "bash:git diff*", "bash:pytest *", "web_fetch:https://docs.python.org/*"],
    "guard_review": ["read_file:*.env", "bash:make deploy*"],
    "guard_block": ["bash:npm publish*", "web_fetch:*://169.254.169.254/*"],
}


def _calls(n: int) -> list[pb.ToolCall]:
    shapes = [
        ("read_file", lambda i: {"path": f"src/module_{i}.py"}),
        ("edit_file", lambda i: {"path": f"src/module_{i}.py", "old_text": "a = 1", "new_text": "a = 2"}),
        ("bash", lambda i: {"command": f"cd src && pytest -q tests/test_{i}.py -k 'login and not slow' | tail"}),
        ("write_file", lambda i: {"path": f"notes/{i}.md", "content": "# notes\n" * 20}),
        ("bash", lambda i: {"command": f"git status --short && git diff --stat HEAD~{i}"}),
        ("grep", lambda i: {"pattern": f"def handler_{i}", "path": "src"}),
        ("tmux", lambda i: {"action": "new", "window": f"w{i}", "command": f"npm run dev -- --port {3000 + i}"}),
        ("web_fetch", lambda i: {"url": f"https://docs.python.org/3/library/{i}.html"}),
    ]
    calls = []
    for i in range(n):
        name, args = shapes[i % len(shapes)]
        calls.append(pb.ToolCall(id=f"c{i}", name=name, arguments=json.dumps(args(i))))
    return calls


def guard_cost(mode: str, workspace: Path) -> tuple[float, float, float]:
    """Median ms of one Guard.check over the mix of calls; the mean; the median of bash calls alone."""
    from workbench.guard.guardrail import Guard

    guard = Guard(Settings(workspace=workspace, sandbox="workspace-write", **RULES), mode=mode)  # type: ignore[arg-type]
    for call in _calls(200):  # warm-up (imports, compiled patterns)
        guard.check(call)
    samples, bash = [], []
    for call in _calls(CALLS_PER_MODE):
        start = time.perf_counter()
        guard.check(call)
        took = (time.perf_counter() - start) * 1000
        samples.append(took)
        if call.name == "bash":
            bash.append(took)
    return statistics.median(samples), statistics.fmean(samples), statistics.median(bash)


def main() -> None:
    from tools.bench import line, loop_overhead

    via_loop, direct = loop_overhead()
    overhead = via_loop - direct
    with tempfile.TemporaryDirectory() as tmp:
        costs = {mode: guard_cost(mode, Path(tmp)) for mode in ("ask", "auto")}
    print("guard: cost per tool call, modes and rules only (8 kinds of call; 4 allow, 2 review, 2 block rules)")
    for mode, (median, mean, bash) in costs.items():
        line(f"guard check, {mode} mode (median)", median, "loop overhead per tool call", overhead)
        line(f"guard check, {mode} mode (mean)", mean, "loop overhead per tool call", overhead)
        line(f"guard check, {mode} mode, bash lines (median)", bash, "loop overhead per tool call", overhead)
    worst = max(max(c) for c in costs.values())
    print(f"  worst figure: {worst:.4f} ms (target < 0.2 ms)")


if __name__ == "__main__":
    main()
