"""A new agent's shell with its own cgroup (the window gated until it is in `agent-ID/`) against
the same start without cgroups, and how long `kill_agents` takes to end an agent's processes.

    .venv/bin/python tools/bench.py agent_cgroups

Two TerminalHosts in one run (one with the session cgroup, one without), new agents' shells
started in alternating blocks so the machine's drift hits both sides.
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
from workbench.config.settings import Settings  # noqa: E402
from workbench.terminal.host import TerminalHost  # noqa: E402

BLOCKS, PER_BLOCK = 5, 6


async def _starts(host: TerminalHost, cwd: str, tag: str, n: int) -> list[float]:
    samples = []
    for _ in range(n):
        agent = f"{tag}{uuid.uuid4().hex[:6]}"
        start = time.perf_counter()
        await host.shell(agent, cwd)
        samples.append((time.perf_counter() - start) * 1000)
        await host.stop_agent(agent)
    return samples


async def _run(home: Path) -> dict[str, float]:
    workspace = home / "ws"
    workspace.mkdir()
    settings = Settings(workspace=workspace, data_dir=home / "data")
    gated = TerminalHost(f"wbbench-cg-{uuid.uuid4().hex[:8]}", use_cgroup=True)
    plain = TerminalHost(f"wbbench-nocg-{uuid.uuid4().hex[:8]}", use_cgroup=False)
    for host in (gated, plain):
        host.sandbox.configure(settings, workspace)
    figures: dict[str, float] = {}
    try:
        for host in (gated, plain):
            await host.ensure_started()
        if not gated.record.cgroup:
            print("  no cgroup v2 that this user may make here: nothing to compare")
            return figures
        ours: list[float] = []
        base: list[float] = []
        for _ in range(BLOCKS):
            ours += await _starts(gated, str(workspace), "g", PER_BLOCK)
            base += await _starts(plain, str(workspace), "p", PER_BLOCK)
        mine, other = statistics.median(ours), statistics.median(base)
        print(
            f"  new agent shell, own cgroup (gated)   {mine:7.1f} ms  vs without cgroups {other:7.1f} ms  "
            f"ratio {mine / other:5.2f}x"
        )
        await gated.shell("victim", str(workspace))
        start = time.perf_counter()
        await gated.kill_agents(["victim"])
        killed = (time.perf_counter() - start) * 1000
        print(f"  kill_agents of one agent (cgroup.kill, rmdir)  {killed:7.1f} ms")
        figures.update({"shell gated": mine, "shell plain": other, "kill_agents": killed})
    finally:
        await gated.close()
        await plain.close()
    return figures


def main() -> dict[str, float]:
    print("agent_cgroups: a new agent's shell in its own cgroup vs without, same run")
    return in_clean_home("wbbench-cgroups-", _run)


if __name__ == "__main__":
    main()
