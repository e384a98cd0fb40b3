"""The sandbox's cost: bash `true` sandboxed against unsandboxed and against `bash -c true`.

    .venv/bin/python -m tools.benchmarks.sandbox      # or: .venv/bin/python tools/bench.py sandbox

Same process run, alternating blocks so drift hits every side. The per-call round trip is
measured on warm shells through `Toolbox.invoke` (target: sandboxed within 1.2x of
unsandboxed); the start-up (the first call: bwrap, the tmux server and the agent's shell) is
reported separately, as the median of a few fresh sessions of each kind.
"""

from __future__ import annotations

import statistics
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tools.benchmarks import in_clean_home  # noqa: E402
from tools.benchmarks.shell import _baseline, _line, _ms, _tool  # noqa: E402
from workbench.config.settings import Settings  # noqa: E402
from workbench.terminal.host import TerminalHost  # noqa: E402
from workbench.tools.registry import Toolbox, ToolContext  # noqa: E402

ROUNDS = 300
BLOCKS = 6
STARTS = 5


def _context(home: Path, sandbox: str) -> ToolContext:
    workspace = home / "ws"
    workspace.mkdir(exist_ok=True)
    settings = Settings(workspace=workspace, data_dir=home / "data", sandbox=sandbox)
    host = TerminalHost(f"wbbench-{uuid.uuid4().hex[:8]}")
    return ToolContext(workspace=workspace, settings=settings, session_dir=home / "session", terminal=host)


async def _first_call(home: Path, sandbox: str) -> float:
    ctx = _context(home, sandbox)
    try:
        start = time.perf_counter()
        await _tool(Toolbox(["bash"]), ctx, "true", 1)
        return (time.perf_counter() - start) * 1000
    finally:
        await ctx.terminal.close()


async def _run(home: Path) -> dict[str, float]:
    toolbox = Toolbox(["bash"])
    boxed, plain = _context(home, "workspace-write"), _context(home, "off")
    figures: dict[str, float] = {}
    try:
        for ctx in (boxed, plain):
            await _tool(toolbox, ctx, "true", 20)  # start and warm
        assert boxed.terminal.sandbox.active and not plain.terminal.sandbox.active
        samples: dict[str, list[float]] = {"boxed": [], "plain": [], "bash -c": []}
        for _ in range(BLOCKS):
            samples["boxed"] += await _tool(toolbox, boxed, "true", ROUNDS // BLOCKS)
            samples["plain"] += await _tool(toolbox, plain, "true", ROUNDS // BLOCKS)
            samples["bash -c"] += _baseline("true", ROUNDS // BLOCKS)
        _line("bash 'true' sandboxed", _ms(samples["boxed"]), "bash 'true' unsandboxed", _ms(samples["plain"]))
        _line("bash 'true' sandboxed", _ms(samples["boxed"]), "bash -c 'true'", _ms(samples["bash -c"]))
        _line("bash 'true' unsandboxed", _ms(samples["plain"]), "bash -c 'true'", _ms(samples["bash -c"]))
        figures = {name: _ms(values)[0] for name, values in samples.items()}
    finally:
        await boxed.terminal.close()
        await plain.terminal.close()
    starts: dict[str, list[float]] = {"workspace-write": [], "off": []}
    for _ in range(STARTS):
        for mode in starts:
            starts[mode].append(await _first_call(home, mode))
    boxed_start, plain_start = (statistics.median(starts[m]) for m in ("workspace-write", "off"))
    print(
        f"  start-up (bwrap + tmux server + shell)     median {boxed_start:7.1f} ms   vs unsandboxed "
        f"median {plain_start:7.1f} ms   ratio {boxed_start / plain_start:5.2f}x   ({STARTS} sessions each)"
    )
    figures["start sandboxed"], figures["start unsandboxed"] = boxed_start, plain_start
    return figures


def main() -> dict[str, float]:
    """Print the sandbox's per-call and start-up cost as ratios against same-run baselines."""
    print("sandbox: bash tool round trip sandboxed vs unsandboxed vs subprocess.run(['bash', '-c', 'true'])")
    return in_clean_home("wbbench-sandbox-", _run)


if __name__ == "__main__":
    main()
